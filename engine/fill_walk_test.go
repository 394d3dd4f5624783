package engine

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/pitstop-llm/pitstop/handling"
)

// holdPolicy ranks calls in a random order that changes as they run, and
// refuses waiting and swapped calls at random; with holds, a refusal holds
// back the waiting and swapped calls ranked after it for the rest of the
// iteration (RefusalHolds), as pitstop's host room does, and without, each
// is refused alone (as SOLA's). It counts Admit's calls.
type holdPolicy struct {
	testPolicy
	seed            uint64
	holds, holdBack bool
	held            int64
	asked           int
}

func (p *holdPolicy) mix(a, b uint64) uint64 {
	x := (a+1)*0x9e3779b97f4a7c15 ^ (b+7)*0xbf58476d1ce4e5b9 ^ p.seed
	x ^= x >> 31
	x *= 0x94d049bb133111eb
	return x ^ x>>29
}

func (p *holdPolicy) Priority(_ *View, s *Sequence) Priority {
	return Priority{Key: float64(p.mix(uint64(s.ID()), uint64(s.Generated())) % 1000)}
}

func (p *holdPolicy) Shape(*View) BatchLimits { return BatchLimits{RefusalHolds: p.holds} }

func (p *holdPolicy) Admit(v *View, s *Sequence, _ int) bool {
	p.asked++
	if s.State() == Running {
		return true
	}
	if p.held == v.Iteration {
		return false
	}
	if p.mix(uint64(s.ID()), uint64(v.Iteration))%3 == 0 {
		if p.holds {
			p.held = v.Iteration
		}
		return false
	}
	return true
}

func (p *holdPolicy) HoldBack(*View, *Sequence) bool { return p.holdBack }

// walkRun runs n calls of random prompts and tool-separated segments under
// p on a small device, the engine walking the whole run queue when whole;
// it returns every event as a line (kind, call, time, handling) and the
// calls' final contexts.
func walkRun(t *testing.T, rng *rand.Rand, cfg Config, p Policy, n int, whole bool) ([]string, map[SeqID][]int32) {
	t.Helper()
	var log []string
	r := &toolRunner{scr: map[SeqID]*script{}, done: map[SeqID][]int32{}, events: map[EventKind]int{},
		watch: []func(*Engine, *Event){func(_ *Engine, ev *Event) {
			id := "-"
			if ev.Seq != nil {
				id = fmt.Sprint(ev.Seq.ID())
			}
			log = append(log, fmt.Sprint(ev.Kind, " ", id, " ", ev.Time, " ", ev.Handling))
		}}}
	clock := NewVirtualClock()
	e, err := New(cfg, clock, fixedExecFast{}, p, r)
	if err != nil {
		t.Fatal(err)
	}
	e.wholeWalk = whole
	r.e = e
	for i := range n {
		prompt := make([]int32, 1+rng.IntN(30))
		for j := range prompt {
			prompt[j] = int32(i*1000 + j + 1)
		}
		decode := make([]int, 1+rng.IntN(3))
		for j := range decode {
			decode[j] = 1 + rng.IntN(12)
		}
		sc := &script{decode: decode}
		s, err := e.SubmitNow(Request{Prompt: prompt, Controller: sc})
		if err != nil {
			t.Fatal(err)
		}
		r.scr[s.ID()] = sc
	}
	if err := e.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(r.done) != n {
		t.Fatalf("%d of %d calls finished", len(r.done), n)
	}
	return log, r.done
}

// fillBatch's early end (the walk stops at the last running call once no
// waiting or swapped call may join, and stops asking Admit after a refusal
// that holds) decides nothing differently: on random queues under memory
// pressure, with and without HoldBack, refusals that hold or not, every event and every context is
// the same as with the whole walk, and Admit is asked less.
func TestFillBatchEarlyEndDecidesTheSame(t *testing.T) {
	kinds := []handling.Kind{handling.Preserve, handling.Swap, handling.Discard}
	askedWhole, askedShort := 0, 0
	for seed := range uint64(24) {
		cfg := Config{NumBlocks: 24 + int(seed%4)*8, BlockSize: 4, HostBlocks: 16, MaxBatchedTokens: 16 + int(seed%3)*8, MaxSeqs: 6}
		pol := func() *holdPolicy {
			base := testPolicy{kind: kinds[seed%3], evict: kinds[(seed/3)%3], traits: Traits{Preemptive: seed%2 == 0}}
			return &holdPolicy{testPolicy: base, seed: seed, holds: seed%8 < 6, holdBack: seed%4 < 2, held: -1}
		}
		whole, short := pol(), pol()
		wantLog, wantDone := walkRun(t, rand.New(rand.NewPCG(seed, 1)), cfg, whole, 40, true)
		gotLog, gotDone := walkRun(t, rand.New(rand.NewPCG(seed, 1)), cfg, short, 40, false)
		if i := firstDiff(wantLog, gotLog); i >= 0 {
			t.Fatalf("seed %d: event %d differs: whole walk %q, early end %q", seed, i, at(wantLog, i), at(gotLog, i))
		}
		for id, ctx := range wantDone {
			if !slices.Equal(ctx, gotDone[id]) {
				t.Fatalf("seed %d: call %d's context differs", seed, id)
			}
		}
		askedWhole += whole.asked
		askedShort += short.asked
	}
	if askedShort >= askedWhole {
		t.Fatalf("Admit asked %d times with the early end, %d with the whole walk: the early end never happened", askedShort, askedWhole)
	}
	t.Logf("Admit asked %d times (whole walk %d)", askedShort, askedWhole)
}

func firstDiff(a, b []string) int {
	for i := range max(len(a), len(b)) {
		if i >= len(a) || i >= len(b) || a[i] != b[i] {
			return i
		}
	}
	return -1
}

func at(log []string, i int) string {
	if i < len(log) {
		return log[i]
	}
	return "(none)"
}
