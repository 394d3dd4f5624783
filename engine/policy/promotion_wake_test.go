package policy

import (
	"math"
	"testing"
	"time"
)

// TestLaneWake: with "aging+warm+first-final-wake" a call whose laxity (5
// s) is under the interval to the next periodic re-rank (10 s) is not
// promoted now, as "aging+warm+first-final" promotes it, but the lane asks
// for a re-rank an iteration before its laxity runs out (Refresh true
// then, not before), and at that re-rank promotes it.
func TestLaneWake(t *testing.T) {
	q := NewPitstop(Options{PitstopTail: "aging+warm+first-final"})
	p := NewPitstop(Options{PitstopTail: "aging+warm+first-final-wake"})
	if q.deadlines.wake != nil || p.deadlines.wake == nil || !p.deadlines.first || !p.deadlines.final || p.deadlines.gated {
		t.Fatal("want the wake with aging+warm+first-final-wake alone, on the first-final lane, ungated")
	}
	for _, x := range []*Pitstop{p, q} {
		h, long := longWaiter(t, x)
		v := h.view(h.e.Now(), 300)
		now := v.Now.Seconds()
		st := stateOf(long)
		rest := restOfService(v, long, st)
		st.deadline, st.hasDeadline = now+rest+5, true
		x.deadlines.interval = 10 // the next periodic re-rank is 10 s away
		_, ok := x.deadlines.urgent(v, long, st)
		if x == q {
			if !ok {
				t.Fatal("aging+warm+first-final: a call with 5 s of laxity and 10 s to the next re-rank is not promoted")
			}
			continue
		}
		if ok {
			t.Fatal("wake: a call with 5 s of laxity is promoted now")
		}
		it := v.Cost.IterTime(v.Running + 1)
		if got := x.deadlines.wake.at - now; math.Abs(got-(5-it)) > 1e-3 {
			t.Fatalf("wake: re-rank asked %.3f s ahead, want its laxity less an iteration, %.3f s", got, 5-it)
		}
		x.a.lastAging = 300 // no periodic re-rank due
		x.keepOrders()
		before := h.view(v.Now+time.Duration((4-it)*float64(time.Second)), 301)
		if x.deadlines.wake.due(before) || x.Refresh(before) {
			t.Fatal("wake: a re-rank is due before the laxity runs out")
		}
		later := h.view(v.Now+time.Duration((5-it+0.001)*float64(time.Second)), 302)
		if !x.deadlines.wake.due(later) || !x.Refresh(later) {
			t.Fatal("wake: no re-rank when the laxity runs out")
		}
		st.restFor = keyOf(long) // the rest stands, as the predicted rest of a waiting call does
		if _, ok := x.deadlines.urgent(later, long, st); !ok {
			t.Fatal("wake: not promoted at the re-rank its laxity ran out by")
		}
	}
}
