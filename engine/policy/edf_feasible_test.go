package policy

import (
	"testing"
	"time"
)

// TestEDFSchedule: a closed re-rank's promoted calls are kept by deadline
// with their device times summed; a candidate counts only the calls whose
// deadlines come strictly before its own, spread over the slots.
func TestEDFSchedule(t *testing.T) {
	var e edfSchedule
	e.add(30, 4)
	e.add(10, 2)
	e.add(20, 3)
	if e.ahead(100) != 0 {
		t.Fatal("calls of an open re-rank count before it closes")
	}
	e.roll()
	for _, c := range []struct{ deadline, ahead float64 }{{5, 0}, {10, 0}, {15, 2}, {20, 2}, {25, 5}, {30, 5}, {31, 9}} {
		if got := e.ahead(c.deadline); got != c.ahead {
			t.Errorf("ahead(%v) = %v, want %v", c.deadline, got, c.ahead)
		}
	}
	if !e.feasible(25, 5, 1) || e.feasible(25, 4.9, 1) {
		t.Error("one slot, 5 s ahead: laxity 5 must be feasible and 4.9 not")
	}
	if !e.feasible(25, 2.5, 2) || e.feasible(25, 2.4, 2) {
		t.Error("two slots, 5 s ahead: laxity 2.5 must be feasible and 2.4 not")
	}
	if e.feasible(5, -0.1, 8) {
		t.Error("a call past its deadline with nothing ahead was feasible")
	}
	e.roll() // an empty re-rank empties the schedule
	if e.ahead(100) != 0 || !e.feasible(100, 0, 1) {
		t.Fatalf("after an empty re-rank: ahead %v, want 0", e.ahead(100))
	}
}

// TestPitstopFeasibleLane: with "aging+feasible" the lane promotes as
// "aging+deadline" does while a call can still make its deadline, and
// leaves to the rank a call that cannot: one already past it, or one that
// misses it behind the calls promoted at the last re-rank with earlier
// deadlines (a later-deadline call is not held back by them).
func TestPitstopFeasibleLane(t *testing.T) {
	p := NewPitstop(Options{PitstopTail: "aging+feasible"})
	plain := NewPitstop(Options{PitstopTail: "aging+deadline"})
	if p.deadlines.edf == nil || plain.deadlines.edf != nil {
		t.Fatal("the EDF schedule is on with aging+feasible alone")
	}
	h, long := longWaiter(t, p)
	v := h.view(h.e.Now(), 3)
	now := v.Now.Seconds()
	st := stateOf(long)
	p.Priority(v, long) // enters the shadow, sets its rest
	rest := restOfService(v, long, st)
	setLax := func(lax float64) { st.deadline, st.hasDeadline = now+rest+lax, true }
	for _, d := range []*deadlineLane{&p.deadlines, &plain.deadlines} {
		d.interval = 1 // a re-rank every second: a laxity under 1 s is urgent
	}
	setLax(0.5)
	if _, ok := p.deadlines.urgent(v, long, st); !ok {
		t.Fatal("laxity 0.5 s, nothing promoted ahead: not promoted")
	}
	if pr := p.Priority(v, long); pr.Class != 1.5 || pr.Key != st.deadline {
		t.Fatalf("feasible urgent call ranked %+v, want class 1.5 keyed by its deadline", pr)
	}
	setLax(-0.5)
	if _, ok := p.deadlines.urgent(v, long, st); ok {
		t.Fatal("a call past its deadline was promoted")
	}
	if _, ok := plain.deadlines.urgent(v, long, st); !ok {
		t.Fatal("aging+deadline: a call past its deadline was not promoted")
	}
	if pr := p.Priority(v, long); pr.Class == 1.5 {
		t.Fatalf("infeasible call ranked %+v, want the rank's class", pr)
	}
	// Past its deadline but able to end within the p99 the engine realizes
	// (here 1000 s after arrival): with feasible-p99 kept out of the tail,
	// so promoted; without, left to the rank.
	for range fcfsMinCalls {
		p.deadlines.edf.realized.record(1000)
	}
	if _, ok := p.deadlines.urgent(v, long, st); ok {
		t.Fatal("aging+feasible: a call past its deadline was promoted for the realized p99")
	}
	p.deadlines.edf.toP99 = true
	if _, ok := p.deadlines.urgent(v, long, st); !ok {
		t.Fatal("aging+feasible-p99: a late call that can still end within the realized p99 was not promoted")
	}
	p.deadlines.edf.toP99, p.deadlines.edf.realized = false, p99Window{}
	// A full re-rank promotes a call with 3 s of device time and deadline
	// D; at the next one a candidate with laxity 0.5 s and a later deadline
	// misses behind it (one slot: 3 s ahead), one with an earlier deadline
	// does not.
	setLax(0.5)
	d := &p.deadlines
	v.Iteration = 100
	d.rerank(v)
	d.edf.add(st.deadline-1, 3)
	v.Iteration = 164
	v.Now += time.Second
	d.rerank(v)
	v.Now -= time.Second
	d.interval, d.ahead = 1, 0 // keep the urgency test as above
	d.shadow.c, d.shadow.full = 1, true
	if _, ok := d.urgent(v, long, st); ok {
		t.Fatal("laxity 0.5 s behind 3 s of earlier-deadline promoted work on one slot: promoted")
	}
	d.edf.last[0].deadline = st.deadline + 1
	if _, ok := d.urgent(v, long, st); !ok {
		t.Fatal("the promoted work has a later deadline: the call was held back by it")
	}
	if v.Iteration != d.rerankAt {
		t.Fatal("test setup: not inside the current full re-rank")
	}
	if n := len(d.edf.next); n != 1 || d.edf.next[0].deadline != st.deadline {
		t.Fatalf("the promoted call was not added to the current re-rank's schedule: %+v", d.edf.next)
	}
}

