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

// CostModel is the one cost model of computing and moving KV, in seconds,
// priced from the executor's profile (sim.Profile.HandlingCost): the
// handling decisions and memory-over-time scores weigh it, the engine hands
// it to policies (View.Cost), and the simulator prices its swaps with it.
//
// Moving KV (Autellix §5, InferCept): a transfer of b whole blocks one way
// costs Transfers(b)·SwapPerTransfer plus b blocks' bytes over SwapBandwidth.
// Gathered: one transfer per direction per iteration (a device-side gather
// pass first, at device-memory speed, which is not modelled: one to two
// orders of magnitude faster than a host link). Per block: one transfer per
// block, times SwapCopiesPerBlock when copies are issued per layer and for K
// and V as InferCept does. The bytes are the same either way. Directions are
// priced separately; whether one iteration's swap-out and swap-in overlap
// (PCIe is full duplex) is the caller's decision.
type CostModel struct {
	IterBase        float64 // fixed seconds per iteration (c0)
	PerToken        float64 // seconds per batched token (prefill or decode)
	TokenBudget     int     // max batched tokens per iteration (chunked prefill budget; 384 on the LAMPS testbed); <= 0: unbounded
	KVBytesPerToken float64 // bytes of KV per token (all layers); <= 0: wastes are reported in token·seconds and moves cost no bandwidth
	BlockTokens     int     // tokens per KV block (16); <= 0: 1

	SwapPerTransfer    float64 // seconds per transfer (launch + DMA setup)
	SwapCopiesPerBlock int     // transfers per block when not gathered (per-layer K and V copies); <= 1: one
	SwapGathered       bool    // one transfer per direction per iteration
	SwapBandwidth      float64 // bytes per second host<->device; <= 0: no bandwidth cost
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

// Transfers is the number of transfers that moving blocks blocks one way in
// one iteration costs.
func (m CostModel) Transfers(blocks int) int {
	if blocks <= 0 {
		return 0
	}
	if m.SwapGathered {
		return 1
	}
	return blocks * max(m.SwapCopiesPerBlock, 1)
}

// TransferTime is the time to move blocks whole KV blocks one way in one
// iteration: Transfers(blocks)·SwapPerTransfer plus their bytes over
// SwapBandwidth.
func (m CostModel) TransferTime(blocks int) float64 {
	if blocks <= 0 {
		return 0
	}
	t := float64(m.Transfers(blocks)) * m.SwapPerTransfer
	if m.SwapBandwidth > 0 && m.KVBytesPerToken > 0 {
		t += float64(blocks) * float64(max(m.BlockTokens, 1)) * m.KVBytesPerToken / m.SwapBandwidth
	}
	return t
}

// SwapTime is the time to move tokens tokens of KV one way between device
// and host: the whole blocks that hold them, ⌈tokens/BlockTokens⌉, in one
// transfer (TransferTime).
func (m CostModel) SwapTime(tokens int) float64 {
	if tokens <= 0 {
		return 0
	}
	n, _ := m.blocks(tokens)
	return m.TransferTime(n)
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
