package policy

import (
	"math"
	"slices"
	"testing"
	"time"

	"github.com/pitstop-llm/pitstop/engine"
)

// TestPitstopDeadlineLane: with "aging+deadline" a waiting call goes ahead
// of the ranked calls (class 1.5, keyed by its deadline: earliest deadline
// first) once its laxity is below the time to the next re-rank plus the
// device time of the calls promoted at the last one (over the servers);
// with room to spare the rank decides; with feasible a call that can no
// longer make its deadline is left to the rank.
func TestPitstopDeadlineLane(t *testing.T) {
	p := NewPitstop(Options{PitstopTail: "aging+deadline"})
	h, long := longWaiter(t, p)
	short := h.submit("short", "n2", "main", 8, []seg{{decode: 4}}, nil)
	long2 := h.submit("long2", "n3", "main", 8, []seg{{decode: 250}}, nil)
	v := h.view(h.e.Now(), 3)
	now := v.Now.Seconds()
	rest := func(s *engine.Sequence) float64 { return restOfService(v, s, stateOf(s)) }
	setLax := func(s *engine.Sequence, lax float64) {
		st := stateOf(s)
		st.deadline, st.hasDeadline = now+rest(s)+lax, true
	}
	setLax(long, 10)
	setLax(long2, 20)
	setLax(short, 100)
	if got, want := order(p, v, long, long2, short), []string{"short", "long", "long2"}; !slices.Equal(got, want) {
		t.Fatalf("room to spare: order %v, want %v (the rank)", got, want)
	}
	p.deadlines.interval = 1 // a re-rank every second: a laxity under 1 s is promoted
	setLax(long, 0.5)
	setLax(long2, 0.2)
	want := []string{"long", "long2", "short"} // earliest deadline first, then the rank
	if stateOf(long2).deadline < stateOf(long).deadline {
		want = []string{"long2", "long", "short"}
	}
	if got := order(p, v, short, long2, long); !slices.Equal(got, want) {
		t.Fatalf("both urgent: order %v, want %v", got, want)
	}
	if pr := p.Priority(v, long); pr.Class != 1.5 || pr.Key != stateOf(long).deadline {
		t.Fatalf("urgent call ranked %+v, want class 1.5 keyed by its deadline %v", pr, stateOf(long).deadline)
	}
	// The promoted calls' device time counts against the next ones: with
	// 5 s of it ahead (one server), a laxity of 3 s is urgent.
	setLax(long, 3)
	if _, ok := p.deadlines.urgent(v, long, stateOf(long)); ok {
		t.Fatal("laxity 3 s, nothing ahead, 1 s to the next re-rank: promoted")
	}
	v.Iteration = 100
	p.deadlines.rerank(v)
	p.deadlines.next = 5
	v.Now += time.Second
	v.Iteration = 164
	p.deadlines.rerank(v)
	if p.deadlines.ahead != 5 || p.deadlines.interval != 1 {
		t.Fatalf("after a re-rank: ahead %v s, interval %v s; want 5 and 1", p.deadlines.ahead, p.deadlines.interval)
	}
	v.Now -= time.Second
	if _, ok := p.deadlines.urgent(v, long, stateOf(long)); !ok {
		t.Fatal("laxity 3 s with 5 s of promoted calls ahead: not promoted")
	}
	if p.deadlines.next <= 0 {
		t.Fatal("a call promoted during the re-rank did not count in the next one's time ahead")
	}
	// Moore–Hodgson: a call past its deadline is left to the rank.
	f := NewPitstop(Options{PitstopTail: "aging+deadline", PitstopDeadlineFeasible: true})
	f.deadlines.interval = 1
	setLax(long, -0.5)
	if _, ok := f.deadlines.urgent(v, long, stateOf(long)); ok {
		t.Fatal("feasible: a call that cannot make its deadline was promoted")
	}
	if _, ok := p.deadlines.urgent(v, long, stateOf(long)); !ok {
		t.Fatal("not feasible: a call past its deadline was not promoted")
	}
	setLax(long, 0.5)
	if _, ok := f.deadlines.urgent(v, long, stateOf(long)); !ok {
		t.Fatal("feasible: a call that can still make its deadline was not promoted")
	}
	// The floor: once arrival order's p99 in the shadow is known, a call is
	// held to no earlier than its arrival plus that p99; with exact, to its
	// own deadline.
	f.deadlines.shadow.q99, f.deadlines.shadow.n = 1000, fcfsMinCalls
	if dl, ok := f.deadlines.urgent(v, long, stateOf(long)); ok || dl != long.Arrival().Seconds()+1000 {
		t.Fatalf("p99 floor 1000 s: deadline %v (promoted %v), want arrival + 1000 s, not promoted", dl, ok)
	}
	f.deadlines.reference = 2000 // the conservation-law T, when larger, is the floor
	if dl, _ := f.deadlines.urgent(v, long, stateOf(long)); dl != long.Arrival().Seconds()+2000 {
		t.Fatalf("T 2000 s above the shadow's p99: deadline %v, want arrival + 2000 s", dl)
	}
	f.deadlines.exact = true
	if dl, ok := f.deadlines.urgent(v, long, stateOf(long)); !ok || dl != stateOf(long).deadline {
		t.Fatalf("exact: deadline %v (promoted %v), want its own %v, promoted", dl, ok, stateOf(long).deadline)
	}
}

