package policy

import (
	"testing"

	"github.com/pitstop-llm/pitstop/engine"
	"github.com/pitstop-llm/pitstop/handling"
)

// TestPromotionSwap: with "aging+warm+swap" an urgent call that does not
// fit in the free blocks is promoted only if evicting the paused call into
// the free host slots makes its room: with a host tier too small for the
// paused call's KV it stays in the rank (where "aging+feasible-p99"
// promotes it in the same state), with one large enough it is promoted.
func TestPromotionSwap(t *testing.T) {
	if p := NewPitstop(Options{PitstopTail: "aging+warm+swap"}); p.deadlines.swap == nil || p.deadlines.edf == nil || !p.deadlines.edf.toP99 || !p.tail.warm || p.deadlines.fit != nil {
		t.Fatal("aging+warm+swap: want the warm aging, the EDF test against the realized p99 and the swap test, not the fit test")
	}
	if NewPitstop(Options{PitstopTail: "aging+feasible-p99"}).deadlines.swap != nil {
		t.Fatal("aging+feasible-p99: the swap test is on")
	}
	for _, host := range []int{2, 16} {
		for _, tail := range []string{"aging+warm+swap", "aging+feasible-p99"} {
			p := NewPitstop(Options{PitstopTail: tail, NoDynamicHandling: true})
			cfg := testConfig()
			cfg.NumBlocks, cfg.HostBlocks = 32, host
			h := newHarness(t, p, cfg)
			// R runs throughout; P pauses holding 10 blocks, preserved (its
			// tool predicted short, taking 0.3 s); then N arrives with a
			// context of 22 blocks, more than are free.
			h.submit("R", "pr", "main", 8, []seg{{decode: 40}}, nil)
			h.submit("P", "pp", "main", 36, []seg{{decode: 2, tool: 0.3, ret: 2}, {decode: 2}}, []seg{{decode: 2, tool: 0.005, ret: 2}, {decode: 2}})
			h.run(func(*engine.Event) bool { return len(h.paused["P"]) > 0 })
			if got := h.paused["P"]; got[0] != handling.Preserve {
				t.Fatalf("P handled %v, want preserve (the scene is wrong)", got)
			}
			n := h.submit("N", "pn", "main", 88, []seg{{decode: 2}}, nil)
			v := h.e.View()
			st := stateOf(n)
			if peak := peakBlocks(&v, n, st); peak <= v.FreeNow() || peak > v.FreeNow()+10 {
				t.Fatalf("N's peak %d blocks, %d free; the scene wants it short by at most P's 10", peak, v.FreeNow())
			}
			st.deadline, st.hasDeadline = v.Now.Seconds()+restOfService(&v, n, st)+0.5, true
			p.deadlines.interval = 1 // a laxity under 1 s is promoted
			_, ok := p.deadlines.urgent(&v, n, st)
			if want := tail == "aging+feasible-p99" || host == 16; ok != want {
				t.Errorf("%s, host tier %d blocks: promoted %v, want %v", tail, host, ok, want)
			}
		}
	}
}
