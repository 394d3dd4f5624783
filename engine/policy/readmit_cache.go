package policy

import (
	"fmt"
	"time"

	"github.com/pitstop-llm/pitstop/engine"
	"github.com/pitstop-llm/pitstop/handling"
)

// readmitCache is pitstop's re-admission of calls whose context is kept
// off the device (Options.PitstopReadmit). A waiting call whose context is
// still in the prefix cache (back from a tool that discarded its KV,
// preempted by recompute, or the next call of a program) needs only the
// rest of it prefilled, and while it waits its cached blocks may be evicted:
//
//   - held: its memory-over-time is scored with the cached prefix as held
//     (View.CachedPrefix), the prefill it would really need now, as KV on
//     the host already is.
//   - cached (held, and; the default): waiting costs the expected recompute
//     the delay causes, added to the call's marginal delay cost in the
//     generalized cμ rule: key·g/(g+u), g the aging's factor (1 without
//     it), u in seconds of delay per second of waiting. The prefix cache
//     evicts free blocks at a rate measured online (View.CacheEvictions);
//     taken as memoryless over the free queue, each cached block is lost at
//     hazard rate/free blocks, so u = hazard · PerToken · cached tokens ·
//     (1 + running calls, which the recompute stalls). No time scale is set
//     by hand; once the blocks are evicted u is 0 and the call ranks as any.
//   - sunk (cached, and): a call whose KV is on the host goes ahead of the
//     calls that hold nothing (pitstop's held-first class) when its swap-in
//     alone wastes less than recomputing it: its swap-out is done, a sunk
//     cost (the default check prices a swap-out and a swap-in). It empties
//     the host tier of calls back from their tools, so that the calls that
//     must leave the device are swapped rather than discarded, at a cost to
//     the mean and the throughput measured in docs/results-policies.md
//     (session 8): not the default.
//
// A term for KV waiting on the host (the rate of swap-outs discarded for
// want of host room, shared among the calls there) was measured to add
// nothing and was removed (session 8).
type readmitCache struct {
	held, urgent, sunk bool
	evicted            rateOf // prefix-cache evictions, blocks/s
}

// newReadmitCache reads Options.PitstopReadmit.
func newReadmitCache(mode string) (readmitCache, error) {
	switch mode {
	case "", "cached":
		return readmitCache{held: true, urgent: true}, nil
	case "sunk":
		return readmitCache{held: true, urgent: true, sunk: true}, nil
	case "held":
		return readmitCache{held: true}, nil
	case "off":
		return readmitCache{}, nil
	}
	return readmitCache{}, fmt.Errorf("unknown pitstop readmit rule %q (valid: cached, sunk, held, off)", mode)
}

// cached is the call's context held in the prefix cache when the rule is
// on, else 0.
func (r *readmitCache) cached(v *engine.View, s *engine.Sequence) int {
	if !r.held || s.State() == engine.Running {
		return 0
	}
	return v.CachedPrefix(s)
}

// readmitKey is the call's key (its memory-over-time, already divided by
// the aging's factor where the aging applies) with the expected recompute
// of its cached prefix added to its delay cost: key·g/(g+u). The cached
// prefix is the one its score was computed with.
func (p *Pitstop) readmitKey(v *engine.View, s *engine.Sequence, st *callState, key float64, ord programOrder) float64 {
	r := &p.recache
	if !r.urgent || p.noMOT || !(key > 0) {
		return key
	}
	r.evicted.sample(v, v.CacheEvictions())
	c := st.scoreFor.cached
	if c <= 0 || v.FreeBlocks <= 0 {
		return key
	}
	u := r.evicted.perSecond / float64(v.FreeBlocks) * v.Cost.PerToken * float64(c) * float64(1+v.Running)
	if !(u > 0) {
		return key
	}
	g := 1.0
	if p.tail.aging && ord != byArrival {
		if a := p.agedKey(v, s, 1); a > 0 {
			g = 1 / a
		}
	}
	return key * g / (g + u)
}

// hostFirst reports whether a swapped call goes ahead of the calls that
// hold nothing (pitstop's goodput protection): bringing its KV back wastes
// less than recomputing it, the swap-in alone with the sunk rule, a
// swap-out and a swap-in without.
func (p *Pitstop) hostFirst(v *engine.View, s *engine.Sequence) bool {
	if !p.recache.sunk {
		return swapCheaper(v, s)
	}
	sit := v.Situation(s)
	sit.ToolRemaining = 0
	_, w := handling.Choose(sit, v.Cost, handling.Swap, handling.Discard)
	return w[handling.Swap]/2 < w[handling.Discard] // Choose prices out and in alike
}

// rateOf is a counter's rate per second, an exponentially weighted mean
// over the iterations it is sampled in (weight 1/64 each: about the span
// between two full re-ranks).
type rateOf struct {
	iter      int64
	at        time.Duration
	count     int64
	perSecond float64
	started   bool
}

const rateAlpha = 1.0 / 64

// sample reads the counter once per iteration.
func (e *rateOf) sample(v *engine.View, n int64) {
	if e.started && v.Iteration == e.iter {
		return
	}
	if e.started && v.Now > e.at {
		r := float64(n-e.count) / (v.Now - e.at).Seconds()
		e.perSecond += rateAlpha * (r - e.perSecond)
	}
	e.started, e.iter, e.at, e.count = true, v.Iteration, v.Now, n
}
