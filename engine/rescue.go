package engine

import "github.com/pitstop-llm/pitstop/handling"

// A call discarded at its tool leaves its blocks in the prefix cache, and
// the handling prices that discard by the chance that they are evicted
// before the call is re-admitted (handling.ChooseCached). When a tool runs
// far longer than predicted (coding tools have heavy tails), the whole
// context is evicted and recomputed: the one recompute left on the coding
// and fanout workloads once the partial last block is kept (kept_tail.go).
//
// The engine rescues such a context instead: when an allocation is about to
// evict a cached block of a call that was discarded while paused and has
// not been re-admitted (paused, or back from its tool and waiting), it takes
// the call's cached blocks back as a re-admission would (matchPrefix: the
// full blocks that survive, then the tail) and swaps them out to the host
// tier, in the same iteration, before the allocation reuses the block (an
// executor carries out a batch's swap-outs before anything writes the
// device). The call is then parked on the host like a swapped call, and its
// released blocks stay cached on the device, so its swap-in copies only what
// is evicted meanwhile. A discard thus costs a swap only for the contexts
// that would otherwise be lost, only where the swap costs less than the
// recompute (swapCheaper), and only while the host tier and the iteration's
// swap budget have room without displacing anything: the rescue never
// evicts parked KV (makeHostRoom) and never fails a call.
//
// guardOf[b] is the discarded call whose context block b held when the call
// released it (nil: none); a call's entries are dropped when it is
// re-admitted, rescued or finished, and one entry when its block is evicted
// without a rescue.

// guard records the blocks of a paused call about to be discarded.
func (e *Engine) guard(s *Sequence) {
	if !e.blocks.PrefixCache() || s.state != Paused || len(s.blocks) == 0 {
		return
	}
	e.unguard(s)
	for _, b := range s.blocks {
		e.guardOf[b] = s
	}
	s.guarded = append(s.guarded, s.blocks...)
}

// unguard drops s's entries.
func (e *Engine) unguard(s *Sequence) {
	for _, b := range s.guarded {
		if e.guardOf[b] == s {
			e.guardOf[b] = nil
		}
	}
	s.guarded = s.guarded[:0]
}

// swapCheaper reports whether swapping a context of n tokens out and back
// in wastes no more than recomputing it, by the engine's cost model with the
// running calls as they stand (handling.Choose between swap and discard):
// where recomputing is cheaper (short contexts, a slow host link) a rescue
// would only take host room and link time from the policy's own swaps.
func (e *Engine) swapCheaper(n int) bool {
	sit := handling.Situation{Context: n, OtherRunning: e.view.RunningCtx, RunningTokens: e.view.Running}
	k, _ := handling.Choose(sit, e.cfg.Cost, handling.Swap, handling.Discard)
	return k == handling.Swap
}

// rescue is the block manager's hook before it evicts cached block id: it
// swaps out the context of the discarded call that block belongs to, if
// there is one and room for it, and reports whether it did (the free queue
// changed: the block manager looks at its head again).
func (e *Engine) rescue(id int32) bool {
	s := e.guardOf[id]
	if s == nil {
		return false
	}
	e.guardOf[id] = nil // this block is lost unless rescued now
	if s.place != Dropped || len(s.blocks) > 0 || (s.state != Paused && s.state != Waiting) {
		e.unguard(s)
		return false
	}
	full := e.cachedFull(s)
	tail := e.cachedTail(s, full)
	n := full/e.cfg.BlockSize + min(tail, 1)
	if n == 0 || e.host.Available() < n || e.swapBudget.Left() < n || !e.swapCheaper(full+tail) {
		return false
	}
	e.unguard(s)
	e.matchPrefix(s)
	if len(s.blocks) == 0 {
		return false
	}
	if !e.swapOut(s, SwapAtRescue) {
		e.discard(s) // not reached: the budget was checked
	}
	if s.place != OnHost {
		// Not reached: room and budget were checked. No second try, or the
		// call's blocks would cycle through the free queue.
		e.unguard(s)
		return true
	}
	e.stats.Rescued++
	if s.state == Waiting {
		e.setState(s, Swapped)
		e.markDirty(s)
	} else {
		s.handling = handling.Swap
		e.emit(Event{Kind: EvHandled, Seq: s, Handling: handling.Swap})
	}
	return true
}
