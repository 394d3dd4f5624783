package policy

import "testing"

// TestTailPastArrivalOrder: with "aging+warm+first-final-gated" the lane
// promotes an urgent unstarted call only once the p99 this policy realized
// is past arrival order's (the shadow's); "aging+warm+first-final", the
// same lane without the trigger, promotes it in every state.
func TestTailPastArrivalOrder(t *testing.T) {
	if d := NewPitstop(Options{PitstopTail: "aging+warm+first-gated"}).deadlines; !d.gated || !d.first || d.final {
		t.Fatal("aging+warm+first-gated: want the trigger on first's lane, without the end test")
	}
	if d := NewPitstop(Options{PitstopTail: "aging+warm+first-final-gated-fit"}).deadlines; !d.gated || !d.first || !d.final || d.fit == nil {
		t.Fatal("aging+warm+first-final-gated-fit: want the trigger and the no-eviction test on first-final's lane")
	}
	for _, c := range []struct {
		name             string
		tail             string
		shadow, realized float64 // the end-to-end times each window records, s; 0: none
		want             bool
	}{
		{"nothing known", "aging+warm+first-final-gated", 0, 0, false},
		{"arrival order's unknown", "aging+warm+first-final-gated", 0, 1.5, false},
		{"realized within arrival order's", "aging+warm+first-final-gated", 1, 0.5, false},
		{"realized equal", "aging+warm+first-final-gated", 1, 1, false},
		{"realized past arrival order's", "aging+warm+first-final-gated", 1, 1.5, true},
		{"ungated, within", "aging+warm+first-final", 1, 0.5, true},
	} {
		p := NewPitstop(Options{PitstopTail: c.tail})
		if p.deadlines.gated != (c.tail == "aging+warm+first-final-gated") || !p.deadlines.first || !p.deadlines.final || p.deadlines.edf == nil || !p.tail.warm {
			t.Fatalf("%s: want the warm aging, the first-final lane with its EDF test, gated only when named", c.tail)
		}
		h, long := longWaiter(t, p)
		v := h.view(h.e.Now(), 300)
		half := (v.Now - long.Arrival()).Seconds() / 2 // within arrival order's p99 its deadline is not moved
		// a full window: the harness run's own calls drop out of the shadow's
		for range fcfsWindow {
			if c.shadow > 0 {
				p.deadlines.shadow.record(c.shadow * half)
			}
			if c.realized > 0 {
				p.deadlines.edf.realized.record(c.realized * half)
			}
		}
		st := stateOf(long)
		st.deadline, st.hasDeadline = v.Now.Seconds()+restOfService(v, long, st)+0.5, true
		p.deadlines.interval = 1 // a laxity under 1 s is promoted
		if _, ok := p.deadlines.urgent(v, long, st); ok != c.want {
			t.Errorf("%s: promoted %v, want %v", c.name, ok, c.want)
		}
	}
}
