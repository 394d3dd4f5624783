package engine

import (
	"fmt"

	"github.com/pitstop-llm/pitstop/handling"
)

// buildBatch walks the runnable calls in the policy's order and admits what
// the token budget, the sequence cap, free blocks and the swap budget allow.
// A running call that needs a block may evict paused calls' KV and
// lower-ranked running calls; a waiting call may do so only when the policy
// is preemptive (otherwise it evicts only paused calls, InferCept's passive
// discard). A waiting or swapped call that does not fit holds back the calls
// ranked after it when the policy's HoldBack says so. The policy may lower
// the token budget and refuse calls (Shaper).
func (e *Engine) buildBatch() {
	budget := e.cfg.MaxBatchedTokens
	lim := e.policy.Shape(&e.view)
	if lim.Tokens > 0 && lim.Tokens < budget {
		budget = lim.Tokens
	}
	if refused := e.fillBatch(true, lim.RefusalHolds, budget, e.cfg.MaxSeqs); refused && len(e.batch.Items) == 0 {
		// Refusals left nothing to run: run the one call the engine alone
		// would run first.
		e.fillBatch(false, false, e.cfg.MaxBatchedTokens, 1)
	}
}

// fillBatch adds up to maxSeqs calls to the batch in rank order within
// budget tokens, asking the policy's Admit before each when ask; it reports
// whether Admit refused one. Once no waiting or swapped call may join (a
// HoldBack, or a refusal that holds), only running calls are left to add:
// the walk ends at the last of them rather than at the queue's end (with
// 10,000 waiting calls behind a refusal, most of an iteration's own work).
func (e *Engine) fillBatch(ask, holds bool, budget, maxSeqs int) (refused bool) {
	admit := true
	running := len(e.active) // running calls not yet met; one preempted before its turn keeps the walk going
	for i := 0; i < len(e.queue.entries) && budget > 0 && len(e.batch.Items) < maxSeqs; i++ {
		if !admit && running == 0 && !e.wholeWalk {
			break
		}
		ent := &e.queue.entries[i]
		s := ent.s
		if !e.queue.valid(ent) || s.lastEvicted == e.iter || !s.Runnable() {
			continue
		}
		if s.state == Running {
			running--
		} else if !admit {
			continue
		}
		if ask && !e.policy.Admit(&e.view, s, budget) {
			refused = true
			if holds && s.state != Running && !e.wholeWalk {
				admit = false
			}
			continue
		}
		switch s.state {
		case Swapped:
			if !e.swapIn(s) {
				admit = !e.policy.HoldBack(&e.view, s)
				continue
			}
		case Waiting:
			e.matchPrefix(s)
			if !e.reloadFits(s) {
				e.discard(s) // gives back the prefix hits it took
				admit = !e.policy.HoldBack(&e.view, s)
				continue
			}
		}
		n := min(s.Remaining(), budget)
		need := e.blocks.BlocksFor(s.computed+n) - len(s.blocks)
		reserve := 0
		if s.state == Waiting {
			reserve = e.watermark
		}
		if !e.blocks.CanGrow(need, reserve) && !e.evictFor(need, reserve, s) {
			if s.state == Waiting {
				e.discard(s) // gives back the prefix hits it took
				admit = !e.policy.HoldBack(&e.view, s)
				continue
			}
			e.cannotGrow(s)
			continue
		}
		e.blocks.Grow(&s.blocks, s.computed+n)
		e.setState(s, Running)
		s.place = OnDevice
		s.lastRun = e.iter
		e.batch.Items = append(e.batch.Items, BatchItem{Seq: s, Start: s.computed, Len: n, Sample: s.computed+n == len(s.tokens), Sampling: s.req.Sampling})
		budget -= n
	}
	return refused
}