// TestPitstopDeadlineSetAtArrival: a call's deadline is fixed at its first
// rank, its shadow start plus slack times its predicted own time, and does
// not move when it is ranked again later.
func TestPitstopDeadlineSetAtArrival(t *testing.T) {
	for _, slack := range []float64{0, 1.1} {
		p := NewPitstop(Options{PitstopTail: "deadline", PitstopDeadlineSlack: slack})
		h := newHarness(t, p, testConfig())
		s := h.submit("a", "a", "main", 8, []seg{{decode: 50, tool: 2, ret: 4}, {decode: 10}}, nil)
		v := h.view(h.e.Now(), 1)
		p.Priority(v, s)
		st := stateOf(s)
		var fresh fcfsShadow
		start, end := fresh.enter(v, s.Arrival().Seconds(), workOf(s, st), meanContext(s, st))
		want := start + max(slack, 1)*(end-start)
		if !st.hasDeadline || st.deadline != want || end-start <= 2 {
			t.Fatalf("slack %v: deadline %v (set %v), want %v (shadow run %v-%v s, its 2 s tool in it)", slack, st.deadline, st.hasDeadline, want, start, end)
		}
		h.run(untilIteration(20))
		p.Priority(h.view(h.e.Now(), 20), s)
		if st.deadline != want {
			t.Fatalf("slack %v: the deadline moved to %v from %v", slack, st.deadline, want)
		}
	}
}

// TestPitstopDeadlineAging: with "deadline-aging" the aging runs against
// each call's own arrival-order time (its deadline less its arrival), not
// the one learned T: a call whose arrival-order time is a hundredth of its
// age ranks at its memory-over-time over (1+100)².
func TestPitstopDeadlineAging(t *testing.T) {
	p := NewPitstop(Options{PitstopTail: "deadline-aging"})
	h, long := longWaiter(t, p)
	v := h.view(h.e.Now(), 3)
	age := (v.Now - long.Arrival()).Seconds()
	st := stateOf(long)
	st.deadline, st.hasDeadline = long.Arrival().Seconds()+age/100, true
	p.fcfs = fcfsReference{num: age, den: 1, own: p99Window{n: fcfsMinCalls, q99: age}} // one T = 2·age: ignored
	mot := p.score(v, long, st)
	want := mot / ((1 + 100) * (1 + 100))
	if got := p.Priority(v, long); got.Class != 2 || math.Abs(got.Key-want) > 1e-9*want {
		t.Fatalf("per-call aging: %+v, want class 2 key %v", got, want)
	}
}

// TestPitstopDeadlineOptions: the deadline rules are valid tail values; a
// negative or non-finite slack is a one-line error.
func TestPitstopDeadlineOptions(t *testing.T) {
	for _, tail := range []string{"deadline", "aging+deadline", "aging+feasible", "aging+feasible-p99", "aging+feasible-floor", "aging+feasible-fit", "aging+warm+first", "aging+warm+first-lag", "aging+warm+final", "aging+warm+first-final", "aging+warm+first-final-lag", "aging+warm+swap", "deadline-aging"} {
		if err := (Options{PitstopTail: tail, PitstopDeadlineSlack: 1.1}).Validate(); err != nil {
			t.Errorf("%s: %v", tail, err)
		}
	}
	for _, s := range []float64{-1, math.NaN(), math.Inf(1)} {
		if err := (Options{PitstopTail: "aging+deadline", PitstopDeadlineSlack: s}).Validate(); err == nil {
			t.Errorf("slack %v: no error", s)
		}
	}
	if r, _ := newTailRules(Options{PitstopTail: "deadline"}.Defaults()); r.aging || !r.deadline || !r.shadowed() {
		t.Fatalf("deadline: %+v, want the lane without aging", r)
	}
	if r, _ := newTailRules(Options{PitstopTail: "aging+feasible"}.Defaults()); !r.aging || !r.deadline || !r.feasible {
		t.Fatalf("aging+feasible: %+v, want the aging and the lane with the EDF test", r)
	}
	if r, _ := newTailRules(Options{PitstopTail: "aging+feasible-p99"}.Defaults()); !r.feasible || !r.toP99 {
		t.Fatalf("aging+feasible-p99: %+v, want the EDF test against the realized p99", r)
	}
	if p := NewPitstop(Options{PitstopTail: "aging+feasible-p99"}); p.deadlines.edf == nil || !p.deadlines.edf.toP99 {
		t.Fatal("aging+feasible-p99: the lane's EDF schedule does not test against the realized p99")
	}
	if p := NewPitstop(Options{PitstopTail: "aging+feasible-floor"}); p.deadlines.edf == nil || !p.deadlines.edf.toP99 || !p.deadlines.edf.floor || !p.tail.aging {
		t.Fatal("aging+feasible-floor: want the aging and the EDF test against the peak realized p99")
	}
	if p := NewPitstop(Options{PitstopTail: "aging+feasible-p99"}); p.deadlines.edf.floor {
		t.Fatal("aging+feasible-p99: the floor is on")
	}
}
