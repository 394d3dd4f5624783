package report

import "slices"

// HostTier is what the host tier did in a run: the swap-outs it refused for
// want of room (the KV discarded instead), how full it was over time and
// how much of it calls waiting to be swapped in held, and how long those
// calls waited from their tool's return to their next token. It shows the
// mechanism behind recompute that a full host tier causes.
type HostTier struct {
	// RefusedSwaps and RefusedSwapTokens count, by where the swap-out was
	// asked ("handling": at or after the tool call by the policy's choice,
	// "eviction": a paused call evicted for room, "preemption": a running
	// call), the swap-outs discarded instead and the tokens of KV they lost.
	RefusedSwaps      map[string]int   `json:"refused_swaps"`
	RefusedSwapTokens map[string]int64 `json:"refused_swap_tokens"`
	// UsedMean and RunnableMean are time-weighted fractions of the tier's
	// capacity: held, and held by runnable calls waiting for a swap-in.
	// FullFraction is the share of time it was at least 95 % used.
	UsedMean     float64 `json:"used_mean"`
	RunnableMean float64 `json:"runnable_mean"`
	FullFraction float64 `json:"full_fraction"`
	// SwapInWait is the seconds from a call's return from its tool with
	// its KV on the host to its next token: mean, p99 and the count.
	SwapInWaitMeanS float64 `json:"swap_in_wait_mean_s"`
	SwapInWaitP99S  float64 `json:"swap_in_wait_p99_s"`
	SwapInWaits     int     `json:"swap_in_waits"`
}

// hostTier accumulates HostTier under the Collector's lock.
type hostTier struct {
	refused       map[string]int
	refusedTokens map[string]int64
	used, run     float64 // Σ fraction·dur
	full, dur     float64 // Σ dur at ≥ 95 %, Σ dur
	waits         []float64
	any           bool
}

// AddHostTier records one iteration of dur seconds: the host tier's
// capacity, its used blocks and the blocks runnable calls hold there.
func (c *Collector) AddHostTier(dur float64, capacity, used, runnable int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	h := &c.host
	h.any = true
	if capacity <= 0 || !(dur > 0) {
		return
	}
	u := float64(used) / float64(capacity)
	h.used += u * dur
	h.run += float64(runnable) / float64(capacity) * dur
	if u >= 0.95 {
		h.full += dur
	}
	h.dur += dur
}

// AddRefusedSwaps records n swap-outs asked at site that found the host
// tier full, losing tokens of KV.
func (c *Collector) AddRefusedSwaps(site string, n int, tokens int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	h := &c.host
	h.any = true
	if h.refused == nil {
		h.refused, h.refusedTokens = map[string]int{}, map[string]int64{}
	}
	h.refused[site] += n
	h.refusedTokens[site] += tokens
}

// AddSwapInWait records a call's wait from its tool's return, with its KV
// on the host, to its next token.
func (c *Collector) AddSwapInWait(seconds float64) {
	c.mu.Lock()
	c.host.any = true
	c.host.waits = append(c.host.waits, seconds)
	c.mu.Unlock()
}

// summary is the run's HostTier, nil when nothing was recorded.
func (h *hostTier) summary() *HostTier {
	if !h.any {
		return nil
	}
	out := &HostTier{RefusedSwaps: map[string]int{}, RefusedSwapTokens: map[string]int64{}, SwapInWaits: len(h.waits)}
	for k, n := range h.refused {
		out.RefusedSwaps[k] = n
		out.RefusedSwapTokens[k] = h.refusedTokens[k]
	}
	if h.dur > 0 {
		out.UsedMean, out.RunnableMean, out.FullFraction = h.used/h.dur, h.run/h.dur, h.full/h.dur
	}
	if len(h.waits) > 0 {
		w := slices.Clone(h.waits)
		slices.Sort(w)
		sum := 0.0
		for _, x := range w {
			sum += x
		}
		out.SwapInWaitMeanS = sum / float64(len(w))
		out.SwapInWaitP99S = percentile(w, 99)
	}
	return out
}
