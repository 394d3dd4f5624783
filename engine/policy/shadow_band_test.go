package policy

import (
	"math"
	"testing"
)

// TestShadowBand: the band's shadow is honest until fcfsMinCalls calls
// finished, stays honest while it is below arrival order's wait within its
// noise, and is early once below beyond p99Z standard errors; the option
// wires the band into the overdue check.
func TestShadowBand(t *testing.T) {
	var b shadowBand
	for range fcfsMinCalls - 1 {
		b.add(0, 100, 1) // far below
	}
	if !b.honest() {
		t.Fatal("too few calls: want honest")
	}
	// Noisy waits of mean 10 (service 1 each), the shadow's of mean 9:
	// 1 s below with a spread of 5 s is within the band over ~40 calls.
	noisy := shadowBand{}
	for i := range 200 {
		s := float64(1 - 2*(i%2)) // ±1
		noisy.add(9+5*s, 10+5*s, 1)
	}
	g, se := noisy.gap()
	if math.Abs(g+1) > 1e-9 || se <= 0 {
		t.Fatalf("gap %g ± %g: want -1 with a positive error", g, se)
	}
	if !noisy.honest() {
		t.Fatalf("1 s below within %g s of error: want honest", p99Z*se)
	}
	// The same spread 5 s below: early beyond the band.
	far := shadowBand{}
	for i := range 200 {
		s := float64(1 - 2*(i%2))
		far.add(5+5*s, 10+5*s, 1)
	}
	if far.honest() {
		g, se := far.gap()
		t.Fatalf("gap %g ± %g: want early", g, se)
	}
	// The wait's window: old calls fade, so a shadow that was far below
	// and is now level is honest again within ~100 calls.
	for range 100 {
		far.add(10, 10, 1)
	}
	if !far.honest() {
		g, se := far.gap()
		t.Fatalf("level for 100 calls, gap %g ± %g: want honest", g, se)
	}

	p := NewPitstop(Options{PitstopTail: "aging+warm+first-final-gated-fit-overdue-trust-each-evident"})
	if c := p.deadlines.overdueCheck; c == nil || c.band == nil || c.band.strict || !p.trust.each {
		t.Fatal("-evident: want the banded check and the per-call weight")
	}
	if c := NewPitstop(Options{PitstopTail: "aging+warm+first-final-gated-fit-overdue-trust-each-checked-evident"}).deadlines.overdueCheck; c == nil || c.band == nil || !c.band.strict {
		t.Fatal("-checked-evident: want the strict band")
	}
	if c := NewPitstop(Options{PitstopTail: "aging+warm+first-final-gated-fit-overdue-trust-each-checked"}).deadlines.overdueCheck; c == nil || c.band != nil {
		t.Fatal("-checked: want the plain check")
	}
	c := shadowCheck{band: &far}
	far.add(-1000, 1000, 1)
	if c.honest(0, true) {
		t.Fatal("the banded check reads its own wait, not the one given")
	}
}

// TestShadowBandStrict: the strict band reads the shadow only while its
// mean wait is above arrival order's beyond p99Z standard errors: level
// within the noise is not enough, and its window is about fcfsWindow calls
// (a shadow far below for 100 calls is still early after 100 level ones).
func TestShadowBandStrict(t *testing.T) {
	fill := func(b *shadowBand, n int, shadow, wait float64) {
		for i := range n {
			s := float64(1 - 2*(i%2))
			b.add(shadow+5*s, wait+5*s, 1)
		}
	}
	level := shadowBand{strict: true}
	fill(&level, 2000, 10, 10)
	if level.honest() {
		t.Fatal("level: want no evidence, not honest")
	}
	above := shadowBand{strict: true}
	fill(&above, 2000, 12, 10)
	if !above.honest() {
		g, se := above.gap()
		t.Fatalf("2 s above, gap %g ± %g: want honest", g, se)
	}
	long := shadowBand{strict: true}
	fill(&long, 1000, 0, 10)
	fill(&long, 100, 12, 10)
	if long.honest() {
		g, se := long.gap()
		t.Fatalf("far below for 1,000 calls then above for 100, gap %g ± %g: want early still", g, se)
	}
}
