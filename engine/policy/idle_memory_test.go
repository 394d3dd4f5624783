package policy

import (
	"testing"

	"github.com/pitstop-llm/pitstop/engine"
	"github.com/pitstop-llm/pitstop/handling"
)

// A short context paused on a tool with nothing else in the engine:
// InferCept's wastes ("waste", the default) discard it (holding it for the
// tool costs more token-seconds than its recompute), and "idle" preserves
// it, since no call could use its blocks; it resumes without recomputing.
// "idle-lost" preserves it only when the free blocks (2,048 tokens, taken at
// 32 a 10 ms iteration at most: 0.64 s) are more likely than not consumed
// before the tool (exponential, of the predicted mean) returns: on a 5 s
// tool, not on a 0.1 s one.
func TestIdleMemoryPreservesWhenNothingWaits(t *testing.T) {
	for _, tc := range []struct {
		mode string
		tool float64
		want handling.Kind
	}{
		{"waste", 5, handling.Discard},
		{"idle", 5, handling.Preserve},
		{"idle", 0.1, handling.Preserve},
		{"idle-lost", 5, handling.Preserve},
		{"idle-lost", 0.1, handling.Discard},
	} {
		h := newHarness(t, NewPitstop(Options{PitstopHandling: tc.mode}), testConfig())
		h.submit("P", "pp", "main", 8, []seg{{decode: 2, tool: tc.tool, ret: 2}, {decode: 2}}, nil)
		h.run(nil)
		got := h.paused["P"]
		if len(got) != 1 || got[0] != tc.want {
			t.Errorf("%s, %g s tool: P handled %v at its tool call, want %v", tc.mode, tc.tool, got, tc.want)
		}
		if tc.want == handling.Preserve && len(h.later["P"]) != 0 {
			t.Errorf("idle: P's handling changed while it waited (%v) with nothing else in the engine", h.later["P"])
		}
	}
}

// A preserved call holds blocks that a new call needs: the new call is
// admitted, and once its prefill leaves fewer free blocks than the batch's
// growth memory is no longer idle, the preserved call is priced as the
// default prices it (a discard of a short context on a long tool) and
// gives its blocks back; everything drains without a leak.
func TestIdleMemoryGivesWayWhenMemoryIsShort(t *testing.T) {
	cfg := testConfig()
	cfg.NumBlocks = 40
	p := NewPitstop(Options{PitstopHandling: "idle"})
	h := newHarness(t, p, cfg)
	h.submit("P", "pp", "main", 60, []seg{{decode: 2, tool: 5, ret: 2}, {decode: 2}}, nil)
	h.run(func(ev *engine.Event) bool { return ev.Kind == engine.EvPaused })
	if got := h.paused["P"]; len(got) != 1 || got[0] != handling.Preserve {
		t.Fatalf("P handled %v at its tool call, want preserve (memory idle)", got)
	}
	h.submit("N", "pn", "main", 100, []seg{{decode: 4}}, nil)
	h.run(nil)
	if _, ok := h.done["N"]; !ok {
		t.Fatal("N never finished")
	}
	if len(h.later["P"]) == 0 || h.later["P"][0] == handling.Preserve {
		t.Errorf("P's handling while N needed its blocks: %v, want a swap or a discard", h.later["P"])
	}
}

// idle: short in this iteration or the last is not idle; idle after, when
// the free blocks cover a token budget of prefill and a block per running
// call; "waste" is never idle.
func TestIdleMemoryWindow(t *testing.T) {
	cfg := testConfig() // budget 32 tokens, 4-token blocks: growth 8 blocks + running
	h := newHarness(t, NewPitstop(Options{}), cfg)
	m, _ := newIdleMemory("idle")
	v := h.view(0, 10)
	v.Running = 2
	if !m.idle(v) {
		t.Fatalf("idle with %d free blocks and memory never short: want true", v.FreeBlocks)
	}
	m.wanted(v)
	for it, want := range map[int64]bool{10: false, 11: false, 12: true} {
		v.Iteration = it
		if got := m.idle(v); got != want {
			t.Errorf("short at 10, idle at %d: %v, want %v", it, got, want)
		}
	}
	v.Iteration = 20
	v.FreeBlocks = 8 + 2 - 1
	if m.idle(v) {
		t.Error("idle with one block fewer than a budget of prefill and a block per running call")
	}
	v.FreeBlocks = 10
	if !m.idle(v) {
		t.Error("not idle with exactly a budget of prefill and a block per running call free")
	}
	p := NewPitstop(Options{PitstopHandling: "idle"})
	if !p.HoldBack(v, nil) || p.memory.short != 20 {
		t.Errorf("HoldBack at iteration 20: held back / recorded %d, want true / 20", p.memory.short)
	}
	w, _ := newIdleMemory("")
	if w.idle(v) {
		t.Error("the default (waste) is idle")
	}
	if _, err := newIdleMemory("bogus"); err == nil {
		t.Error("bogus handling accepted")
	}
}
