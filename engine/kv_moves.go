package engine

import "github.com/pitstop-llm/pitstop/kvswap"

// matchPrefix gives a waiting call the cached blocks of its longest cached
// prefix, leaving at least one token to compute so it samples, and its kept
// tail when they are all there (kept_tail.go).
func (e *Engine) matchPrefix(s *Sequence) {
	if !e.blocks.PrefixCache() || len(s.blocks) > 0 {
		return
	}
	bs := e.cfg.BlockSize
	hashes := s.blockHashes(bs)
	usable := min(len(hashes), (len(s.tokens)-1)/bs)
	e.unguard(s)
	s.blocks = e.blocks.MatchPrefix(hashes[:usable])
	s.computed = len(s.blocks) * bs
	s.committed = len(s.blocks)
	e.takeTail(s)
}

// commitBlocks registers newly full, computed blocks in the prefix cache.
func (e *Engine) commitBlocks(s *Sequence) {
	if !e.blocks.PrefixCache() {
		return
	}
	full := s.computed / e.cfg.BlockSize
	if full <= s.committed {
		return
	}
	hashes := s.blockHashes(e.cfg.BlockSize)
	for j := s.committed; j < full; j++ {
		e.blocks.Commit(s.blocks[j], hashes[j])
	}
	s.committed = full
}

// swapOut moves a call's device blocks to the host tier. It reports false,
// changing nothing, when this iteration's swap budget is spent; when the host
// tier has no room, even after the parked calls the policy ranks after s
// give way (HostRanker), the call is discarded instead (a swap never fails a
// call; the refusal is counted by site).
func (e *Engine) swapOut(s *Sequence, site SwapSite) bool {
	n := len(s.blocks)
	if lim := e.swapBudget.Limit(); n == 0 || (lim > 0 && n > lim) {
		e.discard(s) // nothing to move, or more than one iteration may ever move
		return true
	}
	slots, ok := e.host.Alloc(n)
	if !ok {
		if e.swapBudget.Left() < n || !e.makeHostRoom(s, n) {
			e.refuseSwap(site, n)
			e.discard(s)
			return true
		}
		slots, _ = e.host.Alloc(n)
	}
	if !e.swapBudget.Take(n) {
		e.host.Free(slots)
		return false
	}
	for j, b := range s.blocks {
		e.batch.SwapOut = append(e.batch.SwapOut, kvswap.Move{Device: int(b), Host: slots[j]})
	}
	e.blocks.Release(s.blocks)
	s.blocks, s.host, s.place = nil, slots, OnHost
	s.committed = 0
	s.hostIter = e.iter
	e.addOnHost(s)
	e.stats.SwapOutBlocks += n
	return true
}

// swapIn brings a swapped call's blocks back. Blocks whose prefix is still
// cached on the device are reused without a copy. It reports false when the
// blocks or the swap budget are not available.
func (e *Engine) swapIn(s *Sequence) bool {
	bs := e.cfg.BlockSize
	hashes := s.blockHashes(bs)
	fullComputed := min(len(hashes), s.computed/bs)
	count := func() (copies, need int) { // blocks to copy; free blocks consumed (copies + unused cached hits)
		for j := range s.host {
			if j >= fullComputed {
				copies++
			} else if id, hit := e.blocks.Lookup(hashes[j]); !hit {
				copies++
			} else if e.blocks.Unused(id) {
				need++
			}
		}
		return copies, need + copies
	}
	copies, need := count()
	for !e.blocks.CanGrow(need, 0) {
		if !e.evictFor(need, 0, s) {
			return false
		}
		// Evicting a call that shared a cached hit leaves that block unused
		// in the cache, where taking it costs a free block: count again.
		copies, need = count()
	}
	if !e.swapBudget.Take(copies) {
		return false
	}
	// Take every cached hit before allocating, so no allocation evicts a
	// block that is about to be hit.
	table := make([]int32, len(s.host), len(s.host)+1)
	for j := range s.host {
		table[j] = -1
		if j < fullComputed {
			if id, hit := e.blocks.Lookup(hashes[j]); hit {
				e.blocks.Acquire(id)
				table[j] = id
			}
		}
	}
	for j, slot := range s.host {
		if table[j] < 0 {
			table[j] = e.blocks.Allocate()
			e.batch.SwapIn = append(e.batch.SwapIn, kvswap.Move{Device: int(table[j]), Host: slot})
		}
	}
	e.stats.SwapInBlocks += copies
	// The slots are read by this iteration's swap-ins, which run after its
	// swap-outs: free them only after the step, so no swap-out reuses them.
	e.hostAfterStep = append(e.hostAfterStep, s.host...)
	s.host = nil
	e.removeOnHost(s)
	s.blocks, s.place = table, OnDevice
	e.setState(s, Running)
	s.committed = 0
	e.commitBlocks(s)
	return true
}

// discard drops a call's KV; it will be recomputed from its tokens, but
// for the blocks the prefix cache still holds when it is re-admitted (its
// partial last block among them: keepTail).
func (e *Engine) discard(s *Sequence) {
	e.guard(s)
	e.keepTail(s)
	e.dropKV(s)
}

// dropKV frees everything a call's KV holds, on the device and the host.
func (e *Engine) dropKV(s *Sequence) { e.dropKVAs(s, RetainLRU) }

// dropKVAs is dropKV with the policy's hint for the freed device blocks.
func (e *Engine) dropKVAs(s *Sequence, r Retention) {
	e.blocks.ReleaseAs(s.blocks, r)
	s.blocks = nil
	e.releaseHost(s)
	s.computed, s.committed, s.place = 0, 0, Dropped
}

// releaseHost frees host slots of a call whose KV is dropped.
func (e *Engine) releaseHost(s *Sequence) {
	if len(s.host) > 0 {
		e.host.Free(s.host)
		s.host = nil
		e.removeOnHost(s)
	}
}
