package engine

import (
	"testing"
	"time"

	"github.com/pitstop-llm/pitstop/handling"
)

// A paused call evicted for room is swapped while the host tier has room
// for it; with the tier too small its swap-out is refused, counted at the
// eviction site with the blocks it lost, and its KV discarded.
func TestRefusedSwapsCountedBySite(t *testing.T) {
	plans := []plan{
		{prompt: 14, before: 2, expect: 5, tool: 5, after: 2}, // 4 blocks, paused long: the victim
		{prompt: 14, before: 2, expect: 1, tool: 5, after: 2}, // 4 blocks, paused
		{prompt: 14, after: 2, at: 500 * time.Millisecond},    // takes the 4 free blocks
		{prompt: 14, after: 2, at: 500 * time.Millisecond},    // needs a paused call's 4
	}
	for _, c := range []struct {
		host    int
		refused int
		kind    handling.Kind
	}{{host: 64, refused: 0, kind: handling.Swap}, {host: 2, refused: 1, kind: handling.Discard}} {
		cfg := baseConfig()
		cfg.NumBlocks, cfg.HostBlocks = 12, c.host
		r := runHooks(t, cfg, &hookPolicy{handle: handling.Preserve}, plans)
		if got := r.handled[0]; len(got) != 2 || got[1] != c.kind {
			t.Errorf("host %d: the victim was handled %v, want preserve then %v", c.host, got, c.kind)
		}
		want := [NumSwapSites]int{SwapAtEviction: c.refused}
		if r.refused != want {
			t.Errorf("host %d: refused swap-outs %v, want %v", c.host, r.refused, want)
		}
		if c.refused > 0 && r.refusedB[SwapAtEviction] < 4 {
			t.Errorf("host %d: refused %d blocks, want the victim's 4 or more", c.host, r.refusedB[SwapAtEviction])
		}
	}
}

// HostRunnable counts the host blocks of calls back from their tools and
// waiting for their swap-in.
func TestHostRunnableCountsCallsWaitingForSwapIn(t *testing.T) {
	cfg := baseConfig()
	cfg.NumBlocks = 16
	plans := []plan{
		{prompt: 14, before: 2, expect: 0.2, tool: 0.2, after: 2}, // swapped, back while the device is full
		{prompt: 40, after: 24, at: 50 * time.Millisecond},        // grows to all 16 blocks until about 0.31 s
	}
	r := runHooks(t, cfg, &hookPolicy{handle: handling.Swap}, plans)
	if !r.onHost[0] {
		t.Fatal("the first call's KV was not on the host when its tool returned; the scene is wrong")
	}
	if r.hostRun < 4 {
		t.Errorf("most host blocks held by runnable calls %d, want the returned call's 4 or more", r.hostRun)
	}
	if r.refused != [NumSwapSites]int{} {
		t.Errorf("refused swap-outs %v with room on the host", r.refused)
	}
}
