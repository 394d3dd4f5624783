package policy

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/pitstop-llm/pitstop/engine"
)

// backlogAt is the synthetic backlog of the switch tests at second at:
// growing ("growing": one call a second with noise of ±3, arrivals outrun
// service) or bursty and stable (bursts of up to 160 calls every 8 s, each
// drained to 0 before the next).
func backlogAt(growing bool, at int) int {
	if growing {
		return at + 3*(at%3-1)
	}
	if at%8 < 4 {
		return 40 * (at%8 + 1)
	}
	return 0
}

// TestBoostPastSwitch: the boost ranks only once the guard knows (two
// windows seen) and sees the backlog's floor rise; a bursty backlog that
// drains never switches it. Without hold it switches back as soon as the
// floor stops rising; with hold only once the floor is back at where the
// rise began.
func TestBoostPastSwitch(t *testing.T) {
	const window = 10.0
	feed := func(b *boostPast, growing bool, from, to int) {
		for at := from; at <= to; at++ {
			b.observe(&engine.Event{Kind: engine.EvIteration, Iter: &engine.IterationStats{Waiting: backlogAt(growing, at)}})
			b.note(float64(at), window)
		}
	}
	for _, hold := range []bool{false, true} {
		var stable, growing boostPast
		stable.guard.hold, growing.guard.hold = hold, hold
		feed(&growing, true, 0, 5)
		if growing.on() || !growing.guard.overloaded() {
			t.Fatalf("hold %v: half a window seen: want the aging (the guard shut but not knowing)", hold)
		}
		feed(&stable, false, 0, 60)
		if stable.on() {
			t.Fatalf("hold %v: a stable bursty backlog switched to the boost", hold)
		}
		feed(&growing, true, 6, 40)
		if !growing.on() {
			t.Fatalf("hold %v: a backlog growing for 40 s: want the boost", hold)
		}
		// the arrivals stop outrunning service: the backlog stays at its
		// top (about 40) for two windows, then drains to 0.
		for at := 41; at <= 60; at++ {
			growing.observe(&engine.Event{Kind: engine.EvIteration, Iter: &engine.IterationStats{Waiting: 40}})
			growing.note(float64(at), window)
		}
		if growing.on() != hold {
			t.Fatalf("hold %v: a backlog that stopped growing but has not drained: boost %v, want %v", hold, growing.on(), hold)
		}
		for at := 61; at <= 90; at++ {
			growing.observe(&engine.Event{Kind: engine.EvIteration, Iter: &engine.IterationStats{Waiting: 0}})
			growing.note(float64(at), window)
		}
		if growing.on() {
			t.Fatalf("hold %v: a drained backlog: want the aging back", hold)
		}
		growing.note(91, 0)
		if growing.on() {
			t.Fatalf("hold %v: the window unknown: want the aging", hold)
		}
	}
}

// TestBoostPastBusy: with busy a rise of the floor counts only from a
// floor above zero: a burst that starts from an empty queue in the older
// window does not switch the boost, a backlog that never empties
// and grows does; without busy the burst's rise switches it.
func TestBoostPastBusy(t *testing.T) {
	const window = 10.0
	for _, busy := range []bool{false, true} {
		var burst, grow boostPast
		burst.guard.busy, grow.guard.busy = busy, busy
		for at := 0; at <= 60; at++ {
			w := 0
			if at >= 45 {
				w = 5 * (at - 45) // a burst from an empty queue: the older window's floor 0
			}
			burst.observe(&engine.Event{Kind: engine.EvIteration, Iter: &engine.IterationStats{Waiting: w}})
			burst.note(float64(at), window)
			grow.observe(&engine.Event{Kind: engine.EvIteration, Iter: &engine.IterationStats{Waiting: 5 + at}})
			grow.note(float64(at), window)
		}
		if burst.on() == busy {
			t.Fatalf("busy %v: a burst rising from an empty queue: boost %v, want %v", busy, burst.on(), !busy)
		}
		if !grow.on() {
			t.Fatalf("busy %v: a backlog that never empties and grows: want the boost", busy)
		}
	}
}

