package policy

import (
	"math"
	"slices"
	"testing"
)

// b_γ for a known size is the closed form, and the distribution's formula
// with one point is the same number.
func TestBoostKnownClosedForm(t *testing.T) {
	for _, c := range []struct{ gamma, s float64 }{{1, 1}, {0.5, 3}, {2, 0.01}, {0.1, 40}} {
		want := math.Log(1/(1-math.Exp(-c.gamma*c.s))) / c.gamma
		if got := boostKnown(c.gamma, c.s); math.Abs(got-want) > 1e-9*max(1, want) {
			t.Errorf("boostKnown(%g, %g) = %g, want %g", c.gamma, c.s, got, want)
		}
		if got := boostOf(c.gamma, []sizePoint{{s: c.s, p: 3}}); math.Abs(got-want) > 1e-9*max(1, want) {
			t.Errorf("boostOf one point (%g, %g) = %g, want %g", c.gamma, c.s, got, want)
		}
	}
	if boostKnown(0, 1) != 0 || boostOf(0, []sizePoint{{1, 1}}) != 0 {
		t.Error("γ = 0 must give no boost")
	}
}

// With two sizes, b_γ = (1/γ)·log(M/(M−1)) for M the mixture's E[e^{γS}],
// which lies between the two known sizes' boosts.
func TestBoostOfDistribution(t *testing.T) {
	g := 0.7
	pts := []sizePoint{{s: 0.5, p: 0.25}, {s: 4, p: 0.75}}
	m := 0.25*math.Exp(g*0.5) + 0.75*math.Exp(g*4)
	want := math.Log(m/(m-1)) / g
	got := boostOf(g, pts)
	if math.Abs(got-want) > 1e-9 {
		t.Fatalf("boostOf = %g, want %g", got, want)
	}
	if !(got < boostKnown(g, 0.5) && got > boostKnown(g, 4)) {
		t.Errorf("mixture's boost %g not between the sizes' %g and %g", got, boostKnown(g, 4), boostKnown(g, 0.5))
	}
}

// exponentialHistogram is sizes exponential with mean 1/mu, as a histogram
// of many samples at their quantiles.
func exponentialHistogram(mu float64, n int) *sizeHistogram {
	h := &sizeHistogram{}
	for i := range n {
		u := (float64(i) + 0.5) / float64(n)
		h.add(-math.Log(1-u)/mu, 1)
	}
	return h
}

// In an M/M/1 arrival order's response time is exponential with rate
// μ − λ: the Cramér–Lundberg root. The histogram's bins cost a few percent.
func TestSolveGammaMM1(t *testing.T) {
	mu := 2.0
	h := exponentialHistogram(mu, 20000)
	for _, lambda := range []float64{0.5, 1, 1.5} {
		g, ok := solveGamma(lambda, h)
		want := mu - lambda
		if !ok || math.Abs(g-want) > 0.05*want {
			t.Errorf("λ %g: γ = %g (ok %v), want %g", lambda, g, ok, want)
		}
	}
}

// At load 1 or more arrival order's tail does not decay: no root.
func TestSolveGammaOverload(t *testing.T) {
	h := exponentialHistogram(2, 2000)
	for _, lambda := range []float64{2 / h.mean(), 3} {
		if g, ok := solveGamma(lambda, h); ok {
			t.Errorf("λ %g at load %g: γ = %g, want none", lambda, lambda*h.mean(), g)
		}
	}
	if _, ok := solveGamma(1, &sizeHistogram{}); ok {
		t.Error("an empty histogram must give no γ")
	}
}

// Of two calls, a small one that arrived later goes first while its boost
// exceeds the gap; a large one gets almost no boost, so a large call never
// passes a small one that arrived earlier.
func TestBoostOrderOfTwoCalls(t *testing.T) {
	g := 0.1 // 1/γ = 10 s
	small, large := []sizePoint{{s: 0.05, p: 1}}, []sizePoint{{s: 60, p: 1}}
	bs, bl := boostOf(g, small), boostOf(g, large)
	if !(bs > 30 && bl < 0.1) {
		t.Fatalf("boosts small %g, large %g", bs, bl)
	}
	key := func(arrival float64, pts []sizePoint) float64 { return arrival - boostOf(g, pts) }
	if !(key(20, small) < key(0, large)) {
		t.Error("a small call 20 s later should go ahead of a large one")
	}
	if key(100, small) < key(0, large) {
		t.Error("a small call 100 s (10/γ) later should not pass a large one")
	}
	if key(0, small) > key(1, large) {
		t.Error("a large call must not pass an earlier small one")
	}
}

