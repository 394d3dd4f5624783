package policy

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestLateLaneController: the quantile controller lowers θ while more than
// 1% of the finished calls pass the bound and raises it while fewer do; fed
// a population whose e2e it shapes (a call is late past θ·T and then ends
// within T), it settles where about 1% pass T, and it stays in its bounds.
func TestLateLaneController(t *testing.T) {
	var l lateLane
	if !l.isLate(4.1, 1) || l.isLate(3.9, 1) {
		t.Fatalf("before any call: late past %g·T, want %g", laneThetaMax, laneThetaMax)
	}
	for range 1000 {
		l.observe(0.5, 1) // every call within T: θ stays at the ceiling
	}
	if l.theta != laneThetaMax {
		t.Fatalf("tail within T: θ = %g, want the ceiling %g", l.theta, laneThetaMax)
	}
	for range 1000 {
		l.observe(2, 1) // every call past T: θ falls to the floor
	}
	if l.theta != laneThetaMin {
		t.Fatalf("every call past T: θ = %g, want the floor %g", l.theta, laneThetaMin)
	}
	// A closed loop: the calls' e2e are exponential with mean 0.3 (T = 1),
	// and a call with e2e past θ is cut to θ (the lane served it then).
	// Calls pass T only while θ > 1, so θ settles near where P(e2e > T)
	// would be 1% with the cut: around 1, not at a bound.
	r := rand.New(rand.NewPCG(1, 2))
	l = lateLane{}
	passed, n := 0, 200000
	for i := range n {
		e := r.ExpFloat64() * 0.3
		if l.theta > 0 && e > l.theta {
			e = l.theta
		}
		if i >= n/2 && e > 1 {
			passed++
		}
		l.observe(e, 1)
	}
	if share := float64(passed) / float64(n/2); share < 0.005 || share > 0.02 {
		t.Fatalf("closed loop: %.4f of the calls passed T, want about %g", share, laneQuantile)
	}
	if l.theta <= laneThetaMin || l.theta >= laneThetaMax {
		t.Fatalf("closed loop: θ = %g at a bound", l.theta)
	}
}

// TestLateLaneRescue: with rescue the lane is empty until a call passes T
// (θ's ceiling is 1), and then holds the calls between θ·T and T alone: a
// call already past T is left to the ranked order.
func TestLateLaneRescue(t *testing.T) {
	l := lateLane{rescue: true, capped: true}
	for _, age := range []float64{0.5, 0.99, 1.5, 10} {
		if l.isLate(age, 1) {
			t.Fatalf("θ at the ceiling: a call of age %g T is in the lane", age)
		}
	}
	for range 20 {
		l.observe(2, 1)
	}
	if l.theta >= 1 || l.theta <= laneThetaMin {
		t.Fatalf("after 20 calls past T: θ = %g, want between the bounds", l.theta)
	}
	if !l.isLate((1+l.theta)/2, 1) || l.isLate(l.theta/2, 1) || l.isLate(1.01, 1) {
		t.Fatalf("θ = %g: the lane is not the calls between θ·T and T", l.theta)
	}
	for range 100000 {
		l.observe(0.5, 1)
	}
	if l.theta != 1 {
		t.Fatalf("tail within T again: θ = %g, want the ceiling 1", l.theta)
	}
}

