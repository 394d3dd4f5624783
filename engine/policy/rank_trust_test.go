package policy

import (
	"math"
	"slices"
	"testing"
)

// TestRankTrustWeight: the weight is 1 (the key unchanged) until a call
// finishes and while the tail is within T; calls past T lower it to the
// floor, where a 13x spread of keys shrinks to 13^(1/16); the order among
// keys stands for any weight.
func TestRankTrustWeight(t *testing.T) {
	var r rankTrust
	if r.weight() != 1 || r.trusted(13) != 13 {
		t.Fatalf("before any call: weight %g, key 13 → %g; want 1 and 13", r.weight(), r.trusted(13))
	}
	r.c.capped = true
	for range 1000 {
		r.c.observe(0.5, 1) // within T: the weight stays 1
	}
	if r.weight() != 1 {
		t.Fatalf("tail within T: weight %g, want 1", r.weight())
	}
	for range 1000 {
		r.c.observe(2, 1) // every call past T
	}
	if r.weight() != laneThetaMin {
		t.Fatalf("every call past T: weight %g, want the floor %g", r.weight(), laneThetaMin)
	}
	if got, want := r.trusted(13)/r.trusted(1), math.Pow(13, laneThetaMin); math.Abs(got-want) > 1e-12 {
		t.Fatalf("spread at the floor %g, want %g", got, want)
	}
	if !(r.trusted(2) < r.trusted(3)) {
		t.Fatal("the weighted keys lost the keys' order")
	}
}

// TestTrustTailRule: "-trust" is the default's tail rules plus the switch,
// and the Pitstop it builds ranks as the default until its controller
// moves: then an old call with a large key passes a fresh small one it
// stays behind under the default's aging.
func TestTrustTailRule(t *testing.T) {
	def, err := newTailRules(Options{PitstopTail: "aging+warm+first-final-gated-fit", PitstopAgingPower: 2})
	if err != nil {
		t.Fatal(err)
	}
	tr, err := newTailRules(Options{PitstopTail: "aging+warm+first-final-gated-fit-trust", PitstopAgingPower: 2})
	if err != nil {
		t.Fatal(err)
	}
	if !tr.trust || def.trust {
		t.Fatalf("trust: %v with -trust, %v without; want true, false", tr.trust, def.trust)
	}
	tr.trust = false
	if tr != def {
		t.Fatalf("-trust changes other rules: %+v against %+v", tr, def)
	}

	p := NewPitstop(Options{PitstopTail: "aging+warm+first-final-gated-fit-trust"})
	cfg := testConfig()
	cfg.MaxSeqs = 1 // the running call holds the batch: the others wait
	h := newHarness(t, p, cfg)
	h.submit("running", "r", "main", 8, []seg{{decode: 300}}, nil)
	h.run(untilIteration(2))
	long := h.submit("long", "n1", "main", 8, []seg{{decode: 200}}, nil)
	h.run(untilIteration(40))
	short := h.submit("short", "n2", "main", 8, []seg{{decode: 4}}, nil)
	v := h.view(h.e.Now(), 40)
	age := (v.Now - long.Arrival()).Seconds() // T = the long call's age: it ranks as a quarter of its key
	if age <= 0 {
		t.Fatal("the long call has not waited")
	}
	p.fcfs = fcfsReference{num: age / 2, den: 1, own: p99Window{n: fcfsMinCalls, q99: age / 2}}
	keyLong, keyShort := p.score(v, long, stateOf(long)), p.score(v, short, stateOf(short))
	if keyLong < 8*keyShort {
		t.Fatalf("keys %g and %g: want the long call's far above", keyLong, keyShort)
	}
	if got, want := order(p, v, long, short), []string{"short", "long"}; !slices.Equal(got, want) {
		t.Fatalf("weight 1: order %v, want the default's %v", got, want)
	}
	p.trust.c = lateLane{capped: true, theta: laneThetaMin}
	if got, want := order(p, v, long, short), []string{"long", "short"}; !slices.Equal(got, want) {
		t.Fatalf("weight at the floor: order %v, want %v", got, want)
	}
	h.run(nil)
	if p.trust.ref.own.n != 3 {
		t.Fatalf("the controller's reference saw %d finished calls, want 3", p.trust.ref.own.n)
	}
}