// TestBoostPastTailRule: "-boost-SOURCE-past" is the default's rule with
// the switch and the source, nothing else: the aging stays (the boost is not
// always on); "-hold" sets the switch's hold.
func TestBoostPastTailRule(t *testing.T) {
	base, err := newTailRules(Options{PitstopTail: "aging+warm+first-final-gated-fit", PitstopAgingPower: 2})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name             string
		tail, wait, aged bool
	}{{"tail", true, false, false}, {"wait", false, true, false}, {"aged", false, false, true}} {
		for _, suffix := range []string{"", "-hold", "-busy", "-busy-hold"} {
			name := "aging+warm+first-final-gated-fit-boost-" + c.name + "-past" + suffix
			hold, busy := strings.HasSuffix(suffix, "hold"), strings.HasPrefix(suffix, "-busy")
			r, err := newTailRules(Options{PitstopTail: name, PitstopAgingPower: 2})
			if err != nil {
				t.Fatal(err)
			}
			if !r.boostPast || r.boost || !r.aging || r.boostTail != c.tail || r.boostWait != c.wait || r.boostAged != c.aged || r.hold != hold || r.busy != busy {
				t.Fatalf("%s: %+v", name, r)
			}
			r.boostPast, r.boostTail, r.boostWait, r.boostAged, r.hold, r.busy = false, false, false, false, false, false
			if r != base {
				t.Fatalf("%s changes other rules: %+v against %+v", name, r, base)
			}
			p := NewPitstop(Options{PitstopTail: name})
			if p.past.guard.hold != hold || p.past.guard.busy != busy || p.boost.byTail != c.tail || p.boost.byWait != c.wait || (p.boost.byBound > 0) != c.aged {
				t.Fatalf("%s: the policy's switch %+v, boost %+v", name, p.past.guard, p.boost)
			}
		}
	}
}

// TestPitstopBoostPast: under capacity (the guard not knowing, or knowing
// and open) a waiting call ranks by the default's aged key, to the digit;
// past capacity by its boosted arrival time.
func TestPitstopBoostPast(t *testing.T) {
	rank := func(tail string, past, known bool) (*Pitstop, []engine.Priority, []*engine.Sequence) {
		p := NewPitstop(Options{PitstopTail: tail, ProgramOrder: "call"})
		h, long := longWaiter(t, p)
		short := h.submit("short", "n2", "main", 8, []seg{{decode: 4}}, nil)
		v := h.view(h.e.Now(), 3)
		gap := (short.Arrival() - long.Arrival()).Seconds()
		p.fcfs = fcfsReference{num: 100 * gap, den: 1, own: p99Window{n: fcfsMinCalls, q99: gap}}
		p.boost.byWait = true // γ = 1/W, known from the reference (the test's own source)
		p.boost.update(&p.fcfs, 0)
		p.past.guard.shut, p.past.guard.known = past, known
		return p, []engine.Priority{p.Priority(v, long), p.Priority(v, short)}, []*engine.Sequence{long, short}
	}
	_, def, _ := rank("aging+warm+first-final-gated-fit", false, false)
	for _, c := range []struct {
		name        string
		past, known bool
	}{{"not known", true, false}, {"known, under capacity", false, true}} {
		_, got, _ := rank("aging+warm+first-final-gated-fit-boost-wait-past", c.past, c.known)
		if !slices.Equal(got, def) {
			t.Fatalf("%s: ranked %+v, want the default's %+v", c.name, got, def)
		}
	}
	p, got, seqs := rank("aging+warm+first-final-gated-fit-boost-wait-past", true, true)
	if !(p.boost.gamma > 0) {
		t.Fatal("γ not known")
	}
	for i, s := range seqs {
		want := s.Arrival().Seconds() - stateOf(s).boost
		if got[i].Class != 2 || math.Abs(got[i].Key-want) > 1e-9*max(1, math.Abs(want)) || stateOf(s).boost <= 0 {
			t.Fatalf("past capacity: call %v ranked %+v, want class 2 key %v (boost %v)", s.ID(), got[i], want, stateOf(s).boost)
		}
	}
	if got[1].Key >= got[0].Key {
		t.Fatalf("past capacity: the short call (key %v) not ahead of the long one (%v)", got[1].Key, got[0].Key)
	}
	if got[0].Key == def[0].Key {
		t.Fatal("past capacity: the long call ranked as the aging ranks it")
	}
}