// cannotGrow handles a running call that found no block even after evicting
// everything ranked below it: it is preempted itself (vLLM), unless nothing
// else holds device memory, in which case its context can never fit.
func (e *Engine) cannotGrow(s *Sequence) {
	if s.loadUnpaid() && len(e.batch.Items) > 0 {
		return // keeps its KV for the next iteration: the batch makes progress without it (load_debt.go)
	}
	if e.blocks.UsedBlocks() == len(s.blocks) {
		e.finish(s, fmt.Errorf("context of %d tokens exceeds the device KV capacity of %d tokens", len(s.tokens), e.cfg.NumBlocks*e.cfg.BlockSize))
		return
	}
	e.preempt(s)
}

// evictFor frees blocks until need more fit above reserve: first paused
// calls' KV, then running calls ranked below s, each picked and handled by
// the policy (Victims).
func (e *Engine) evictFor(need, reserve int, s *Sequence) bool {
	mayPreempt := s.state == Running || e.traits.Preemptive
	for !e.blocks.CanGrow(need, reserve) {
		if v := e.pausedVictim(); v != nil {
			e.evictPaused(v)
			continue
		}
		if !mayPreempt {
			return false
		}
		v := e.runningVictim(s)
		if v == nil {
			return false
		}
		e.preempt(v)
	}
	return true
}

// pausedVictim asks the policy which paused call's device KV goes, among
// those holding device blocks; nil when there is none or it picks none.
func (e *Engine) pausedVictim() *Sequence {
	c := e.cands[:0]
	for _, p := range e.paused {
		if p.state == Paused && p.place == OnDevice && len(p.blocks) > 0 {
			c = append(c, p)
		}
	}
	e.cands = c
	if len(c) == 0 {
		return nil
	}
	v := e.policy.PausedVictim(&e.view, c)
	clear(c)
	if v == nil || v.state != Paused || v.place != OnDevice || len(v.blocks) == 0 {
		return nil // none, or not a candidate
	}
	return v
}

// runningVictim asks the policy which running call gives way to s, among
// those ranked below s that hold blocks and have not run in this
// iteration's batch; nil when there is none or it picks none.
func (e *Engine) runningVictim(s *Sequence) *Sequence {
	c := e.cands[:0]
	for _, v := range e.active {
		if e.preemptible(v, s) {
			c = append(c, v)
		}
	}
	e.cands = c
	if len(c) == 0 {
		return nil
	}
	v := e.policy.PreemptVictim(&e.view, s, c)
	clear(c)
	if v == nil || v.state != Running || !e.preemptible(v, s) {
		return nil // none, or not a candidate
	}
	return v
}

// preemptible reports whether running call v may be preempted for s. A call
// still paying for the recomputation of its own preempted KV yields only to
// calls running since before it was admitted (load_debt.go).
func (e *Engine) preemptible(v, s *Sequence) bool {
	return v != s && v.lastRun != e.iter && v.lastEvicted != e.iter && len(v.blocks) > 0 &&
		s.RanksBefore(v) && v.yieldsTo(s)
}

// evictPaused moves a paused call's KV off the device as the policy says:
// swapped when it asks for a swap and the host tier and swap budget allow,
// discarded otherwise.
func (e *Engine) evictPaused(s *Sequence) {
	s.lostBy = LostAtTool
	kind := handling.Discard
	if e.policy.EvictPaused(&e.view, s) == handling.Swap && e.swapOut(s, SwapAtEviction) && s.place == OnHost {
		kind = handling.Swap
	} else if s.place != Dropped {
		e.discard(s)
	}
	s.pendingOut = false
	s.handling = kind
	e.emit(Event{Kind: EvHandled, Seq: s, Handling: kind})
}

// preempt evicts a running call: swapped if the policy prefers it and room
// allows, recomputed later otherwise.
func (e *Engine) preempt(s *Sequence) {
	s.lostBy = LostPreempted
	kind := e.policy.Evict(&e.view, s)
	if kind == handling.Swap && e.swapOut(s, SwapAtPreemption) && s.place == OnHost {
		e.setState(s, Swapped)
	} else {
		kind = handling.Discard
		e.discard(s)
		e.setState(s, Waiting)
	}
	e.markDirty(s)
	s.preemptions++
	s.lastEvicted = e.iter
	e.stats.Preemptions++
	e.emit(Event{Kind: EvPreempted, Seq: s, Handling: kind})
}
