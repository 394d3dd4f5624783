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

// TestOverloadGuardHold: with hold, the guard shut by a rising floor stays
// shut while the backlog drains, and opens once the last window's floor is
// back at the floor before the rise; without hold it opens as soon as the
// floor stops rising.
func TestOverloadGuardHold(t *testing.T) {
	const window = 10.0
	run := func(hold bool) (drainShut, afterOpen bool) {
		g := overloadGuard{hold: hold}
		at := 0.0
		for ; at <= 30; at++ { // floor 2, steady
			g.note(at, 2+int(at)%2, window)
		}
		for ; at <= 80; at++ { // grows 10 calls a second
			g.note(at, 2+10*int(at-30), window)
		}
		for ; at <= 110; at++ { // drains 10 calls a second, still high
			g.note(at, 500-10*int(at-80), window)
		}
		drainShut = g.overloaded()
		for ; at <= 160; at++ { // drained
			g.note(at, 2, window)
		}
		return drainShut, !g.overloaded()
	}
	if shut, open := run(true); !shut || !open {
		t.Errorf("hold: shut while draining %v (want true), open after %v (want true)", shut, open)
	}
	if shut, open := run(false); shut || !open {
		t.Errorf("no hold: shut while draining %v (want false), open after %v (want true)", shut, open)
	}
	r, err := newTailRules(Options{PitstopTail: "aging+warm+first-final-forecast-fit-queue-cached-guard-hold", PitstopAgingPower: 2})
	if err != nil || !r.hold || !r.guard {
		t.Fatalf("-guard-hold: %+v, %v", r, err)
	}
	if !NewPitstop(Options{PitstopTail: "aging+warm+first-final-forecast-fit-queue-guard-hold"}).deadlines.forecast.guard.hold {
		t.Fatal("-guard-hold: want the hold on")
	}
}
