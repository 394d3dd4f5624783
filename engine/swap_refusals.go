package engine

// SwapSite is where a swap-out was asked: the handling of a call paused on
// a tool, the eviction of a paused call to make room for another, the
// preemption of a running call, or the rescue of a discarded context. A swap-out that finds the host tier full
// (after the parked calls HostRank puts after it gave way) discards the KV
// instead; IterationStats counts those refusals by site, so that a run shows
// which decisions the host tier's capacity overruled.
type SwapSite uint8

const (
	SwapAtHandling   SwapSite = iota // the policy's Handle chose swap for a paused call
	SwapAtEviction                   // a paused call evicted to make room (EvictPaused)
	SwapAtPreemption                 // a running call preempted (Evict)
	SwapAtRescue                     // a discarded context saved from the prefix cache's eviction (rescue.go)
	NumSwapSites
)

// String names the site as the bench JSON does.
func (s SwapSite) String() string {
	switch s {
	case SwapAtHandling:
		return "handling"
	case SwapAtEviction:
		return "eviction"
	case SwapAtPreemption:
		return "preemption"
	case SwapAtRescue:
		return "rescue"
	}
	return "unknown"
}

// refuseSwap counts a swap-out of n blocks from site that found no host room.
func (e *Engine) refuseSwap(site SwapSite, n int) {
	e.stats.RefusedSwaps[site]++
	e.stats.RefusedSwapBlocks[site] += n
}

// hostRunnable is the host blocks held by runnable calls, back from their
// tools (or preempted) and waiting for a swap-in.
func (e *Engine) hostRunnable() int {
	n := 0
	for _, s := range e.onHost {
		if s.Runnable() {
			n += len(s.host)
		}
	}
	return n
}
