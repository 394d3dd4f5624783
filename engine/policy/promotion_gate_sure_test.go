package policy

import "testing"

// TestP99Bound: the window's order statistics at the p99's rank and at its
// 95 % bounds, 1.96 standard errors of the Binomial(n, 0.01) count away.
func TestP99Bound(t *testing.T) {
	var w p99Window
	if _, ok := w.p99Bound(0); ok {
		t.Fatal("an empty window has no bound")
	}
	for i := 1; i <= fcfsWindow; i++ {
		w.record(float64(i))
	}
	// n = 1000: rank 990 ∓ 1.96·√9.9 = 983.8 and 996.2
	for _, c := range []struct{ z, want float64 }{{0, 991}, {-p99Z, 984}, {p99Z, 997}} {
		if got, ok := w.p99Bound(c.z); !ok || got != c.want {
			t.Errorf("p99Bound(%g) = %g, %v; want %g", c.z, got, ok, c.want)
		}
	}
}

// TestTailSurelyPastArrivalOrder: with a realized window whose 10th largest
// call is past arrival order's p99 but whose 17th is not, the point trigger
// ("gated") opens and the confidence-bound one ("sure") does not; with 30
// calls past it both open, and with none neither.
func TestTailSurelyPastArrivalOrder(t *testing.T) {
	if d := NewPitstop(Options{PitstopTail: "aging+warm+first-final-sure-fit"}).deadlines; !d.sure || d.gated || !d.first || !d.final || d.fit == nil {
		t.Fatal("aging+warm+first-final-sure-fit: want the confidence-bound trigger and the fit test on first-final's lane")
	}
	for _, c := range []struct {
		tail string
		past int // calls of the realized window at 1.5x arrival order's p99, the rest at 0.5x
		want bool
	}{
		{"aging+warm+first-final-gated", 0, false},
		{"aging+warm+first-final-sure", 0, false},
		{"aging+warm+first-final-gated", 12, true},
		{"aging+warm+first-final-sure", 12, false},
		{"aging+warm+first-final-gated", 30, true},
		{"aging+warm+first-final-sure", 30, true},
	} {
		p := NewPitstop(Options{PitstopTail: c.tail})
		h, long := longWaiter(t, p)
		v := h.view(h.e.Now(), 300)
		half := (v.Now - long.Arrival()).Seconds() / 2
		for i := range fcfsWindow {
			p.deadlines.shadow.record(half)
			if i < c.past {
				p.deadlines.edf.realized.record(1.5 * half)
			} else {
				p.deadlines.edf.realized.record(0.5 * half)
			}
		}
		st := stateOf(long)
		st.deadline, st.hasDeadline = v.Now.Seconds()+restOfService(v, long, st)+0.5, true
		p.deadlines.interval = 1 // a laxity under 1 s is promoted
		if _, ok := p.deadlines.urgent(v, long, st); ok != c.want {
			t.Errorf("%s, %d calls past: promoted %v, want %v", c.tail, c.past, ok, c.want)
		}
	}
}
