package engine

// CachedPrefix is how many leading tokens of a waiting call's context the
// device prefix cache holds for it: what admitting it now would not compute
// again (full blocks, at most all tokens but the last, as matchPrefix takes
// them). 0 for a call that holds device blocks (its Computed counts them),
// without a prefix cache, or in a View made by hand.
//
// It bisects the call's chain of block hashes: O(log blocks) lookups (a
// policy asks it of every waiting call it re-ranks, and coding contexts run
// to thousands of blocks), no allocation once the call's hashes are known.
// Bisection is exact when the cached blocks of the chain are a prefix of
// it, which is how the cache loses them: a released table goes to the free
// queue tail first, so its last blocks are evicted first. A chain with a
// hole (a block evicted while a later one survived) is counted past the
// hole, by at most the blocks after it. A discarded call's kept tail counts
// when every full block before it is cached (kept_tail.go).
func (v *View) CachedPrefix(s *Sequence) int {
	if v.eng == nil || !v.eng.blocks.PrefixCache() || len(s.blocks) > 0 || s.state == Paused {
		return 0
	}
	full := v.eng.cachedFull(s)
	return full + v.eng.cachedTail(s, full)
}

// cachedFull is CachedPrefix's full blocks, by bisection.
func (e *Engine) cachedFull(s *Sequence) int {
	bs := e.cfg.BlockSize
	hashes := s.blockHashes(bs)
	hi := min(len(hashes), (len(s.tokens)-1)/bs)
	if hi == 0 {
		return 0
	}
	if _, ok := e.blocks.Lookup(hashes[0]); !ok {
		return 0 // most waiting calls: one lookup
	}
	lo := 1 // hashes[:lo] cached, none from hi on
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if _, ok := e.blocks.Lookup(hashes[mid-1]); ok {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return lo * bs
}

// CacheEvictions is how many cached blocks the prefix cache has evicted so
// far (BlockManager.Evicted): a policy that samples it learns the cache's
// eviction rate, and so how long freed blocks survive. 0 in a View made by
// hand.
func (v *View) CacheEvictions() int64 {
	if v.eng == nil {
		return 0
	}
	return v.eng.blocks.Evicted()
}
