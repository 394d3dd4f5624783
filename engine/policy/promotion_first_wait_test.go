package policy

import (
	"testing"

	"github.com/pitstop-llm/pitstop/engine"
)

// TestFirstWait: with "aging+warm+first" the deadline lane promotes an
// urgent call that has not produced a token and leaves one that has (here
// the running call, as urgent as the waiting one) to the rank, where
// "aging+feasible-p99", the same lane without the test, promotes both.
func TestFirstWait(t *testing.T) {
	p := NewPitstop(Options{PitstopTail: "aging+warm+first"})
	if !p.deadlines.first || p.deadlines.edf == nil || !p.deadlines.edf.toP99 || !p.tail.aging || !p.tail.warm {
		t.Fatal("aging+warm+first: want the aging, the warm age, the EDF test against the realized p99 and the first-wait test")
	}
	if NewPitstop(Options{PitstopTail: "aging+feasible-p99"}).deadlines.first {
		t.Fatal("aging+feasible-p99: the first-wait test is on")
	}
	h, long := longWaiter(t, p)
	started := h.seqs["running"]
	if long.Generated() != 0 || started.Generated() == 0 {
		t.Fatalf("generated %d and %d, want the waiting call unstarted and the running one started", long.Generated(), started.Generated())
	}
	v := h.view(h.e.Now(), 300)
	now := v.Now.Seconds()
	for _, s := range []*engine.Sequence{long, started} {
		st := stateOf(s)
		st.deadline, st.hasDeadline = now+restOfService(v, s, st)+0.5, true
	}
	q := NewPitstop(Options{PitstopTail: "aging+feasible-p99"})
	for _, l := range []*deadlineLane{&p.deadlines, &q.deadlines} {
		l.interval = 1 // a laxity under 1 s is promoted
	}
	if _, ok := q.deadlines.urgent(v, started, stateOf(started)); !ok {
		t.Fatal("aging+feasible-p99: the started call is not promoted (the test state is not urgent)")
	}
	if _, ok := p.deadlines.urgent(v, started, stateOf(started)); ok {
		t.Fatal("aging+warm+first: a started call is promoted")
	}
	if pr := p.Priority(v, long); pr.Class != 1.5 {
		t.Fatalf("aging+warm+first: the unstarted urgent call ranked %+v, want promoted (class 1.5)", pr)
	}
}
