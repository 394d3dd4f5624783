package engine

import (
	"fmt"
	"testing"
	"time"
)

// leastService ranks the call with the least attained service first and
// preempts by recompute (no host tier): the order of attained-service
// policies (mlfq, plas, atlas) at its simplest, which turns over every
// iteration, since the call that runs gains service.
type leastService struct{ testPolicy }

func (leastService) Priority(_ *View, s *Sequence) Priority {
	return Priority{Key: s.Service().Seconds()}
}
func (leastService) Traits() Traits { return Traits{PrefixCache: true, Preemptive: true} }

// TestPreemptionLoopDrains: three calls whose contexts each take most of a
// small device, under an order that prefers whichever has run least. Without
// the load rules every admission preempts the call that is recomputing,
// which is then recomputed in turn, and no call ever reaches its first token
// (stopped at 5,000 iterations). With them every call finishes, every
// iteration passes Check (runEngine), and the engine spends no more device
// time recomputing than on new tokens.
func TestPreemptionLoopDrains(t *testing.T) {
	cfg := Config{NumBlocks: 40, BlockSize: 4, MaxBatchedTokens: 16, MaxSeqs: 8}
	const calls, prompt, decode, maxIters = 3, 100, 5, 5000
	iters, recomputed, computed, preemptions := 0, 0, 0, 0
	var reTime, freshTime time.Duration // device time, split by tokens
	res := runEngine(t, cfg, leastService{}, prompts(calls, prompt), []int{decode}, func(e *Engine, ev *Event) {
		if ev.Kind != EvIteration {
			return
		}
		iters++
		recomputed += ev.Iter.RecomputeTokens
		computed += ev.Iter.PrefillTokens + ev.Iter.DecodeTokens
		preemptions += ev.Iter.Preemptions
		if n := ev.Iter.PrefillTokens + ev.Iter.DecodeTokens; n > 0 {
			re := ev.Iter.Duration * time.Duration(ev.Iter.RecomputeTokens) / time.Duration(n)
			reTime += re
			freshTime += ev.Iter.Duration - re
		}
		if iters == maxIters {
			e.Stop(fmt.Errorf("calls still running after %d iterations: %d tokens recomputed, %d preemptions", iters, recomputed, preemptions))
		}
	})
	if len(res.done) != calls {
		t.Fatalf("%d of %d calls finished", len(res.done), calls)
	}
	fresh := computed - recomputed
	if fresh != calls*(prompt+decode-1) {
		t.Fatalf("%d tokens computed afresh, want %d", fresh, calls*(prompt+decode-1))
	}
	if preemptions == 0 {
		t.Fatal("no preemption: the scene does not put the load rule to work")
	}
	if reTime > freshTime {
		t.Fatalf("%v of device time recomputing for %v on new tokens (%d preemptions, %d iterations): the loop cost more than the work", reTime, freshTime, preemptions, iters)
	}
	t.Logf("%d iterations, %d preemptions, %d tokens recomputed for %d afresh, device time %v recomputing, %v afresh", iters, preemptions, recomputed, fresh, reTime, freshTime)
}
