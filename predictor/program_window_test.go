package predictor

import "testing"

// The densest window's centre holds the most lengths, every one within ±5;
// of equally dense windows the one nearest the median wins.
func TestDensestCentre(t *testing.T) {
	for _, c := range []struct {
		xs   []int
		want int
	}{
		{[]int{40}, 40},
		{[]int{10, 20, 120}, 15},         // 10 and 20 in one window
		{[]int{10, 30, 31, 33, 200}, 31}, // 30..33
		{[]int{10, 50, 90}, 50},          // one each: the median's
	} {
		if got := densestCentre(c.xs); got != c.want {
			t.Errorf("densestCentre(%v) = %d, want %d", c.xs, got, c.want)
		}
	}
}

// A program's window is per kind and last tool: a retry reads the
// program's retries, a continuation after search the continuations after
// search, and a class with no length backs off to the kind, then the
// program. The window is offered only where it buys enough hits for its
// error over the program's own lengths.
func TestProgramCandidateReadsTheSegmentsClass(t *testing.T) {
	var b ProgramBlend
	for _, s := range []struct {
		retry bool
		tool  string
		out   int
	}{{false, "", 20}, {false, "search", 22}, {true, "search", 130}, {false, "search", 22}, {true, "search", 131}} {
		b = b.Next(Input{Retry: s.retry, LastTool: s.tool}).Observe(50, s.out, "search")
	}
	if got := b.Next(Input{Retry: true, LastTool: "search"}).programCandidate(80); got != 130 {
		t.Errorf("a retry's candidate %d, want 130 (the retries' window)", got)
	}
	if got := b.Next(Input{LastTool: "search"}).programCandidate(80); got != 22 {
		t.Errorf("a continuation after search: %d, want 22", got)
	}
	if got := b.Next(Input{LastTool: "lookup"}).programCandidate(80); got != 21 {
		t.Errorf("a continuation after a new tool: %d, want 21 (the continuations' window: 20, 22, 22)", got)
	}
	if got := (ProgramBlend{}).Next(Input{}).programCandidate(80); got != 80 {
		t.Errorf("before the program's first segment: %d, want the median", got)
	}
	// Lengths spread so that no window holds two: moving to one buys one
	// hit for much error, and the median stays.
	var s ProgramBlend
	for _, out := range []int{10, 100, 200, 300, 400} {
		s = s.Next(Input{}).Observe(50, out, "")
	}
	if got := s.Next(Input{}).programCandidate(200); got != 200 {
		t.Errorf("spread lengths: %d, want the median 200", got)
	}
}

// Where both trades have paid, the one that has realized more is served;
// neither, the mixture's point.
func TestServedTradeChoosesTheTradeThatPaidMore(t *testing.T) {
	p := ServedPoint{Mixed: 60, Median: 50, Candidate: 40, ProgramCandidate: 30}
	paid := func(hits float64) *HitTrade { return &HitTrade{hits: hits, moves: hitTradeMinSegments} }
	for _, c := range []struct {
		trade, program *HitTrade
		want           int
	}{
		{&HitTrade{}, &HitTrade{}, 60},
		{paid(5), &HitTrade{}, 40},
		{&HitTrade{}, paid(5), 30},
		{paid(5), paid(7), 30},
		{paid(7), paid(5), 40},
	} {
		if got := servedTrade(c.trade, c.program, p); got != c.want {
			t.Errorf("trades %+v, %+v: served %d, want %d", *c.trade, *c.program, got, c.want)
		}
	}
}
