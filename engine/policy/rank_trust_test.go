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

// TestRankTrustOvertaken: with overtaken the controller counts a call past
// T only if arrival order's mean wait in place of its own would have
// brought it within T. Calls late by their own time leave w at 1; calls
// that waited far past the reference wait lower it as the plain rule does.
func TestRankTrustOvertaken(t *testing.T) {
	const bound, refWait = 10.0, 2.0
	ref := fcfsReference{num: refWait, den: 1, own: p99Window{n: fcfsMinCalls}}
	plain := rankTrust{c: lateLane{capped: true}, ref: ref}
	over := rankTrust{c: lateLane{capped: true}, ref: ref, overtaken: true}
	if !over.heldBack(8, bound) || over.heldBack(8.5, bound) {
		t.Fatalf("heldBack: own 8 with wait 2 is within 10, own 8.5 is not; got %v, %v", over.heldBack(8, bound), over.heldBack(8.5, bound))
	}
	for range 200 {
		plain.count(12, 0.5, bound) // late by its own time (11.5 s)
		over.count(12, 0.5, bound)
	}
	if over.weight() != 1 {
		t.Fatalf("calls late by their own time: weight %g, want 1", over.weight())
	}
	if plain.weight() >= 0.5 {
		t.Fatalf("the plain rule counts them: weight %g, want below 0.5", plain.weight())
	}
	for range 200 {
		over.count(12, 9, bound) // own 3 s: within T with the reference wait
	}
	if over.weight() != laneThetaMin {
		t.Fatalf("overtaken calls past T: weight %g, want the floor %g", over.weight(), laneThetaMin)
	}
	var unknown rankTrust
	if unknown.heldBack(0, bound) {
		t.Fatal("heldBack with no reference wait: want false (nothing counted late)")
	}
}

// TestTrustOvertakenTailRule: the value is "-trust" plus the switch, and a
// Pitstop built with it hands the switch to its controller.
func TestTrustOvertakenTailRule(t *testing.T) {
	tr, err := newTailRules(Options{PitstopTail: "aging+warm+first-final-gated-fit-trust", PitstopAgingPower: 2})
	if err != nil {
		t.Fatal(err)
	}
	ov, err := newTailRules(Options{PitstopTail: "aging+warm+first-final-gated-fit-trust-overtaken", PitstopAgingPower: 2})
	if err != nil {
		t.Fatal(err)
	}
	if !ov.overtaken || tr.overtaken {
		t.Fatalf("overtaken: %v with the value, %v with -trust; want true, false", ov.overtaken, tr.overtaken)
	}
	ov.overtaken = false
	if ov != tr {
		t.Fatalf("-overtaken changes other rules: %+v against %+v", ov, tr)
	}
	if p := NewPitstop(Options{PitstopTail: "aging+warm+first-final-gated-fit-trust-overtaken"}); !p.trust.overtaken || !p.tail.trust {
		t.Fatal("the Pitstop's controller does not count overtaken calls alone")
	}
	if p := NewPitstop(Options{PitstopTail: "aging+warm+first-final-gated-fit-trust"}); p.trust.overtaken {
		t.Fatal("-trust's controller counts overtaken calls alone")
	}
}

// TestRankTrustEvident: with evident a late share of about 1 % (what
// calls late by their own time give, T being their p99) leaves w at 1,
// where the plain controller wanders below it; a late share well past 1 %
// sinks w as the plain rule does.
func TestRankTrustEvident(t *testing.T) {
	plain := newRankTrust(0, false, false)
	ev := newRankTrust(0, false, true)
	for i := range 20000 {
		e2e := 0.5
		if (i%97 == 0 || i%89 == 0) && i%2 == 0 { // about 1.1 % of the calls late
			e2e = 2
		}
		plain.count(e2e, 0, 1)
		ev.count(e2e, 0, 1)
	}
	if ev.weight() != 1 {
		t.Fatalf("late share about 1 %%: weight %g with evident, want 1", ev.weight())
	}
	if !(plain.weight() < 1) {
		t.Fatalf("late share about 1 %%: plain weight %g, want below 1 (the test's premise)", plain.weight())
	}
	for i := range 2000 {
		ev.count(map[bool]float64{true: 2, false: 0.5}[i%10 == 0], 0, 1) // 10 % late
	}
	if ev.weight() >= 0.5 {
		t.Fatalf("late share 10 %%: weight %g with evident, want below 0.5", ev.weight())
	}
	tr, err := newTailRules(Options{PitstopTail: "aging+warm+first-final-gated-fit-trust-evident", PitstopAgingPower: 2})
	if err != nil || !tr.trust || !tr.evident || tr.overtaken {
		t.Fatalf("-trust-evident: rules %+v, err %v; want trust and evident alone", tr, err)
	}
	if p := NewPitstop(Options{PitstopTail: "aging+warm+first-final-gated-fit-trust-evident"}); !p.trust.evident {
		t.Fatal("the Pitstop's controller does not use the band")
	}
}