// TestPitstopLateLane: with "lane", a waiting call older than θ·T goes ahead
// of the ranked calls in arrival order (class 1.5); younger, memory-over-time
// decides; with the default (aging alone) there is no lane.
func TestPitstopLateLane(t *testing.T) {
	p := NewPitstop(Options{PitstopTail: "lane"})
	h, long := longWaiter(t, p)
	short := h.submit("short", "n2", "main", 8, []seg{{decode: 4}}, nil)
	v := h.view(h.e.Now(), 3)
	age := (v.Now - long.Arrival()).Seconds()
	// T = age/2: the long call is 2T old, below the ceiling 4T: not late.
	p.fcfs = fcfsReference{num: age / 4, den: 1, own: p99Window{n: fcfsMinCalls, q99: age / 4}}
	if got, want := order(p, v, long, short), []string{"short", "long"}; !slices.Equal(got, want) {
		t.Fatalf("θ at the ceiling: order %v, want %v", got, want)
	}
	p.lane.theta = 1 // the controller lowered θ: now the long call is late
	if got := p.Priority(v, long); got.Class != 1.5 || math.Abs(got.Key-long.Arrival().Seconds()) > 1e-12 {
		t.Fatalf("late call ranked %+v, want class 1.5 by arrival", got)
	}
	if got, want := order(p, v, short, long), []string{"long", "short"}; !slices.Equal(got, want) {
		t.Fatalf("lane: order %v, want %v", got, want)
	}
	// Ordered by size inside the lane: class 1.4 by the ranked key, ahead of
	// the other calls, and the younger short call is not in the lane.
	z := NewPitstop(Options{PitstopTail: "lane", PitstopLaneOrder: "size"})
	z.fcfs, z.lane.theta = p.fcfs, 1
	if got := z.Priority(v, long); got.Class != 1.4 || math.Abs(got.Key-z.score(v, long, stateOf(long))) > 1e-9*got.Key {
		t.Fatalf("late call, lane by size: ranked %+v, want class 1.4 by memory-over-time", got)
	}
	if got, want := order(z, v, short, long), []string{"long", "short"}; !slices.Equal(got, want) {
		t.Fatalf("lane by size: order %v, want %v", got, want)
	}
	a := NewPitstop(Options{})
	a.fcfs, a.lane.theta = p.fcfs, 1
	if a.inLane(v, long) {
		t.Fatal("default tail rules: the call is in a lane")
	}
}

// TestPitstopControlledAging: with "aging+control" there is no lane; the
// aging's T is scaled by the controller's θ (≤ 1), so the key is the
// default's until calls pass T and then ages faster.
func TestPitstopControlledAging(t *testing.T) {
	p := NewPitstop(Options{PitstopTail: "aging+control"})
	h, long := longWaiter(t, p)
	v := h.view(h.e.Now(), 3)
	age := (v.Now - long.Arrival()).Seconds()
	p.fcfs = fcfsReference{num: age / 4, den: 1, own: p99Window{n: fcfsMinCalls, q99: age / 4}} // T = age/2
	mot := p.score(v, long, stateOf(long))
	for _, th := range []float64{1, 0.25} {
		p.lane.theta = th
		want := mot / math.Pow(1+age/(th*age/2), 2)
		if got := p.Priority(v, long); got.Class != 2 || math.Abs(got.Key-want) > 1e-9*want {
			t.Fatalf("θ = %g: ranked %+v, want class 2 key %v", th, got, want)
		}
	}
	for range 100000 {
		p.lane.observe(0.1, 1) // calls within T: θ climbs back to 1
	}
	if p.lane.theta != 1 || p.inLane(v, long) {
		t.Fatalf("controlled aging: θ = %g (want the ceiling 1), in a lane %v", p.lane.theta, p.inLane(v, long))
	}
}

// TestPitstopControlledArrival: in arrival order of programs, the controlled
// aging ranks a waiting call θ of the way from its own arrival to its
// program's first arrival: the program's at θ = 1, nearer the call's own as θ
// falls; without the control, the program's.
func TestPitstopControlledArrival(t *testing.T) {
	p := NewPitstop(Options{PitstopTail: "aging+control"})
	h := newHarness(t, p, testConfig())
	h.submit("first", "prog", "main", 8, []seg{{decode: 4}}, nil)
	h.run(untilIteration(50))
	late := h.submit("later", "prog", "main", 8, []seg{{decode: 4}}, nil)
	st := stateOf(late)
	if st.row == nil {
		p.a.queueOf(h.view(h.e.Now(), 1), late, st)
	}
	first, own := st.row.first.Seconds(), late.Arrival().Seconds()
	if own <= first {
		t.Fatalf("the later call arrived at %v s, not after its program's first call (%v s)", own, first)
	}
	for _, c := range []struct{ theta, want float64 }{{1, first}, {0.25, 0.25*first + 0.75*own}} {
		p.lane.theta = c.theta
		if got := p.programArrival(late, st); math.Abs(got-c.want) > 1e-12 {
			t.Fatalf("θ = %g: ranked at %v s, want %v", c.theta, got, c.want)
		}
	}
	g := NewPitstop(Options{})
	g.lane.theta = 0.25
	if got := g.programArrival(late, st); got != first {
		t.Fatalf("default tail rules: ranked at %v s, want the program's first arrival %v", got, first)
	}
}
