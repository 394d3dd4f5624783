package policy

import (
	"strings"
	"testing"
	"time"

	"github.com/pitstop-llm/pitstop/engine"
	"github.com/pitstop-llm/pitstop/handling"
)

// A call paused on a tool with its KV preserved, a host tier too small to
// take it, and a new call whose context needs the paused call's blocks:
// without the rule the new call is admitted and, as its prefill grows, the
// paused call's swap-out is refused and its context discarded and
// recomputed; with --pitstop-hostroom admit the new call waits for the
// paused call to finish, nothing is discarded, and no block leaks.
func TestHostRoomAdmitKeepsSwapOutsFromBecomingDiscards(t *testing.T) {
	for _, mode := range []string{"off", "admit"} {
		o := Options{PitstopHostRoom: mode, NoDynamicHandling: true}
		if err := o.Validate(); err != nil {
			t.Fatal(err)
		}
		cfg := testConfig()
		cfg.NumBlocks, cfg.HostBlocks = 32, 2
		h := newHarness(t, NewPitstop(o), cfg)
		// R runs throughout (12 blocks at its end), so the batch is never
		// empty; P pauses holding 10 blocks, its tool predicted short (so
		// it is preserved) but taking 0.3 s; N arrives at 0.1 s with a
		// context of 18 blocks, one more than is free.
		h.submit("R", "pr", "main", 8, []seg{{decode: 40}}, nil)
		h.submit("P", "pp", "main", 36, []seg{{decode: 2, tool: 0.3, ret: 2}, {decode: 2}}, []seg{{decode: 2, tool: 0.005, ret: 2}, {decode: 2}})
		h.e.At(100*time.Millisecond, func() { h.submit("N", "pn", "main", 72, []seg{{decode: 2}}, nil) })
		var recompute int
		var refused [engine.NumSwapSites]int
		h.run(func(ev *engine.Event) bool {
			if it := ev.Iter; ev.Kind == engine.EvIteration && it != nil {
				recompute += it.RecomputeTokens
				for i, n := range it.RefusedSwaps {
					refused[i] += n
				}
			}
			return false
		})
		if n := h.e.Leaked(); n != 0 || h.e.Live() != 0 || h.e.Host().Used() != 0 {
			t.Fatalf("%s: %d blocks leaked, %d calls unfinished, %d host slots held", mode, n, h.e.Live(), h.e.Host().Used())
		}
		if got := h.paused["P"]; len(got) != 1 || got[0] != handling.Preserve {
			t.Fatalf("%s: P handled %v at its tool call, want preserve (the scene is wrong)", mode, got)
		}
		switch mode {
		case "off":
			if refused[engine.SwapAtEviction] == 0 || recompute == 0 {
				t.Errorf("off: %v refused swap-outs, %d tokens recomputed; want P's swap-out refused and its context recomputed", refused, recompute)
			}
		case "admit":
			if refused != [engine.NumSwapSites]int{} || recompute != 0 {
				t.Errorf("admit: %v refused swap-outs, %d tokens recomputed; want none", refused, recompute)
			}
			if h.done["N"] < h.done["P"] {
				t.Errorf("admit: N finished at %v before P at %v; want N to wait for P's room", h.done["N"], h.done["P"])
			}
		}
	}
}

// With no call paused on the device the rule changes nothing: a call that
// does not fit is not refused (the engine's admission holds it as before).
func TestHostRoomAdmitWithoutPausedCalls(t *testing.T) {
	p := NewPitstop(Options{PitstopHostRoom: "admit"})
	cfg := testConfig()
	cfg.NumBlocks = 8
	h := newHarness(t, p, cfg)
	h.submit("a", "pa", "main", 20, []seg{{decode: 20}}, nil) // 5 blocks, running
	h.run(untilIteration(1))
	s := h.submit("big", "pb", "main", 28, []seg{{decode: 2}}, nil) // 7 blocks, 3 free
	v := h.e.View()
	if v.FreeNow() >= 7 {
		t.Fatalf("%d blocks free; the scene wants fewer than the 7 the call needs", v.FreeNow())
	}
	if !p.Admit(&v, s, 32) {
		t.Error("refused a call with no paused call to evict")
	}
}

func TestHostRoomRejectsUnknownRule(t *testing.T) {
	err := Options{PitstopHostRoom: "always"}.Validate()
	if err == nil || !strings.Contains(err.Error(), "valid: off, admit, victim") {
		t.Fatalf("error %v, want one naming the valid rules", err)
	}
}

// Two paused calls, the host tier with room for the smaller only, and a
// new call that needs one of them gone: the engine's choice (the most tool
// time left, here a tie: the first paused) evicts the large one and its
// swap-out is refused; the victim rule swaps the small one instead.
func TestHostRoomVictimSwapsWhatTheHostCanTake(t *testing.T) {
	for _, mode := range []string{"off", "victim"} {
		cfg := testConfig()
		cfg.NumBlocks, cfg.HostBlocks = 20, 4
		h := newHarness(t, NewPitstop(Options{PitstopHostRoom: mode, NoDynamicHandling: true}), cfg)
		short := func(decode int) []seg { return []seg{{decode: decode, tool: 0.005, ret: 2}, {decode: 2}} }
		h.submit("A", "pa", "main", 36, []seg{{decode: 2, tool: 0.5, ret: 2}, {decode: 2}}, short(2)) // 10 blocks, pauses first
		h.submit("B", "pb", "main", 8, []seg{{decode: 6, tool: 0.5, ret: 2}, {decode: 2}}, short(6))  // 4 blocks
		h.e.At(100*time.Millisecond, func() { h.submit("N", "pn", "main", 32, []seg{{decode: 2}}, nil) })
		var refused [engine.NumSwapSites]int
		h.run(func(ev *engine.Event) bool {
			if it := ev.Iter; ev.Kind == engine.EvIteration && it != nil {
				for i, n := range it.RefusedSwaps {
					refused[i] += n
				}
			}
			return false
		})
		if n := h.e.Leaked(); n != 0 || h.e.Live() != 0 {
			t.Fatalf("%s: %d blocks leaked, %d calls unfinished", mode, n, h.e.Live())
		}
		if h.paused["A"][0] != handling.Preserve || h.paused["B"][0] != handling.Preserve {
			t.Fatalf("%s: A handled %v, B %v at their tool calls, want preserve (the scene is wrong)", mode, h.paused["A"], h.paused["B"])
		}
		switch {
		case mode == "off" && (refused[engine.SwapAtEviction] != 1 || len(h.later["A"]) == 0 || h.later["A"][0] != handling.Discard):
			t.Errorf("off: refused %v, A later %v; want A evicted and its swap-out refused", refused, h.later["A"])
		case mode == "victim" && (refused != [engine.NumSwapSites]int{} || len(h.later["B"]) == 0 || h.later["B"][0] != handling.Swap || len(h.later["A"]) != 0):
			t.Errorf("victim: refused %v, A later %v, B later %v; want B swapped and A kept", refused, h.later["A"], h.later["B"])
		}
	}
}
