package engine

// CachedPrefix is how many leading tokens of a waiting call's context the
// device prefix cache holds for it: what admitting it now would not compute
// again (full blocks, at most all tokens but the last, as matchPrefix takes
// them). 0 for a call that holds device blocks (its Computed counts them),
// without a prefix cache, or in a View made by hand. It walks the call's
// block hashes until the first miss: O(blocks), no allocation once the
// call's hashes are known.
func (v *View) CachedPrefix(s *Sequence) int {
	if v.eng == nil || !v.eng.blocks.PrefixCache() || len(s.blocks) > 0 || s.state == Paused {
		return 0
	}
	bs := v.eng.cfg.BlockSize
	hashes := s.blockHashes(bs)
	usable := min(len(hashes), (len(s.tokens)-1)/bs)
	n := 0
	for _, h := range hashes[:usable] {
		if _, ok := v.eng.blocks.Lookup(h); !ok {
			break
		}
		n++
	}
	return n * bs
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
