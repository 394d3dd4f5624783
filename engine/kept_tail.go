package engine

// A discard at a tool call (or a preemption by recompute) releases the call's
// blocks into the prefix cache: its full blocks stay there under their
// chained hashes until other calls' allocations evict them, and a call that
// comes back while they survive recomputes nothing of them (matchPrefix).
// Its partial last block used to be freed without a hash, so even a call
// whose every full block survived recomputed up to BlockSize-1 tokens: the
// whole of pitstop's recompute on workloads where the handling chooses to
// discard because the blocks are expected to survive (handling.ChooseCached
// prices a discard as free when they do).
//
// The tail is kept the same way: at the discard the partial block is
// committed under a tail hash (its tokens chained to the last full block's
// hash, in a domain of its own so it never matches a full block), and on
// re-admission, when every full block before it was hit, the call takes it
// back as the next entry of its block table, which so stays contiguous from
// block 0. If a full block before it was evicted, the tail is useless (it
// follows the gap) and is forgotten: the block stays free and is recomputed
// with the missing ones. The tail is released before the full blocks
// (BlockManager.Release goes tail first), so it is evicted just before them
// and losing it alone costs at most BlockSize-1 tokens. Nothing is held and
// nothing moves to the host: the free-block count, Check and Leaked see a
// tail as any free block.

// tailSalt separates tail hashes from full-block hashes.
const tailSalt = 0x9e3779b97f4a7c15

// tailHash is the hash of s's partial block holding tokens [n/bs·bs, n).
func (s *Sequence) tailHash(bs, n int) uint64 {
	j := n / bs
	if j == 0 {
		return hashRoot(s.req.CacheSalt, tailSalt, s.tokens[:n])
	}
	return hashBlock(s.blockHashes(bs)[j-1]^tailSalt, s.tokens[j*bs:n])
}

// keepTail commits s's partial last block to the prefix cache before a
// discard releases it, and remembers its length in s.tail.
func (e *Engine) keepTail(s *Sequence) {
	e.forgetTail(s)
	bs := e.cfg.BlockSize
	j := s.computed / bs
	if !e.blocks.PrefixCache() || s.computed%bs == 0 || j >= len(s.blocks) {
		return
	}
	e.blocks.CommitTail(s.blocks[j], s.tailHash(bs, s.computed))
	s.tail = s.computed
}

// takeTail gives a re-admitted call whose full blocks matchPrefix found its
// kept tail back, appended to its block table; any other call forgets it.
func (e *Engine) takeTail(s *Sequence) {
	if s.tail == 0 {
		return
	}
	bs := e.cfg.BlockSize
	if len(s.blocks) == s.tail/bs && s.tail < len(s.tokens) {
		if id, ok := e.blocks.TakeTail(s.tailHash(bs, s.tail)); ok {
			s.blocks = append(s.blocks, id)
			s.computed = s.tail
			s.tail = 0
			return
		}
	}
	e.forgetTail(s)
}

// forgetTail drops s's kept tail, if any, from the prefix cache.
func (e *Engine) forgetTail(s *Sequence) {
	if s.tail > 0 {
		e.blocks.ForgetTail(s.tailHash(e.cfg.BlockSize, s.tail))
		s.tail = 0
	}
}

// cachedTail is the tokens past full that s's kept tail would give back if
// it were admitted now with full tokens of cached full blocks.
func (e *Engine) cachedTail(s *Sequence, full int) int {
	bs := e.cfg.BlockSize
	if s.tail == 0 || full != s.tail/bs*bs || s.tail >= len(s.tokens) {
		return 0
	}
	if _, ok := e.blocks.Lookup(s.tailHash(bs, s.tail)); !ok {
		return 0
	}
	return s.tail - full
}
