package policy

import (
	"testing"

	"github.com/pitstop-llm/pitstop/engine"
	"github.com/pitstop-llm/pitstop/handling"
)

// TestResumePaid: a call back from its tool with its KV on the host tier,
// its context long, and a new short call waiting beside it. Under
// "aging+warm" the long call's key is its whole context's memory-over-time,
// above the short call's; under "aging+warm+resume" its context is paid
// and its key is that of a call with only its tool's result to prefill,
// below the short call's. Its class and the short call's key do not change
// (here the swap is cheaper than recomputing, so it is in the held-first
// class either way; past capacity most calls back on the host are not, and
// there the key is their order among the waiting calls), and once the long
// call has run the mark is gone.
func TestResumePaid(t *testing.T) {
	keys := map[string][2]float64{}
	classes := map[string]float64{}
	for _, tail := range []string{"aging+warm", "aging+warm+resume"} {
		o := Options{PitstopTail: tail, NoCachedHandling: true, NoDynamicHandling: true, PitstopHandling: "waste"} // swapped at its tool: waste pricing
		if err := o.Validate(); err != nil {
			t.Fatal(err)
		}
		p := NewPitstop(o)
		cfg := testConfig()
		cfg.Cost.PerToken = 0.01 // recomputing 400 tokens (4 s) costs more than swapping them
		h := newHarness(t, p, cfg)
		long := h.submit("long", "pl", "main", 400, []seg{{decode: 2, tool: 1, ret: 2}, {decode: 8}}, nil)
		var pl, ps engine.Priority
		var state engine.State
		var back bool
		h.run(func(ev *engine.Event) bool {
			if ev.Kind != engine.EvResumed || ev.Seq != long {
				return false
			}
			// Back from its tool: rank it beside a new short call, on the
			// engine goroutine, before the next iteration admits either.
			short := h.submit("short", "ps", "main", 40, []seg{{decode: 8}}, nil)
			v := h.e.View()
			state, back = long.State(), stateOf(long).backOnHost
			pl, ps = p.Priority(&v, long), p.Priority(&v, short)
			return true
		})
		if got := h.paused["long"]; len(got) != 1 || got[0] != handling.Swap || state != engine.Swapped {
			t.Fatalf("%s: long handled %v, state %v; want swapped at its tool and back on the host (the scene is wrong)", tail, got, state)
		}
		keys[tail] = [2]float64{pl.Key, ps.Key}
		classes[tail] = pl.Class
		if back != (tail == "aging+warm+resume") {
			t.Errorf("%s: long marked back on the host %v", tail, back)
		}
		h.run(nil)
		if stateOf(long).backOnHost {
			t.Errorf("%s: long still marked back on the host after it ran", tail)
		}
	}
	if k := keys["aging+warm"]; !(k[0] > k[1]) {
		t.Errorf("aging+warm: long key %g, short %g; want the long context ranked after", k[0], k[1])
	}
	if k := keys["aging+warm+resume"]; !(k[0] < k[1]) {
		t.Errorf("aging+warm+resume: long key %g, short %g; want the paid context ranked first", k[0], k[1])
	}
	if a, b := classes["aging+warm"], classes["aging+warm+resume"]; a != b {
		t.Errorf("the long call's class changed with the rule: %v against %v (the rule changes its key alone)", a, b)
	}
	if a, b := keys["aging+warm"][1], keys["aging+warm+resume"][1]; a != b {
		t.Errorf("the short call's key changed with the rule: %g against %g", a, b)
	}
}
