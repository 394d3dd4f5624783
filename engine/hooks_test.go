package engine

import (
	"context"
	"testing"
	"time"

	"github.com/pitstop-llm/pitstop/handling"
)

// hookPolicy is FCFS by submission with a fixed handling at tool calls; each
// function field, when set, overrides one hook, and the others keep
// BasePolicy's defaults.
type hookPolicy struct {
	BasePolicy
	handle        handling.Kind
	traits        Traits
	holdBack      func(v *View, s *Sequence) bool
	pausedVictim  func(v *View, paused []*Sequence) *Sequence
	evictPaused   func(v *View, s *Sequence) handling.Kind
	preemptVictim func(v *View, s *Sequence, running []*Sequence) *Sequence
	hostRank      func(v *View, s *Sequence) float64
}

func (p *hookPolicy) Priority(*View, *Sequence) Priority    { return Priority{} }
func (p *hookPolicy) Handle(*View, *Sequence) handling.Kind { return p.handle }
func (p *hookPolicy) Traits() Traits                        { return p.traits }

func (p *hookPolicy) HoldBack(v *View, s *Sequence) bool {
	if p.holdBack != nil {
		return p.holdBack(v, s)
	}
	return p.BasePolicy.HoldBack(v, s)
}

func (p *hookPolicy) PausedVictim(v *View, paused []*Sequence) *Sequence {
	if p.pausedVictim != nil {
		return p.pausedVictim(v, paused)
	}
	return p.BasePolicy.PausedVictim(v, paused)
}

func (p *hookPolicy) EvictPaused(v *View, s *Sequence) handling.Kind {
	if p.evictPaused != nil {
		return p.evictPaused(v, s)
	}
	return p.BasePolicy.EvictPaused(v, s)
}

func (p *hookPolicy) PreemptVictim(v *View, s *Sequence, running []*Sequence) *Sequence {
	if p.preemptVictim != nil {
		return p.preemptVictim(v, s, running)
	}
	return p.BasePolicy.PreemptVictim(v, s, running)
}

func (p *hookPolicy) HostRank(v *View, s *Sequence) float64 {
	if p.hostRank != nil {
		return p.hostRank(v, s)
	}
	return p.BasePolicy.HostRank(v, s)
}

// plan is one call of a hook test: its prompt length, the tokens it
// generates before its tool call (0: none) with the tool's predicted and
// real duration, and the tokens after.
type plan struct {
	prompt, before int
	expect, tool   float64 // seconds
	after          int
	at             time.Duration // submission time
}

// planned follows a plan; each token it appends is 1.
type planned struct {
	p      plan
	n      int
	paused bool
}

func (c *planned) Next(*Sequence, int32) Action {
	c.n++
	switch {
	case !c.paused && c.p.before > 0:
		if c.n == c.p.before {
			c.paused, c.n = true, 0
			return Action{Token: 1, Kind: Pause, Tool: ToolCall{Name: "t", Expected: c.p.expect}}
		}
	case c.n >= c.p.after:
		return Action{Token: 1, Kind: Finish}
	}
	return Action{Token: 1}
}

func (c *planned) Forecast(*Sequence) Forecast { return Forecast{} }

// hookRun records what happened to each call (by its index in the plans).
type hookRun struct {
	e        *Engine
	plans    []plan
	index    map[SeqID]int
	first    map[int]time.Duration // first token
	handled  map[int][]handling.Kind
	preempts map[int]int
	done     int
	onHost   map[int]bool  // KV on the host when its tool returned
	paused   map[int][]int // EvPaused's Context, per pause
	refused  [NumSwapSites]int
	refusedB [NumSwapSites]int
	hostRun  int // most host blocks runnable calls held at an iteration's end
}

func (r *hookRun) Observe(ev *Event) {
	if ev.Seq == nil {
		if err := r.e.Check(); err != nil {
			r.e.Stop(err)
		}
		if it := ev.Iter; it != nil {
			for i := range it.RefusedSwaps {
				r.refused[i] += it.RefusedSwaps[i]
				r.refusedB[i] += it.RefusedSwapBlocks[i]
			}
			r.hostRun = max(r.hostRun, it.HostRunnable)
		}
		return
	}
	i := r.index[ev.Seq.ID()]
	switch ev.Kind {
	case EvToken:
		if ev.Seq.Generated() == 1 {
			r.first[i] = ev.Time
		}
	case EvPaused, EvHandled:
		r.handled[i] = append(r.handled[i], ev.Handling)
		if ev.Kind == EvPaused {
			r.paused[i] = append(r.paused[i], ev.Context)
			id := ev.Seq.ID()
			r.e.At(ev.Time+time.Duration(r.plans[i].tool*float64(time.Second)), func() {
				r.onHost[i] = r.e.Sequence(id).Place() == OnHost
				if err := r.e.Resume(id, []int32{2, 2, 2}); err != nil {
					r.e.Stop(err)
				}
			})
		}
	case EvPreempted:
		r.preempts[i]++
	case EvFinished:
		r.done++
	}
}

