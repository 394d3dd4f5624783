package handling

import (
	"math"
	"testing"
)

// With eviction certain, ChooseCached chooses as Choose (InferCept's
// choice), and without swap it is Choose; with no risk, discard costs
// nothing and wins over a preserve that holds memory; in between, discard
// and swap are priced by the risk, a discard at the cheaper of recomputing
// and the engine's rescue by a swap when swap is allowed.
func TestChooseCached(t *testing.T) {
	s := Situation{Context: 2000, OtherRunning: 20000, RunningTokens: 40, ToolRemaining: 5}
	for _, tc := range []struct {
		p       float64
		allowed []Kind
	}{{1, nil}, {math.NaN(), nil}, {2, nil}, {-1, nil}, {1, []Kind{Preserve, Discard}}} {
		k0, w0 := Choose(s, gptj, tc.allowed...)
		k1, w1 := ChooseCached(s, gptj, tc.p, tc.allowed...)
		if tc.allowed == nil {
			w0[Discard] = min(w0[Discard], w0[Swap]) // rescued by a swap
		}
		if k0 != k1 || w0 != w1 {
			t.Errorf("p=%v: ChooseCached %v %v, Choose %v %v", tc.p, k1, w1, k0, w0)
		}
	}
	if k, w := ChooseCached(s, gptj, 0, Preserve, Discard); k != Discard || w[Discard] != 0 {
		t.Errorf("no eviction risk: %v %v, want discard at no cost", k, w)
	}
	_, w := Choose(s, gptj)
	_, wh := ChooseCached(s, gptj, 0.5)
	if !near(wh[Discard], 0.5*min(w[Discard], w[Swap])) || !near(wh[Swap], 0.75*w[Swap]) || wh[Preserve] != w[Preserve] {
		t.Errorf("p=0.5: wastes %v from %v", wh, w)
	}
	_, wn := ChooseCached(s, gptj, 0.5, Preserve, Discard)
	if !near(wn[Discard], 0.5*w[Discard]) {
		t.Errorf("p=0.5 without swap: discard %v, want half of recomputing's %v", wn[Discard], w[Discard])
	}
	// A context whose swap costs less than its recompute, at risk 0.5: a
	// discard (rescued by a swap if evicted) costs less than a swap now.
	big := Situation{Context: 30000, OtherRunning: 20000, RunningTokens: 40, ToolRemaining: 30}
	_, wb := Choose(big, gptj)
	if !(wb[Swap] < wb[Discard]) {
		t.Fatalf("test premise: swap %v not below recompute %v", wb[Swap], wb[Discard])
	}
	if k, _ := ChooseCached(big, gptj, 0.5); k != Discard && k != Preserve {
		t.Errorf("30k-token context at risk 0.5 with room on the host: %v, want a discard (a swap deferred) or preserve", k)
	}
}

func TestEvictionHorizon(t *testing.T) {
	// 3,840 free tokens at 384 tokens per iteration of IterTime(384).
	want := 10 * gptj.IterTime(384)
	if got := gptj.EvictionHorizon(3840); !near(got, want) {
		t.Errorf("horizon %v, want %v", got, want)
	}
	if got := gptj.EvictionHorizon(-5); got != 0 {
		t.Errorf("negative free tokens: %v, want 0", got)
	}
	if got := (CostModel{IterBase: 0.01}).EvictionHorizon(100); !math.IsInf(got, 1) {
		t.Errorf("no token budget: %v, want +Inf", got)
	}
}

func TestToolTimeOutlasts(t *testing.T) {
	// Lognormal through median 1 s and p90 4 s: P(T > 1) = 0.5, P(T > 4) = 0.1.
	ln := ToolTime{Mean: 2, P50: 1, P90: 4}
	for _, c := range []struct{ h, want float64 }{{1, 0.5}, {4, 0.1}, {0, 1}, {math.Inf(1), 0}} {
		if got := ln.Outlasts(c.h); math.Abs(got-c.want) > 1e-9 {
			t.Errorf("lognormal Outlasts(%v) = %v, want %v", c.h, got, c.want)
		}
	}
	// Having run 1 s, outlasting 3 s more is P(T > 4 | T > 1) = 0.2.
	ln.Elapsed = 1
	if got := ln.Outlasts(3); math.Abs(got-0.2) > 1e-9 {
		t.Errorf("conditional Outlasts = %v, want 0.2", got)
	}
	// Without quantiles: exponential with the point estimate as mean.
	ex := ToolTime{Mean: 2}
	if got, want := ex.Outlasts(2), math.Exp(-1); math.Abs(got-want) > 1e-12 {
		t.Errorf("exponential Outlasts(2) = %v, want %v", got, want)
	}
	// Far past what the distribution allows: nothing is known, so certain.
	if got := (ToolTime{Mean: 0.001, Elapsed: 100}).Outlasts(1); got != 1 {
		t.Errorf("late tool: %v, want 1", got)
	}
	if got := (ToolTime{}).Outlasts(1); got != 1 {
		t.Errorf("no estimate, elapsed 0: %v, want 1", got)
	}
}

// Held tokens are not prefilled again: the segment's memory-over-time drops
// by exactly the prefill staircase below them.
func TestMemoryOverTimeHeld(t *testing.T) {
	seg := Segment{Prompt: 100, PreDecode: 10}
	held := seg
	held.Held = 60
	full, _ := gptj.staircase(100, 0, 0)
	rest, _ := gptj.staircase(40, 60, 0)
	d := MemoryOverTime(seg, Preserve, gptj, 0) - MemoryOverTime(held, Preserve, gptj, 0)
	if !near(d, full-rest) {
		t.Errorf("held 60 of 100 saves %v, want %v", d, full-rest)
	}
	all := seg
	all.Held = 500 // more than the prompt: the last token is still computed
	last, _ := gptj.staircase(1, 99, 0)
	if d := MemoryOverTime(seg, Preserve, gptj, 0) - MemoryOverTime(all, Preserve, gptj, 0); !near(d, full-last) {
		t.Errorf("held all saves %v, want %v", d, full-last)
	}
}
