package policy

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/pitstop-llm/pitstop/engine"
)

// TestPitstopAging: by default a waiting call's memory-over-time is divided
// by (1 + age/T)², T arrival order's learned p99 (wait plus p99 own time):
// a long call that has waited long enough goes ahead of a short fresh one,
// without a class of its own; before the reference is known, and with the
// rule off ("guard"), memory-over-time alone decides.
func TestPitstopAging(t *testing.T) {
	p := NewPitstop(Options{})
	h, long := longWaiter(t, p)
	short := h.submit("short", "n2", "main", 8, []seg{{decode: 4}}, nil)
	v := h.view(h.e.Now(), 3)
	if got, want := order(p, v, long, short), []string{"short", "long"}; !slices.Equal(got, want) {
		t.Fatalf("reference unknown: order %v, want %v (memory-over-time)", got, want)
	}
	age := (v.Now - long.Arrival()).Seconds()
	if age <= 0 {
		t.Fatalf("long call's age %v s: the test needs it to have waited", age)
	}
	// T = 0.5% of the long call's age (wait plus p99 own time): aged by
	// (1+200)², it goes ahead of the fresh short call, in the same class.
	p.fcfs = fcfsReference{num: age / 400, den: 1, own: p99Window{n: fcfsMinCalls, q99: age / 400}}
	mot := p.score(v, long, stateOf(long))
	want := mot / math.Pow(1+age/(age/200), 2)
	if got := p.Priority(v, long); got.Class != 2 || math.Abs(got.Key-want) > 1e-9*want {
		t.Fatalf("aged call ranked %+v, want class 2 key %v (memory-over-time %v)", got, want, mot)
	}
	if got, want := order(p, v, short, long), []string{"long", "short"}; !slices.Equal(got, want) {
		t.Fatalf("aged: order %v, want %v", got, want)
	}
	guard := NewPitstop(Options{PitstopTail: "guard"})
	guard.fcfs = p.fcfs
	if got, want := order(guard, v, long, short), []string{"short", "long"}; !slices.Equal(got, want) {
		t.Fatalf("without aging: order %v, want %v", got, want)
	}
	// By the wait, power 1: the long call waited all its age (it never ran).
	w := NewPitstop(Options{PitstopAgingClock: "wait", PitstopAgingPower: 1})
	w.fcfs = p.fcfs
	wt := v.Wait(long).Seconds()
	if got, want := w.Priority(v, long).Key, w.score(v, long, stateOf(long))/(1+wt/(age/200)); wt <= 0 || math.Abs(got-want) > 1e-9*want {
		t.Fatalf("aging by the wait (%v s), power 1: key %v, want %v", wt, got, want)
	}
}

// TestPitstopTailOptions: bad tail options are one-line errors naming what
// is allowed; the defaults are aging by age, power 2.
func TestPitstopTailOptions(t *testing.T) {
	for _, o := range []Options{{PitstopTail: "agin"}, {PitstopTail: "lane+aging"}, {PitstopLaneGain: -0.1}, {PitstopLaneGain: math.Inf(1)}, {PitstopLaneOrder: "fifo"}, {PitstopAgingPower: -1}, {PitstopAgingPower: math.NaN()}, {PitstopAgingClock: "iter"}} {
		if err := o.Validate(); err == nil {
			t.Errorf("%+v: no error", o)
		}
	}
	r, err := newTailRules(Options{}.Defaults())
	if err != nil || !r.aging || r.power != 2 || r.byWait {
		t.Fatalf("defaults %+v (%v), want aging by age, power 2", r, err)
	}
	if r, _ := newTailRules(Options{PitstopTail: "guard"}.Defaults()); r.aging {
		t.Fatalf("guard: %+v, want no rule", r)
	}
}

// TestPitstopAgingRefresh: with the aging on, a full re-rank every
// 4·AgingEvery iterations (64), not more often; with the rule off (call
// order, nothing else drifting), none.
func TestPitstopAgingRefresh(t *testing.T) {
	p := NewPitstop(Options{ProgramOrder: "call"})
	g := NewPitstop(Options{ProgramOrder: "call", PitstopTail: "guard"})
	h := newHarness(t, p, testConfig())
	v := h.view(h.e.Now(), 3)
	p.Refresh(v)
	g.Refresh(v) // the first call sees a new order
	reranks := func(q *Pitstop) int {
		n := 0
		for range 640 {
			v.Iteration++
			if q.Refresh(v) {
				n++
			}
		}
		return n
	}
	if n := reranks(p); n != 10 {
		t.Fatalf("aging: %d re-ranks in 640 iterations, want 10", n)
	}
	if n := reranks(g); n != 0 {
		t.Fatalf("guard, call order: %d re-ranks, want 0", n)
	}
}

// longWaiter is the tail tests' scene: one slot, held by a long running
// call, and a 200-token call that has waited 200 iterations for it.
func longWaiter(t *testing.T, p *Pitstop) (*harness, *engine.Sequence) {
	t.Helper()
	cfg := testConfig()
	cfg.MaxSeqs = 1 // the running call holds the only slot: the others wait
	h := newHarness(t, p, cfg)
	h.submit("running", "r", "main", 8, []seg{{decode: 3000}}, nil)
	h.run(untilIteration(2))
	long := h.submit("long", "n1", "main", 8, []seg{{decode: 200}}, nil)
	h.run(untilIteration(200))
	return h, long
}

// TestTailNamesAreTheAcceptedRules: every rule the error lists is accepted,
// and an unknown rule's error names each of them.
func TestTailNamesAreTheAcceptedRules(t *testing.T) {
	names := tailNames()
	if len(names) != 16+7*len(boostTails)+len(laneTails) { // the plain ones, boost's seven γ sources, the lanes
		t.Fatalf("%d names for %d lane suffixes", len(names), len(laneTails))
	}
	for _, n := range names {
		if _, err := newTailRules(Options{PitstopTail: n, PitstopAgingPower: 2}); err != nil {
			t.Errorf("listed rule %q refused: %v", n, err)
		}
	}
	_, err := newTailRules(Options{PitstopTail: "aging+warm+nope", PitstopAgingPower: 2})
	if err == nil {
		t.Fatal("an unknown rule was accepted")
	}
	for _, n := range names {
		if !strings.Contains(err.Error(), n) {
			t.Errorf("the error does not list %q: %v", n, err)
		}
	}
}