// runHooks runs the plans under p and checks that every call finished and
// nothing leaked.
func runHooks(t *testing.T, cfg Config, p Policy, plans []plan) *hookRun {
	t.Helper()
	r := &hookRun{plans: plans, index: map[SeqID]int{}, first: map[int]time.Duration{}, handled: map[int][]handling.Kind{},
		preempts: map[int]int{}, onHost: map[int]bool{}, paused: map[int][]int{}}
	e, err := New(cfg, NewVirtualClock(), &fixedExec{}, p, r)
	if err != nil {
		t.Fatal(err)
	}
	r.e = e
	for i, pl := range plans {
		e.At(pl.at, func() {
			s, err := e.SubmitNow(Request{Prompt: prompts(i+1, pl.prompt)[i], Controller: &planned{p: pl}})
			if err != nil {
				e.Stop(err)
				return
			}
			r.index[s.ID()] = i
		})
	}
	if err := e.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if r.done != len(plans) || e.Leaked() != 0 || e.Blocks().UsedBlocks() != 0 || e.Host().Used() != 0 {
		t.Fatalf("%d of %d calls finished; %d leaked, %d device blocks and %d host slots held", r.done, len(plans),
			e.Leaked(), e.Blocks().UsedBlocks(), e.Host().Used())
	}
	return r
}

// EvPaused carries the context the policy decided on, also after a discard
// has freed it (the runtime explains the decision from it).
func TestPausedEventCarriesTheDecidedContext(t *testing.T) {
	plans := []plan{{prompt: 10, before: 3, expect: 0.5, tool: 0.5, after: 2}}
	for _, k := range []handling.Kind{handling.Preserve, handling.Discard} {
		r := runHooks(t, baseConfig(), &hookPolicy{handle: k}, plans)
		// The pause comes after the prompt and the tokens generated before
		// it; the last sampled token is not yet computed.
		if got := r.paused[0]; len(got) != 1 || got[0] < 10 {
			t.Errorf("%v: EvPaused contexts %v, want one of at least the 10-token prompt", k, got)
		}
	}
}

// A waiting call that does not fit holds back the calls ranked after it
// (the default); with HoldBack false a smaller call behind it runs first.
func TestHoldBackDecidesOvertaking(t *testing.T) {
	cfg := baseConfig() // 4-token blocks, 32 tokens per iteration
	cfg.NumBlocks = 14
	plans := []plan{
		{prompt: 40, after: 3},        // A: 10 blocks, then 11
		{prompt: 30, after: 2, at: 1}, // B: 8 blocks, does not fit beside A
		{prompt: 8, after: 2, at: 1},  // C: 3 blocks, fits beside A
	}
	held := runHooks(t, cfg, &hookPolicy{handle: handling.Preserve}, plans)
	if held.first[2] < held.first[1] {
		t.Errorf("held back: C's first token at %v before B's at %v", held.first[2], held.first[1])
	}
	free := runHooks(t, cfg, &hookPolicy{handle: handling.Preserve, holdBack: func(*View, *Sequence) bool { return false }}, plans)
	if free.first[2] >= free.first[1] || free.first[2] >= held.first[2] {
		t.Errorf("not held back: C's first token at %v, B's at %v (held back: C at %v)", free.first[2], free.first[1], held.first[2])
	}
}

// Paused calls give way to a call that needs their blocks: by default the
// one with the most tool time left, swapped; the policy can pick another and
// discard it.
func TestPausedVictimAndItsHandling(t *testing.T) {
	cfg := baseConfig()
	cfg.NumBlocks = 12
	plans := []plan{
		{prompt: 14, before: 2, expect: 5, tool: 5, after: 2}, // 4 blocks, paused long
		{prompt: 14, before: 2, expect: 1, tool: 5, after: 2}, // 4 blocks, paused short
		{prompt: 14, after: 2, at: 500 * time.Millisecond},    // takes the 4 free blocks
		{prompt: 14, after: 2, at: 500 * time.Millisecond},    // needs a paused call's 4
	}
	def := runHooks(t, cfg, &hookPolicy{handle: handling.Preserve}, plans)
	if got := def.handled[0]; len(got) != 2 || got[1] != handling.Swap || len(def.handled[1]) != 1 {
		t.Errorf("default: long call handled %v, short %v; want the long one swapped", got, def.handled[1])
	}
	least := func(v *View, paused []*Sequence) *Sequence {
		var best *Sequence
		for _, p := range paused {
			if best == nil || v.ToolRemaining(p) < v.ToolRemaining(best) {
				best = p
			}
		}
		return best
	}
	own := runHooks(t, cfg, &hookPolicy{handle: handling.Preserve, pausedVictim: least,
		evictPaused: func(*View, *Sequence) handling.Kind { return handling.Discard }}, plans)
	if got := own.handled[1]; len(got) != 2 || got[1] != handling.Discard || len(own.handled[0]) != 1 {
		t.Errorf("overridden: short call handled %v, long %v; want the short one discarded", got, own.handled[0])
	}
}