// The window learns λ from the arrivals and drops its oldest jobs.
func TestBoostLoadWindow(t *testing.T) {
	var l boostLoad
	if l.rate() != 0 {
		t.Fatal("no rate before boostMinJobs")
	}
	for i := range boostWindow + 500 {
		s := 1.0
		if i >= 500 {
			s = 0.1 // the first 500 jobs leave the window
		}
		l.record(float64(i)/4, []sizePoint{{s: s, p: 0.5}, {s: s, p: 0.5}})
	}
	if r := l.rate(); math.Abs(r-4) > 1e-9 {
		t.Errorf("rate %g, want 4", r)
	}
	if m := l.hist.mean(); math.Abs(m-0.1) > 0.01 {
		t.Errorf("mean size %g, want 0.1 (the oldest jobs dropped)", m)
	}
	if g, ok := l.gamma(); !ok || !(g > 0) {
		t.Errorf("γ %g ok %v at load 0.4", g, ok)
	}
}

// The tail fit reads γ = ln 10 / (q99 − q90) off an exponential window.
func TestBoostTailDecay(t *testing.T) {
	var b boostRule
	if _, ok := b.tailDecay(); ok {
		t.Fatal("no γ from an empty window")
	}
	for i := range fcfsWindow {
		u := (float64(i) + 0.5) / float64(fcfsWindow)
		b.shadow.record(-math.Log(1-u) / 0.25) // exponential, rate 0.25
	}
	g, ok := b.tailDecay()
	if !ok || math.Abs(g-0.25) > 0.02 {
		t.Errorf("γ %g ok %v, want 0.25", g, ok)
	}
}

// TestPitstopBoost: with --pitstop-tail boost-wait a waiting call ranks by
// its boosted arrival time, class 2: before γ is known (no boost) in
// arrival order, so the long call that arrived first goes ahead of a short
// fresh one (the aging's memory-over-time would put the short one first);
// with γ = 1/W from a long mean wait W, the short call's boost (about
// W·log of the sizes' ratio) passes the long call's head start.
func TestPitstopBoost(t *testing.T) {
	p := NewPitstop(Options{PitstopTail: "boost-wait", ProgramOrder: "call"})
	h, long := longWaiter(t, p)
	short := h.submit("short", "n2", "main", 8, []seg{{decode: 4}}, nil)
	v := h.view(h.e.Now(), 3)
	if got, want := order(p, v, short, long), []string{"long", "short"}; !slices.Equal(got, want) {
		t.Fatalf("γ unknown: order %v, want %v (arrival order)", got, want)
	}
	if got := p.Priority(v, long); got.Class != 2 || math.Abs(got.Key-long.Arrival().Seconds()) > 1e-9 {
		t.Fatalf("γ unknown: long call ranked %+v, want class 2 key its arrival %v", got, long.Arrival().Seconds())
	}
	gap := (short.Arrival() - long.Arrival()).Seconds()
	if gap <= 0 {
		t.Fatalf("the short call must arrive later (gap %v s)", gap)
	}
	p.fcfs = fcfsReference{num: 100 * gap, den: 1, own: p99Window{n: fcfsMinCalls}} // W = 100 × the gap
	p.boost.update(&p.fcfs, 0)
	if want := 1 / (100 * gap); math.Abs(p.boost.gamma-want) > 1e-12*want {
		t.Fatalf("γ %v, want 1/W = %v", p.boost.gamma, want)
	}
	if got, want := order(p, v, long, short), []string{"short", "long"}; !slices.Equal(got, want) {
		t.Fatalf("γ = 1/W: order %v, want %v", got, want)
	}
	sp := p.Priority(v, short)
	if want := short.Arrival().Seconds() - boostOf(p.boost.gamma, stateOf(short).boostPts); sp.Class != 2 || math.Abs(sp.Key-want) > 1e-9*max(1, math.Abs(want)) {
		t.Fatalf("short call ranked %+v, want class 2 key %v", sp, want)
	}
}

// Each γ source reads its own quantity: -wait 1/W, -resp 1/(W + mean own),
// -aged power/T; the equation's sources fall back to 1/W at load ≥ 1; and a
// change of γ bumps the version that makes calls recompute their boost.
func TestBoostRuleSources(t *testing.T) {
	ref := fcfsReference{num: 4, den: 1, own: p99Window{n: fcfsMinCalls, q99: 6, times: []float64{1, 2, 3}}} // W 4, mean own 2, T 10
	for _, c := range []struct {
		name string
		rule boostRule
		want float64
	}{
		{"-wait", boostRule{byWait: true}, 1.0 / 4},
		{"-resp", boostRule{byResp: true}, 1.0 / 6},
		{"-aged", boostRule{byBound: 2}, 2.0 / 10},
		{"root, nothing learned: 1/W", boostRule{}, 1.0 / 4},
	} {
		b := c.rule
		b.update(&ref, 0)
		if math.Abs(b.gamma-c.want) > 1e-12 || b.version != 1 {
			t.Errorf("%s: γ %g version %d, want %g version 1", c.name, b.gamma, b.version, c.want)
		}
		b.update(&ref, 0)
		if b.version != 1 {
			t.Errorf("%s: the same γ bumped the version to %d", c.name, b.version)
		}
	}
}
