package handling

import "math"

// ChooseCached is Choose for an engine with a prefix cache, where a
// discarded or swapped-out call's device blocks stay cached (free, but
// reusable) until other calls' allocations evict them, and where the engine
// rescues a discarded context about to be evicted by swapping it out while
// the host tier has room (engine/rescue.go): a discard is then a swap
// deferred until it is needed. pEvict is the probability that the blocks are
// evicted before the tool returns:
//
//	Discard: pEvict · min(Waste(Discard), Waste(Swap))  (only if evicted: rescued by a swap, out and in,
//	                                                     when swap is allowed, i.e. the host has room now; else recomputed)
//	Swap:    (1 + pEvict)/2 · Waste(Swap)               (the swap-out always, the swap-in only if evicted)
//	Preserve: Waste(Preserve)
//
// The rescue term assumes the host still has room at the eviction; when it
// has not, the context is recomputed. With pEvict = 1 (nothing known, or
// memory short) the kind is Choose's, InferCept's choice (a discard rescued
// by a swap ties with the swap, and ties go to the swap). A pEvict outside
// [0, 1] or NaN is taken as 1. Returns the kind and the three expected
// wastes as Choose does.
func ChooseCached(s Situation, m CostModel, pEvict float64, allowed ...Kind) (Kind, [3]float64) {
	if !(pEvict >= 0 && pEvict <= 1) {
		pEvict = 1
	}
	w := tokenWastes(s, m, m.SwapTime(max(s.Context, 0)))
	if kindMask(allowed)&(1<<Swap) != 0 {
		w[Discard] = min(w[Discard], w[Swap])
	}
	w[Discard] *= pEvict
	w[Swap] *= (1 + pEvict) / 2
	k := pick(w, allowed)
	mb := m.bytesPerToken()
	for i := range w {
		w[i] *= mb
	}
	return k, w
}

// EvictionHorizon is how long, in seconds, blocks freed into the prefix
// cache now survive at the least: the free blocks ahead of them (freeTokens
// tokens) consumed at the engine's highest allocation rate, a full token
// budget of new KV every iteration. It is a lower bound (finished calls
// return blocks meanwhile), so the eviction probabilities derived from it
// err toward InferCept's choice. +Inf without a token budget or a positive
// iteration time.
func (m CostModel) EvictionHorizon(freeTokens int) float64 {
	it := m.IterTime(m.TokenBudget)
	if m.TokenBudget <= 0 || !(it > 0) {
		return math.Inf(1)
	}
	return float64(max(freeTokens, 0)) / float64(m.TokenBudget) * it
}