// A preemptive policy's waiting call preempts a running call ranked below
// it: by default the lowest-ranked; the policy may pick another or none.
func TestPreemptVictim(t *testing.T) {
	cfg := baseConfig()
	cfg.NumBlocks = 12
	// Calls are ranked by submission, so the later-submitted running calls
	// rank lower; the waiting call ranks first by Priority.Class.
	plans := []plan{
		{prompt: 14, after: 10}, // 0: up to 6 blocks
		{prompt: 14, after: 10}, // 1: up to 6 blocks
		{prompt: 14, after: 2, at: 50 * time.Millisecond},
	}
	first := &hookPolicy{handle: handling.Preserve, traits: Traits{Preemptive: true}}
	prio := func(s *Sequence) bool { return s.PromptLen() == 14 && s.Arrival() > 0 }
	p := &rankedFirst{hookPolicy: first, first: prio}
	def := runHooks(t, cfg, p, plans)
	if def.preempts[1] == 0 || def.preempts[0] != 0 {
		t.Errorf("default: preemptions %v, want call 1 (ranked lowest) only", def.preempts)
	}
	other := &rankedFirst{hookPolicy: &hookPolicy{handle: handling.Preserve, traits: Traits{Preemptive: true},
		preemptVictim: func(_ *View, _ *Sequence, running []*Sequence) *Sequence {
			var best *Sequence
			for _, r := range running {
				if best == nil || r.RanksBefore(best) {
					best = r
				}
			}
			return best
		}}, first: prio}
	got := runHooks(t, cfg, other, plans)
	if got.preempts[0] == 0 {
		t.Errorf("overridden: preemptions %v, want call 0 (ranked highest of the candidates)", got.preempts)
	}
	none := &rankedFirst{hookPolicy: &hookPolicy{handle: handling.Preserve, traits: Traits{Preemptive: true},
		preemptVictim: func(*View, *Sequence, []*Sequence) *Sequence { return nil }}, first: prio}
	if got := runHooks(t, cfg, none, plans); len(got.preempts) != 0 {
		t.Errorf("no victim: preemptions %v", got.preempts)
	}
}

// rankedFirst ranks the calls first matches ahead of all others.
type rankedFirst struct {
	*hookPolicy
	first func(*Sequence) bool
}

func (p *rankedFirst) Priority(_ *View, s *Sequence) Priority {
	if p.first(s) {
		return Priority{Class: -1}
	}
	return Priority{}
}

// When the host tier is full, a newcomer takes the room of parked KV the
// policy's HostRank puts after it (Belady with predicted resume times: the
// KV needed furthest in the future gives way); by default nothing gives way
// and the newcomer is discarded.
func TestHostEvictionByRank(t *testing.T) {
	cfg := baseConfig()
	cfg.HostBlocks = 5 // one paused call's KV (4-5 blocks)
	plans := []plan{
		{prompt: 14, before: 3, expect: 8, tool: 8, after: 2},                             // parked, resumes late
		{prompt: 14, before: 3, expect: 1, tool: 1, after: 2, at: 200 * time.Millisecond}, // resumes soon
	}
	swap := func() *hookPolicy { return &hookPolicy{handle: handling.Swap} }
	def := runHooks(t, cfg, swap(), plans)
	if !def.onHost[0] || def.onHost[1] {
		t.Errorf("default: on the host when the tool returned: %v; want the first call's KV only", def.onHost)
	}
	belady := swap()
	belady.hostRank = func(v *View, s *Sequence) float64 { return v.ResumesIn(s) }
	got := runHooks(t, cfg, belady, plans)
	if got.onHost[0] || !got.onHost[1] {
		t.Errorf("by resume time: on the host when the tool returned: %v; want the second call's KV only", got.onHost)
	}
	if h := got.handled[0]; len(h) != 2 || h[1] != handling.Discard {
		t.Errorf("by resume time: the parked call was handled %v, want swap then discard", h)
	}
	// A newcomer that resumes later than everything parked is discarded.
	late := []plan{plans[0], {prompt: 14, before: 3, expect: 20, tool: 20, after: 2, at: 200 * time.Millisecond}}
	got = runHooks(t, cfg, belady, late)
	if !got.onHost[0] || got.onHost[1] {
		t.Errorf("late newcomer: on the host when the tool returned: %v; want the first call's KV only", got.onHost)
	}
}
