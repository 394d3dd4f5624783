package policy

import (
	"math"
	"slices"
	"testing"
	"time"
)

// TestKMServiceHand: the Kaplan–Meier masses against a hand computation.
// Events 1, 3, 3, 6; censored 2, 4. At 1: 6 at risk, S = 5/6 (mass 1/6).
// The censored 2 leaves: at 3, 4 at risk, 2 events: mass 5/6·2/4 = 5/12,
// S = 5/12. The censored 4 leaves: at 6, 1 at risk: mass 5/12, S = 0.
func TestKMServiceHand(t *testing.T) {
	var k kmService
	k.build([]float64{6, 3, 1, 3}, []float64{4, 2})
	want := []float64{1.0 / 6, 5.0 / 12, 5.0 / 12}
	if !slices.Equal(k.times, []float64{1, 3, 6}) {
		t.Fatalf("times %v", k.times)
	}
	for i, w := range want {
		if math.Abs(k.mass[i]-w) > 1e-12 {
			t.Fatalf("mass[%d] = %g, want %g", i, k.mass[i], w)
		}
	}
	if k.tail > 1e-12 {
		t.Fatalf("tail %g, want 0", k.tail)
	}
	// G(0): stop at 1: (1/6)/(1/6·1 + 5/6·1) = 1/6; at 3: (7/12)/(1/6 +
	// 5/12·3 + 5/12·3) = (7/12)/(8/3) = 7/32; at 6: 1/(1/6 + 15/12 + 30/12)
	// = 12/47. G(0) = 12/47.
	if g := k.at(0); math.Abs(g-12.0/47) > 1e-12 {
		t.Fatalf("G(0) = %g, want %g", g, 12.0/47)
	}
	// A censored observation past the last event leaves unknown mass: at 1
	// of 3 at risk, mass 1/3; the censored 5 keeps 2/3 past it.
	k.build([]float64{1}, []float64{5, 0.5})
	if k.times[0] != 1 || math.Abs(k.mass[0]-0.5) > 1e-12 || math.Abs(k.tail-0.5) > 1e-12 {
		t.Fatalf("times %v mass %v tail %g, want [1] [0.5] 0.5 (the censored 0.5 leaves before 1)", k.times, k.mass, k.tail)
	}
	// G(0) = 0.5 / (0.5·1 + 0.5·1): the unknown half adds work, not completions.
	if g := k.at(0); math.Abs(g-0.5) > 1e-12 {
		t.Fatalf("G(0) = %g, want 0.5", g)
	}
	if _, informed := k.level(1); informed {
		t.Fatal("a program at the last event is informed")
	}
}

// TestKMServiceUncensored: with no live programs the estimate is the
// completed programs' empirical distribution and its index is the
// default's (gittinsTable over the samples).
func TestKMServiceUncensored(t *testing.T) {
	var xs []float64
	for i := range 300 {
		xs = append(xs, 1+float64(i%7)*float64(i%5)+float64(i%11)/3)
	}
	m := programModel{}
	for _, x := range xs {
		m.add(x)
	}
	m.rebuild()
	var k kmService
	k.build(slices.Clone(xs), nil)
	for _, a := range []float64{0, 0.5, 1, 2.3, 5, 9.9, 20} {
		want := samplesIndex(m.sorted, m.suffix, a)
		if got := k.at(a); math.Abs(got-want) > 1e-9*want+1e-12 {
			t.Fatalf("G(%g) = %g, the uncensored index %g", a, got, want)
		}
	}
}

// TestCensoredChainOrder: under "gittins-censored" chains are ranked by
// the censored index: before any program completed, by least attained
// service (the warm-up, without its count); with a heavy tail learned, a
// started program whose index fell below a fresh one's goes behind it, and
// one past every completed program behind all of them; under
// "gittins-censored-call" the informed ones stay in the call's order. DAG
// programs keep the default's order.
func TestCensoredChainOrder(t *testing.T) {
	sec := func(x float64) time.Duration { return time.Duration(x * float64(time.Second)) }
	for _, name := range []string{"gittins-censored", "gittins-censored-call"} {
		p := NewPitstop(Options{ProgramOrder: name})
		p.a.table.shape("").anyMulti = true
		p.a.table.shape("").threaded, p.a.table.shape("").programs = 0, 4
		if got := p.orderOf(p.pops.of("")); got != byCensored {
			t.Fatalf("%s: chains order %d, want byCensored", name, got)
		}
		// Nothing completed: the queues, fresh first.
		if c0, c1 := p.censoredClass(p.pops.of(""), 0), p.censoredClass(p.pops.of(""), sec(100)); !(c0 >= 15 && c1 > c0) {
			t.Fatalf("%s warm-up: classes %g (fresh), %g (100 s), want the queues", name, c0, c1)
		}
		// Heavy tail: 90 % of 1 s, 10 % of 100 s.
		var ev []float64
		for i := range 200 {
			ev = append(ev, map[bool]float64{true: 100, false: 1}[i%10 == 0])
		}
		p.pops.of("").model.km.build(ev, []float64{50, 50, 0.5})
		fresh, started, past := p.censoredClass(p.pops.of(""), 0), p.censoredClass(p.pops.of(""), sec(2)), p.censoredClass(p.pops.of(""), sec(150))
		if fresh != 0 || past < 15 {
			t.Fatalf("%s: fresh class %g, past the last event %g", name, fresh, past)
		}
		if name == "gittins-censored" && !(started > fresh) {
			t.Fatalf("%s: started past the short ones: class %g, fresh %g: want behind", name, started, fresh)
		}
		if name == "gittins-censored-call" && started != 0 {
			t.Fatalf("%s: informed started program class %g, want 0", name, started)
		}
		// One size (index rising): never behind a fresh program.
		ev = ev[:0]
		for i := range 200 {
			ev = append(ev, 10+float64(i%3))
		}
		p.pops.of("").model.km.build(ev, nil)
		if c := p.censoredClass(p.pops.of(""), sec(9)); c != 0 {
			t.Fatalf("%s one size: started class %g, want 0", name, c)
		}
		p.a.table.shape("").threaded = 3
		if got := p.orderOf(p.pops.of("")); got != byArrival {
			t.Fatalf("%s: DAGs order %d, want byArrival (the prior)", name, got)
		}
	}
}

// TestCensoredMedian: "gittins-censored-median" keeps the chains in the
// queues while half the estimated mass lies past the last completed
// program, however many completed, and in the call's order once the
// median is known.
func TestCensoredMedian(t *testing.T) {
	p := NewPitstop(Options{ProgramOrder: "gittins-censored-median"})
	long := 100 * time.Second
	if p.censoredClass(p.pops.of(""), long) == 0 {
		t.Fatal("nothing completed: want the queues")
	}
	// 20 short programs completed, 30 live ones have run longer: the
	// survival past the last event is 30/50.
	var ev, live []float64
	for range 20 {
		ev = append(ev, 1)
	}
	for range 30 {
		live = append(live, 5)
	}
	p.pops.of("").model.km.build(ev, live)
	if math.Abs(p.pops.of("").model.km.tail-0.6) > 1e-12 || p.censoredClass(p.pops.of(""), long) == 0 {
		t.Fatalf("tail %g: want 0.6 and the queues", p.pops.of("").model.km.tail)
	}
	for range 20 {
		ev = append(ev, 6)
	}
	p.pops.of("").model.km.build(ev, live[:10])
	if p.pops.of("").model.km.tail >= 0.5 || p.censoredClass(p.pops.of(""), long) != 0 {
		t.Fatalf("tail %g: want the median known and the call's order", p.pops.of("").model.km.tail)
	}
}
