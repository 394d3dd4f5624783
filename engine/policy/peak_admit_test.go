package policy

import (
	"testing"

	"github.com/pitstop-llm/pitstop/engine"
	"github.com/pitstop-llm/pitstop/handling"
)

// A call preserved on the device and a new call whose peak (context plus
// predicted output) fits in the free blocks only with the preserved call's:
// the peak rule admits it when the preserved call's tool is predicted to
// return after the new call would be done (its blocks are free to take),
// and refuses it when the tool returns first (the preserved call comes
// back and needs them). "admit" admits it either way, and a call that fits
// in the free blocks alone is admitted either way.
func TestPeakAdmitCountsPreservedBlocksByToolReturn(t *testing.T) {
	for _, tc := range []struct {
		name string
		tool float64 // P's predicted tool time, s
		mode string
		want bool
	}{
		{"tool returns after", 0.08, "peak", true},
		{"tool returns before", 0.005, "peak", false},
		{"tool returns before, admit", 0.005, "admit", true},
	} {
		cfg := testConfig()
		cfg.NumBlocks = 40
		// Prefill dear, decode cheap: a preserved call's tool may be longer
		// than a small call's whole run.
		cfg.Cost.IterBase, cfg.Cost.PerToken = 0.001, 0.001
		p := NewPitstop(Options{PitstopHostRoom: tc.mode, NoDynamicHandling: true, NoCachedHandling: true})
		h := newHarness(t, p, cfg)
		h.submit("R", "pr", "main", 8, []seg{{decode: 40}}, nil)
		h.submit("P", "pp", "main", 120, []seg{{decode: 2, tool: 1, ret: 2}, {decode: 2}}, []seg{{decode: 2, tool: tc.tool, ret: 2}, {decode: 2}})
		h.run(func(ev *engine.Event) bool { return ev.Kind == engine.EvPaused && ev.Seq.Name() == "P" })
		if got := h.paused["P"]; len(got) != 1 || got[0] != handling.Preserve {
			t.Fatalf("%s: P handled %v at its tool call, want preserve (the scene is wrong)", tc.name, got)
		}
		vv := h.e.View()
		v := &vv
		held := h.seqs["P"].ResidentBlocks()
		free := v.FreeNow() - v.Watermark()
		if held < 4 || free < 2 {
			t.Fatalf("%s: P holds %d blocks, %d free; the scene wants at least 4 and 2", tc.name, held, free)
		}
		// N's context fits in the free blocks, its peak (2 tokens more)
		// takes one more block.
		n := h.submit("N", "pn", "main", 4*free-1, []seg{{decode: 2}}, []seg{{decode: 2}})
		if got := p.Admit(v, n, 32); got != tc.want {
			t.Errorf("%s (%s): admitted %v, want %v (P holds %d blocks for %.3f s more, %d free)", tc.name, tc.mode, got, tc.want, held, v.ToolRemaining(h.seqs["P"]), free)
		}
		small := h.submit("S", "ps", "main", 4, []seg{{decode: 2}}, []seg{{decode: 2}})
		p.room.held = -1 // a refusal holds back the rest of the iteration; ask afresh
		if !p.Admit(v, small, 32) {
			t.Errorf("%s (%s): refused a call whose peak fits in the free blocks", tc.name, tc.mode)
		}
	}
}

// peakTime counts a waiting call's prefill chunks and its decode
// iterations, and no prefill for a swapped call.
func TestPeakTime(t *testing.T) {
	cfg := testConfig()
	h := newHarness(t, NewPitstop(Options{}), cfg)
	s := h.submit("N", "pn", "main", 70, []seg{{decode: 5}}, nil)
	vv := h.e.View()
	v := &vv
	c := v.Cost
	want := 2*c.IterTime(32) + c.IterTime(6) + 5*c.IterTime(v.Running+1)
	if got := peakTime(v, s, 5, 32); got < want*0.999 || got > want*1.001 {
		t.Errorf("peakTime %.6f s, want %.6f (3 chunks of a 70-token prefill, 5 decode iterations)", got, want)
	}
}
