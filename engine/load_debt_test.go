package engine

import (
	"context"
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

// TestReloadIsNotPreemptedByAdmissions: one long call and a stream of short
// ones that the least-service order always puts first. The long call is
// preempted to make room for them (its first stay is fresh work, so it has
// no protection yet), and from then on each time it comes back it first
// rebuilds its context. Without the load rules the short calls admitted
// after it preempt it again while it is still recomputing (37 of its 39
// preemptions), or it is preempted when it cannot grow because they took
// this iteration's blocks; with them no stay of the long call ends before
// its new work has caught up with its recomputation (device time, split by
// tokens), and every iteration passes Check.
func TestReloadIsNotPreemptedByAdmissions(t *testing.T) {
	cfg := Config{NumBlocks: 40, BlockSize: 4, MaxBatchedTokens: 16, MaxSeqs: 8}
	x := &fixedExec{}
	r := &toolRunner{scr: map[SeqID]*script{}, done: map[SeqID][]int32{}, events: map[EventKind]int{}}
	e, err := New(cfg, NewVirtualClock(), x, leastService{}, r)
	if err != nil {
		t.Fatal(err)
	}
	r.e = e
	long, err := e.SubmitNow(Request{Prompt: prompts(1, 120)[0], Controller: &script{decode: []int{30}}})
	if err != nil {
		t.Fatal(err)
	}
	const shorts = 40
	const gapMS = 80
	for i := range shorts {
		e.At(time.Duration(20+gapMS*i)*time.Millisecond, func() {
			p := prompts(i+2, 60)[i+1]
			if _, err := e.SubmitNow(Request{Prompt: p, Controller: &script{decode: []int{3}}}); err != nil {
				e.Stop(err)
			}
		})
	}
	// The long call's recomputed tokens, preemptions, and per stay on the
	// device its share of the iterations' time (by tokens) recomputing and
	// on new tokens.
	recomputed, preempted, unpaid, hw := 0, 0, 0, 0
	var stayRe, stayFresh time.Duration
	r.watch = append(r.watch, func(e *Engine, ev *Event) {
		switch ev.Kind {
		case EvPreempted:
			if ev.Seq != long {
				return
			}
			preempted++
			if stayRe > stayFresh {
				unpaid++
			}
			stayRe, stayFresh = 0, 0
		case EvIteration:
			batched := 0
			for _, it := range e.batch.Items {
				batched += it.Len
			}
			for _, it := range e.batch.Items {
				if it.Seq != long {
					continue
				}
				re := max(0, min(it.Start+it.Len, hw)-it.Start)
				recomputed += re
				hw = max(hw, it.Start+it.Len)
				share := ev.Iter.Duration * time.Duration(it.Len) / time.Duration(batched)
				stayRe += share * time.Duration(re) / time.Duration(it.Len)
				stayFresh += share - share*time.Duration(re)/time.Duration(it.Len)
			}
		}
	})
	if err := e.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(r.done) != shorts+1 {
		t.Fatalf("%d of %d calls finished", len(r.done), shorts+1)
	}
	if preempted == 0 {
		t.Fatal("the long call was never preempted: the scene does not put the load rule to work")
	}
	if unpaid > 0 {
		t.Fatalf("the long call was preempted %d times, %d of them before its new work caught up with its recomputation (%d tokens recomputed)", preempted, unpaid, recomputed)
	}
	t.Logf("long call preempted %d times, %d tokens recomputed", preempted, recomputed)
}
