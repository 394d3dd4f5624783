package handling

import "math"

// divmod is a/b and a%b for a >= 0, b > 0, with a 32-bit division when both
// fit (several times cheaper than a 64-bit one on many x86 cores, and Rank
// does a handful per call).
func divmod(a, b int) (q, r int) {
	if a <= math.MaxUint32 && b <= math.MaxUint32 {
		q = int(uint32(a) / uint32(b))
	} else {
		q = a / b
	}
	return q, a - q*b
}

// CostModel is the engine's cost model, in seconds, as the simulator and the
// real executors measure it.
type CostModel struct {
	IterBase        float64 // fixed seconds per iteration (c0)
	PerToken        float64 // seconds per batched token (prefill or decode)
	TokenBudget     int     // max batched tokens per iteration (chunked prefill budget; 384 on the LAMPS testbed); <= 0: unbounded
	KVBytesPerToken float64 // bytes of KV per token (all layers); <= 0: wastes are reported in token·seconds
	SwapOverhead    float64 // seconds per transfer (per block copy or per gathered transfer)
	SwapBandwidth   float64 // bytes per second host<->device; <= 0: no bandwidth cost
	BlockTokens     int     // tokens per KV block (16); <= 0: 1
	GatheredSwap    bool    // true: one transfer per swap; false: one per block (per-layer copies are folded into SwapOverhead by the caller)
}

// IterTime is the duration of an iteration that batches batchedTokens tokens:
// IterBase + PerToken·batchedTokens (negative counts are taken as zero).
func (m CostModel) IterTime(batchedTokens int) float64 {
	return m.IterBase + m.PerToken*float64(max(batchedTokens, 0))
}

// blocks is the number of whole KV blocks that hold tokens tokens, and the
// block size used.
func (m CostModel) blocks(tokens int) (n, size int) {
	size = max(m.BlockTokens, 1)
	n, rem := divmod(tokens, size)
	if rem > 0 {
		n++
	}
	return n, size
}

// SwapTime is the time to move tokens tokens of KV one way between device
// and host. Whole blocks move: ⌈tokens/BlockTokens⌉ blocks, costing one
// SwapOverhead per block (or one per swap when GatheredSwap) plus the blocks'
// bytes over SwapBandwidth.
func (m CostModel) SwapTime(tokens int) float64 {
	if tokens <= 0 {
		return 0
	}
	n, size := m.blocks(tokens)
	transfers := n
	if m.GatheredSwap {
		transfers = 1
	}
	t := float64(transfers) * m.SwapOverhead
	if m.SwapBandwidth > 0 && m.KVBytesPerToken > 0 {
		t += float64(n*size) * m.KVBytesPerToken / m.SwapBandwidth
	}
	return t
}

// chunk is the spare token budget a prefill or recompute gets per iteration
// beside runningTokens of other work: max(TokenBudget − runningTokens, 1)
// (InferCept's c_h), or 0 when the budget is unbounded.
func (m CostModel) chunk(runningTokens int) int {
	if m.TokenBudget <= 0 {
		return 0
	}
	return max(m.TokenBudget-max(runningTokens, 0), 1)
}

// RecomputeTime is the time to compute tokens tokens of context (a
// recompute, or a prefill) chunked in the spare budget
// max(TokenBudget − runningTokens, 1) of iterations that also carry
// runningTokens tokens of other work.
func (m CostModel) RecomputeTime(tokens, runningTokens int) float64 {
	_, t := m.staircase(tokens, 0, runningTokens)
	return t
}

// staircase computes tokens tokens on top of base already-held tokens, in
// chunks, and returns the area under the call's memory (tokens·seconds; each
// chunk holds base plus everything computed so far, itself included) and the
// time taken. O(1).
func (m CostModel) staircase(tokens, base, runningTokens int) (area, dur float64) {
	if tokens <= 0 {
		return 0, 0
	}
	r := max(runningTokens, 0)
	c := m.chunk(r)
	if c == 0 || c > tokens {
		c = tokens
	}
	full, rem := divmod(tokens, c)
	tf := m.IterTime(r + c)
	nf := float64(full)
	// Σ_{j=1..full} tf·(base + j·c)
	area = tf * (nf*float64(base) + float64(c)*nf*(nf+1)/2)
	dur = nf * tf
	if rem > 0 {
		tl := m.IterTime(r + rem)
		area += tl * float64(base+tokens)
		dur += tl
	}
	return area, dur
}

// decodeArea is the area of n decode iterations of the call starting from
// base computed tokens: Σ_{k=1..n} IterTime(r+1)·(base + k).
func (m CostModel) decodeArea(n, base, runningTokens int) float64 {
	if n <= 0 {
		return 0
	}
	nf := float64(n)
	return m.IterTime(max(runningTokens, 0)+1) * (nf*float64(base) + nf*(nf+1)/2)
}

// bytesPerToken is M for the waste formulas: KVBytesPerToken, or 1 (so that
// wastes come out in token·seconds) when it is not set.
func (m CostModel) bytesPerToken() float64 {
	if m.KVBytesPerToken > 0 {
		return m.KVBytesPerToken
	}
	return 1
}