// TestEDFBound: until enough calls finished a promoted call must end by its
// deadline; then by the later of its deadline and its arrival plus the p99
// of the finished calls' end-to-end times (over the last fcfsWindow).
func TestEDFBound(t *testing.T) {
	e := edfSchedule{toP99: true}
	if got := e.bound(100, 150); got != 150 {
		t.Fatalf("no calls finished: bound %v, want the deadline 150", got)
	}
	for i := 1; i <= 200; i++ { // e2e 1..200 s: p99 is the 199th, 198 s
		e.realized.record(float64(i))
	}
	if p, ok := e.realized.p99(); !ok || p != 199 {
		t.Fatalf("p99 of 1..200 = %v (%v), want 199 (index 198 of 200)", p, ok)
	}
	if got := e.bound(100, 150); got != 299 {
		t.Fatalf("bound %v, want arrival 100 + p99 199", got)
	}
	if got := e.bound(100, 400); got != 400 {
		t.Fatalf("bound %v, want the later deadline 400", got)
	}
	if strict := (edfSchedule{realized: e.realized}); strict.bound(100, 150) != 150 {
		t.Fatal("without toP99 the bound is the deadline alone")
	}
	for range 2 * fcfsWindow { // the window forgets: e2e of 10 s alone
		e.realized.record(10)
	}
	if p, _ := e.realized.p99(); p != 10 {
		t.Fatalf("after %d calls of 10 s: p99 %v, want 10", 2*fcfsWindow, p)
	}
}

// TestEDFBoundFloor: with floor the bound holds the highest p99 realized
// so far, so a tail the lane shortens does not lower it; without, the bound
// follows the current window down.
func TestEDFBoundFloor(t *testing.T) {
	cur := edfSchedule{toP99: true}
	peak := edfSchedule{toP99: true, floor: true}
	if peak.bound(0, 50) != 50 {
		t.Fatal("before any call finished the bound is not the deadline")
	}
	for _, e := range []*edfSchedule{&cur, &peak} {
		for range fcfsWindow {
			e.realized.record(800) // a long tail first
		}
	}
	if cur.bound(100, 50) != 900 || peak.bound(100, 50) != 900 {
		t.Fatalf("tail of 800 s: bounds %v and %v, want 900", cur.bound(100, 50), peak.bound(100, 50))
	}
	for _, e := range []*edfSchedule{&cur, &peak} {
		for range fcfsWindow {
			e.realized.record(300) // the lane shortened it
		}
	}
	if got := cur.bound(100, 50); got != 400 {
		t.Errorf("current p99 300 s: bound %v, want 400", got)
	}
	if got := peak.bound(100, 50); got != 900 {
		t.Errorf("floor: bound %v after the tail fell, want 900 (the peak)", got)
	}
	if got := peak.bound(100, 1500); got != 1500 {
		t.Errorf("a deadline past the peak: bound %v, want the deadline 1500", got)
	}
	for range fcfsWindow {
		peak.realized.record(1200) // a longer tail raises it
	}
	if got := peak.bound(0, 50); got != 1200 {
		t.Errorf("p99 rose to 1200 s: bound %v, want 1200", got)
	}
}
