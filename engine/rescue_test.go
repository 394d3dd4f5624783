package engine

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/pitstop-llm/pitstop/handling"
)

// randomHandling decides every handling, eviction and re-check at random:
// every path by which KV leaves the device (discard at the tool and at the
// re-check, swap, eviction of paused calls, preemption by swap and by
// recompute) meets the kept tails and the rescue in one run.
type randomHandling struct {
	testPolicy
	r *rand.Rand
}

func (p *randomHandling) Handle(*View, *Sequence) handling.Kind {
	return handling.Kind(p.r.IntN(int(handling.NumKinds)))
}
func (p *randomHandling) Evict(*View, *Sequence) handling.Kind       { return p.swapOrDiscard() }
func (p *randomHandling) EvictPaused(*View, *Sequence) handling.Kind { return p.swapOrDiscard() }

func (p *randomHandling) swapOrDiscard() handling.Kind {
	if p.r.IntN(2) == 0 {
		return handling.Swap
	}
	return handling.Discard
}

// TestRandomHandlingWithTailsAndRescues: six calls sharing a prompt prefix
// under random handling, with the prefix cache, in device pools and host
// tiers from tight to ample: every iteration passes Check (runEngine), no
// block or host slot is left held, and every call ends with the context it
// has when nothing ever leaves the device.
func TestRandomHandlingWithTailsAndRescues(t *testing.T) {
	ps := make([][]int32, 6)
	for i := range ps {
		ps[i] = append([]int32{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, int32(100*i+1), int32(100*i+2), int32(100*i+3))
	}
	decode := []int{7, 5, 6, 3}
	want := runEngine(t, baseConfig(), testPolicy{kind: handling.Preserve}, ps, decode).done
	var tails TailStats
	rescued := 0
	for seed := range uint64(24) {
		cfg := baseConfig()
		cfg.NumBlocks = []int{14, 18, 24, 40}[seed%4]
		cfg.HostBlocks = []int{0, 6, 64}[seed%3]
		cfg.SwapBlocksPerIter = []int{0, 6}[seed/12]
		p := &randomHandling{testPolicy: testPolicy{traits: Traits{PrefixCache: true}}, r: rand.New(rand.NewPCG(seed, 3))}
		var e *Engine
		res := runEngine(t, cfg, p, ps, decode, func(en *Engine, ev *Event) {
			e = en
			if ev.Kind == EvIteration {
				rescued += ev.Iter.Rescued
			}
		})
		for id, toks := range want {
			if !slices.Equal(res.done[id], toks) {
				t.Fatalf("seed %d (%d blocks, host %d): call %d ended with another context", seed, cfg.NumBlocks, cfg.HostBlocks, id)
			}
		}
		st := e.Blocks().Tails()
		tails.Kept += st.Kept
		tails.Reused += st.Reused
	}
	if tails.Reused == 0 || rescued == 0 {
		t.Fatalf("over all seeds %d tails taken back and %d contexts rescued: the paths under test did not run", tails.Reused, rescued)
	}
	t.Logf("tails %+v, %d rescues", tails, rescued)
}
