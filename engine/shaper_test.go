package engine

import (
	"fmt"
	"slices"
	"testing"

	"github.com/pitstop-llm/pitstop/handling"
)

// shapePolicy is testPolicy with a Shaper: a token cap and an admission
// rule; it records each iteration's batched tokens and the rule's errors.
type shapePolicy struct {
	testPolicy
	tokens  int
	admit   func(v *View, s *Sequence, budget int) bool
	shaped  int
	batches []int
	errs    []string
}

func (p *shapePolicy) Shape(*View) BatchLimits {
	p.shaped++
	return BatchLimits{Tokens: p.tokens}
}

func (p *shapePolicy) Admit(v *View, s *Sequence, budget int) bool {
	if p.admit == nil {
		return true
	}
	return p.admit(v, s, budget)
}

func (p *shapePolicy) Observe(e *Event) {
	if e.Kind == EvIteration {
		p.batches = append(p.batches, e.Iter.PrefillTokens+e.Iter.DecodeTokens)
	}
}

func (p *shapePolicy) fail(format string, args ...any) {
	if len(p.errs) < 5 {
		p.errs = append(p.errs, fmt.Sprintf(format, args...))
	}
}

// A Shaper that caps the tokens gets every batch within the cap, and the
// calls still finish with the same contexts (runEngine checks the block
// manager after every iteration and for leaks at the end).
func TestShaperCapsTokens(t *testing.T) {
	ps := prompts(4, 21)
	want := runEngine(t, baseConfig(), testPolicy{kind: handling.Swap}, ps, []int{5, 4})
	p := &shapePolicy{testPolicy: testPolicy{kind: handling.Swap}, tokens: 12}
	got := runEngine(t, baseConfig(), p, ps, []int{5, 4})
	if len(got.done) != 4 {
		t.Fatalf("%d of 4 calls finished", len(got.done))
	}
	for i, n := range p.batches {
		if n > 12 {
			t.Fatalf("iteration %d batched %d tokens, cap 12", i+1, n)
		}
	}
	if slices.Max(p.batches) != 12 {
		t.Fatalf("no batch reached the cap: %v", p.batches)
	}
	if p.shaped != got.exec.steps || got.exec.steps <= want.exec.steps {
		t.Fatalf("shaped %d times in %d iterations (unshaped: %d iterations)", p.shaped, got.exec.steps, want.exec.steps)
	}
	for id := range want.done {
		if !slices.Equal(want.done[id], got.done[id]) {
			t.Fatalf("call %d's context differs under the cap", id)
		}
	}
}

// A Shaper that admits everything and caps nothing changes nothing.
func TestShaperNeutralIsIdentical(t *testing.T) {
	cfg := baseConfig()
	cfg.NumBlocks = 14 // memory pressure: preemptions and evictions of paused calls
	for _, k := range []handling.Kind{handling.Preserve, handling.Swap, handling.Discard} {
		base := testPolicy{kind: k, evict: handling.Swap, traits: Traits{PrefixCache: true}}
		want := runEngine(t, cfg, base, prompts(5, 13), []int{8, 8})
		got := runEngine(t, cfg, &shapePolicy{testPolicy: base}, prompts(5, 13), []int{8, 8})
		if want.end != got.end || want.exec.steps != got.exec.steps || want.exec.swapOut != got.exec.swapOut ||
			want.exec.swapIn != got.exec.swapIn || want.events[EvPreempted] != got.events[EvPreempted] {
			t.Fatalf("%v: a neutral Shaper changed the run: end %v vs %v, %d vs %d iterations, swaps %d/%d vs %d/%d, preemptions %d vs %d",
				k, got.end, want.end, got.exec.steps, want.exec.steps, got.exec.swapOut, got.exec.swapIn,
				want.exec.swapOut, want.exec.swapIn, got.events[EvPreempted], want.events[EvPreempted])
		}
	}
}

// A refused waiting call stays waiting and holds nothing, not even the
// prefix-cache hits it would take; lower-ranked calls are admitted past it.
func TestShaperRefusedWaitingCallHoldsNothing(t *testing.T) {
	prompt := prompts(1, 40)[0]
	ps := [][]int32{prompt, slices.Clone(prompt), prompts(1, 9)[0]} // the second shares the first's prefix
	p := &shapePolicy{testPolicy: testPolicy{kind: handling.Discard, traits: Traits{PrefixCache: true}}}
	refusals, passed := 0, false
	p.admit = func(v *View, s *Sequence, _ int) bool {
		switch s.ID() {
		case 2:
			if v.Iteration > 12 {
				return true
			}
			refusals++
			if s.State() != Waiting || s.ResidentBlocks() != 0 || s.Computed() != 0 || len(s.HostSlots()) != 0 {
				p.fail("iteration %d: refused call is %v with %d blocks, %d computed", v.Iteration, s.State(), s.ResidentBlocks(), s.Computed())
			}
			return false
		case 3:
			passed = true
		}
		return true
	}
	res := runEngine(t, baseConfig(), p, ps, []int{60}) // the others run while the second is refused
	if len(p.errs) > 0 {
		t.Fatal(p.errs)
	}
	if len(res.done) != 3 || refusals == 0 || !passed {
		t.Fatalf("%d of 3 finished, %d refusals, lower-ranked call admitted: %v", len(res.done), refusals, passed)
	}
}

// A refused running call keeps its KV on the device; a refused swapped call
// stays on the host.
func TestShaperRefusedCallsKeepTheirKV(t *testing.T) {
	p := &shapePolicy{testPolicy: testPolicy{kind: handling.Swap}}
	var sawRunning, sawSwapped bool
	p.admit = func(v *View, s *Sequence, _ int) bool {
		if v.Iteration%3 != 0 || s.ID() != 1 {
			return true
		}
		switch s.State() {
		case Running:
			sawRunning = true
			if s.ResidentBlocks() == 0 || s.Place() != OnDevice {
				p.fail("refused running call has %d blocks on %v", s.ResidentBlocks(), s.Place())
			}
		case Swapped:
			sawSwapped = true
			if s.Place() != OnHost || len(s.HostSlots()) == 0 {
				p.fail("refused swapped call is on %v with %d host slots", s.Place(), len(s.HostSlots()))
			}
		}
		return false
	}
	res := runEngine(t, baseConfig(), p, prompts(3, 13), []int{6, 6})
	if len(p.errs) > 0 {
		t.Fatal(p.errs)
	}
	if len(res.done) != 3 || !sawRunning || !sawSwapped {
		t.Fatalf("%d of 3 finished; refused while running: %v, while swapped: %v", len(res.done), sawRunning, sawSwapped)
	}
}

// A Shaper that refuses everything cannot idle the device: the engine then
// runs, each iteration, the one call it would have run first alone, and
// every call finishes.
func TestShaperCannotIdleTheDevice(t *testing.T) {
	p := &shapePolicy{testPolicy: testPolicy{kind: handling.Preserve}, tokens: 4}
	p.admit = func(*View, *Sequence, int) bool { return false }
	res := runEngine(t, baseConfig(), p, prompts(3, 13), []int{4, 4})
	if len(res.done) != 3 {
		t.Fatalf("%d of 3 finished", len(res.done))
	}
	for i, n := range p.batches {
		if n > 13 {
			t.Fatalf("iteration %d batched %d tokens: more than the one call the engine runs first", i+1, n)
		}
	}
}
