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
// discard). The first waiting or swapped call that does not fit stops further
// admissions this iteration, so lower-ranked calls cannot overtake it. A
// Shaper policy may lower the token budget and refuse calls (see Shaper).
func (e *Engine) buildBatch() {
	if e.shaper == nil {
		e.fillBatch(nil, e.cfg.MaxBatchedTokens, e.cfg.MaxSeqs)
		return
	}
	budget := e.cfg.MaxBatchedTokens
	if lim := e.shaper.Shape(&e.view); lim.Tokens > 0 && lim.Tokens < budget {
		budget = lim.Tokens
	}
	if refused := e.fillBatch(e.shaper, budget, e.cfg.MaxSeqs); refused && len(e.batch.Items) == 0 {
		// Refusals left nothing to run: run the one call the engine alone
		// would run first.
		e.fillBatch(nil, e.cfg.MaxBatchedTokens, 1)
	}
}

// fillBatch adds up to maxSeqs calls to the batch in rank order within
// budget tokens, asking sh (when not nil) before each; it reports whether sh
// refused one.
func (e *Engine) fillBatch(sh Shaper, budget, maxSeqs int) (refused bool) {
	admit := true
	for i := 0; i < len(e.queue.entries) && budget > 0 && len(e.batch.Items) < maxSeqs; i++ {
		ent := &e.queue.entries[i]
		s := ent.s
		if !e.queue.valid(ent) || s.lastEvicted == e.iter || !s.Runnable() {
			continue
		}
		if s.state != Running && !admit {
			continue
		}
		if sh != nil && !sh.Admit(&e.view, s, budget) {
			refused = true
			continue
		}
		switch s.state {
		case Swapped:
			if !e.swapIn(s) {
				admit = false
				continue
			}
		case Waiting:
			e.matchPrefix(s)
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
				admit = false
				continue
			}
			e.cannotGrow(s)
			continue
		}
		e.blocks.Grow(&s.blocks, s.computed+n)
		e.setState(s, Running)
		s.place = OnDevice
		s.lastRun = e.iter
		e.batch.Items = append(e.batch.Items, BatchItem{Seq: s, Start: s.computed, Len: n, Sample: s.computed+n == len(s.tokens)})
		budget -= n
	}
	return refused
}

// cannotGrow handles a running call that found no block even after evicting
// everything ranked below it: it is preempted itself (vLLM), unless nothing
// else holds device memory, in which case its context can never fit.
func (e *Engine) cannotGrow(s *Sequence) {
	if e.blocks.UsedBlocks() == len(s.blocks) {
		e.finish(s, fmt.Errorf("context of %d tokens exceeds the device KV capacity of %d tokens", len(s.tokens), e.cfg.NumBlocks*e.cfg.BlockSize))
		return
	}
	e.preempt(s)
}

// evictFor frees blocks until need more fit above reserve: first paused calls'
// KV (longest remaining tool time first), then running calls ranked below s,
// from the lowest.
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

func (e *Engine) pausedVictim() *Sequence {
	var best *Sequence
	bestLeft := -1.0
	for _, p := range e.paused {
		if p.state != Paused || p.place != OnDevice || len(p.blocks) == 0 {
			continue
		}
		if left := e.view.ToolRemaining(p); left > bestLeft {
			best, bestLeft = p, left
		}
	}
	return best
}

// runningVictim is the lowest-ranked running call below s that has not run
// in this iteration's batch yet.
func (e *Engine) runningVictim(s *Sequence) *Sequence {
	self := rankEntry{p: s.prio, id: s.id}
	var worst *Sequence
	var worstE rankEntry
	for _, v := range e.active {
		if v == s || v.lastRun == e.iter || v.lastEvicted == e.iter || len(v.blocks) == 0 {
			continue
		}
		ve := rankEntry{p: v.prio, id: v.id}
		if compareEntries(&self, &ve) >= 0 {
			continue
		}
		if worst == nil || compareEntries(&ve, &worstE) > 0 {
			worst, worstE = v, ve
		}
	}
	return worst
}

// evictPaused moves a paused call's KV off the device: swapped when the host
// tier and swap budget allow, discarded otherwise.
func (e *Engine) evictPaused(s *Sequence) {
	kind := handling.Swap
	if !e.swapOut(s) {
		kind = handling.Discard
		e.discard(s)
	} else if s.place == Dropped {
		kind = handling.Discard
	}
	s.pendingOut = false
	s.handling = kind
	e.emit(Event{Kind: EvHandled, Seq: s, Handling: kind})
}

// preempt evicts a running call: swapped if the policy prefers it and room
// allows, recomputed later otherwise.
func (e *Engine) preempt(s *Sequence) {
	kind := handling.Discard
	if ev, ok := e.policy.(Evicter); ok {
		kind = ev.Evict(&e.view, s)
	}
	if kind == handling.Swap && e.swapOut(s) && s.place == OnHost {
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
