package policy

import "testing"

// TestOverloadGuardFloor: the guard is shut until it has seen two windows,
// open while the backlog drains to its floor (a burst that comes and goes),
// and shut while the floor rises (a queue that outruns its service).
func TestOverloadGuardFloor(t *testing.T) {
	const window = 10.0
	var g overloadGuard
	g.note(0, 5, window)
	if !g.overloaded() {
		t.Fatal("one note: want shut (not enough seen)")
	}
	// bursts every 8 s, each drained to 0 before the next
	for at := 1.0; at <= 40; at++ {
		w := 0
		if int(at)%8 < 4 {
			w = 40 * (int(at)%8 + 1)
		}
		g.note(at, w, window)
	}
	if g.overloaded() {
		t.Fatal("bursts that drain: want open")
	}
	if len(g.notes) > 2*int(window)+2 {
		t.Fatalf("%d notes kept, want those of two windows", len(g.notes))
	}
	// a queue growing by 1 call a second, with noise of ±3
	var h overloadGuard
	for at := 0.0; at <= 40; at++ {
		h.note(at, int(at)+3*(int(at)%3-1), window)
	}
	if !h.overloaded() {
		t.Fatal("a backlog whose floor rises: want shut")
	}
	// the window unknown: shut
	h.note(41, 0, 0)
	if !h.overloaded() {
		t.Fatal("no window: want shut")
	}
}

// TestGuardTailRule: "-guard" is the forecast lane with the guard, nothing
// else; the guard shuts a lane the forecast would open.
func TestGuardTailRule(t *testing.T) {
	base, err := newTailRules(Options{PitstopTail: "aging+warm+first-final-forecast-fit-queue-cached", PitstopAgingPower: 2})
	if err != nil {
		t.Fatal(err)
	}
	g, err := newTailRules(Options{PitstopTail: "aging+warm+first-final-forecast-fit-queue-cached-guard", PitstopAgingPower: 2})
	if err != nil {
		t.Fatal(err)
	}
	if !g.guard || base.guard {
		t.Fatalf("guard %v with -guard, %v without", g.guard, base.guard)
	}
	if g.guard = false; g != base {
		t.Fatalf("-guard changes other rules: %+v against %+v", g, base)
	}
	if NewPitstop(Options{PitstopTail: "aging+warm+first-final-forecast-fit-queue"}).deadlines.forecast.guard != nil {
		t.Fatal("without -guard: want no guard")
	}
	for _, c := range []struct {
		name string
		shut bool
		want bool
	}{{"guard open", false, true}, {"guard shut", true, false}} {
		p := NewPitstop(Options{PitstopTail: "aging+warm+first-final-forecast-fit-queue-guard"})
		h, long := longWaiter(t, p)
		v := h.view(h.e.Now(), 300)
		half := (v.Now - long.Arrival()).Seconds() / 2
		for range fcfsWindow {
			p.deadlines.shadow.record(half)
			p.deadlines.edf.realized.record(0.5 * half)
		}
		f := p.deadlines.forecast
		f.late, f.seen = 20, 50 // the forecast alone opens the lane
		f.guard.shut = c.shut
		st := stateOf(long)
		st.deadline, st.hasDeadline = v.Now.Seconds()+restOfService(v, long, st)+0.5, true
		p.deadlines.interval = 1
		p.deadlines.fit = nil
		if _, ok := p.deadlines.urgent(v, long, st); ok != c.want {
			t.Errorf("%s: promoted %v, want %v", c.name, ok, c.want)
		}
	}
}
