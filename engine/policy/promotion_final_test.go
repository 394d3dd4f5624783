package policy

import (
	"testing"

	"github.com/pitstop-llm/pitstop/engine"
)

// TestFinalStretch: with "aging+warm+final" the lane promotes an urgent
// call with no tool ahead and leaves one with a tool ahead to the rank;
// with "aging+warm+first-final" the latter is promoted too while it has
// not started; "aging+feasible-p99" promotes both.
func TestFinalStretch(t *testing.T) {
	for tail, want := range map[string][2]bool{
		"aging+warm+final":       {true, false},
		"aging+warm+first-final": {true, true},
		"aging+feasible-p99":     {true, true},
	} {
		p := NewPitstop(Options{PitstopTail: tail})
		if tail != "aging+feasible-p99" && (!p.deadlines.final || p.deadlines.edf == nil || !p.deadlines.edf.toP99 || !p.tail.warm || p.deadlines.lag != nil) {
			t.Fatalf("%s: want the warm aging, the EDF test against the realized p99 and the end test, no lag", tail)
		}
		h, long := longWaiter(t, p)
		tooled := h.submit("tooled", "n4", "main", 8, []seg{{decode: 5, tool: 1, ret: 2}, {decode: 5}}, nil)
		if !finalStretch(long) || finalStretch(tooled) || !firstWait(tooled) {
			t.Fatalf("%s: the scene is wrong: long final %v, tooled final %v, tooled unstarted %v", tail, finalStretch(long), finalStretch(tooled), firstWait(tooled))
		}
		v := h.view(h.e.Now(), 300)
		p.deadlines.interval = 1 // a laxity under 1 s is promoted
		for i, s := range []*engine.Sequence{long, tooled} {
			st := stateOf(s)
			st.deadline, st.hasDeadline = v.Now.Seconds()+restOfService(v, s, st)+0.5, true
			if _, ok := p.deadlines.urgent(v, s, st); ok != want[i] {
				t.Errorf("%s: %s promoted %v, want %v", tail, s.Name(), ok, want[i])
			}
		}
	}
}
