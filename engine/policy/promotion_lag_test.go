package policy

import (
	"math"
	"testing"
	"time"
)

// TestPromotionLag: the lag is 0 until fcfsMinCalls promoted calls
// finished, then their mean lateness over the last fcfsWindow (never below
// 0); a call's predicted end is kept from its first promotion; and with a
// learned lag the lane promotes a call whose laxity would still cover the
// wait without it.
func TestPromotionLag(t *testing.T) {
	var l promotionLag
	for i := range fcfsMinCalls - 1 {
		l.record(float64(i))
	}
	if got := l.lag(); got != 0 {
		t.Fatalf("%d calls: lag %v, want 0 until %d", fcfsMinCalls-1, got, fcfsMinCalls)
	}
	l = promotionLag{}
	for range fcfsWindow {
		l.record(-3) // promoted calls that ended early
	}
	if got := l.lag(); got != 0 {
		t.Fatalf("calls ending early: lag %v, want 0", got)
	}
	for range fcfsWindow / 2 {
		l.record(9) // half the window replaced
	}
	if got, want := l.lag(), (9.0-3.0)/2; math.Abs(got-want) > 1e-9 {
		t.Fatalf("ring half replaced: lag %v, want %v", got, want)
	}
	p := NewPitstop(Options{PitstopTail: "aging+warm+first-lag"})
	if p.deadlines.lag == nil || !p.deadlines.first || p.deadlines.edf == nil || !p.deadlines.edf.toP99 || !p.tail.warm {
		t.Fatal("aging+warm+first-lag: want the warm aging, the EDF test against the realized p99, the first-wait test and the lag")
	}
	if NewPitstop(Options{PitstopTail: "aging+warm+first"}).deadlines.lag != nil {
		t.Fatal("aging+warm+first: the lag is on")
	}
	h, long := longWaiter(t, p)
	v := h.view(h.e.Now(), 300)
	st2 := stateOf(long)
	st2.deadline, st2.hasDeadline = v.Now.Seconds()+restOfService(v, long, st2)+2, true // laxity 2 s
	p.deadlines.interval = 1                                                            // a laxity under 1 s is promoted
	if _, ok := p.deadlines.urgent(v, long, st2); ok {
		t.Fatal("no lag learned: a call with 2 s of laxity promoted against a 1 s wait")
	}
	for range fcfsMinCalls {
		p.deadlines.lag.record(1.5)
	}
	if _, ok := p.deadlines.urgent(v, long, st2); !ok {
		t.Fatal("a 1.5 s lag learned: the call (2 s of laxity, 0.5 s left) is not promoted against a 1 s wait")
	}
	if want := v.Now.Seconds() + segmentRest(v, long, st2); !st2.laneMarked || st2.laneEnd != want {
		t.Fatalf("the promoted call's predicted end %v (marked %v), want %v", st2.laneEnd, st2.laneMarked, want)
	}
	v.Now += 5 * time.Second
	p.deadlines.lag.mark(v, long, st2)
	if want := v.Now.Seconds() - 5 + segmentRest(v, long, st2); math.Abs(st2.laneEnd-want) > 1e-9 {
		t.Fatalf("promoted again: predicted end %v, want the first promotion's %v", st2.laneEnd, want)
	}
}
