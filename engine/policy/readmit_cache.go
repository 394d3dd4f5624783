package policy

import (
	"fmt"
	"time"

	"github.com/pitstop-llm/pitstop/engine"
	"github.com/pitstop-llm/pitstop/handling"
)

// readmitCache is pitstop's re-admission of calls whose context is kept
// off the device (Options.PitstopReadmit): a waiting call whose context is
// still in the prefix cache (back from a tool that discarded its KV,
// preempted by recompute, or the next call of a program), or on the host
// tier (swapped out at its tool or preempted), needs only the rest of it
// prefilled, and while it waits it costs the engine more than its own delay.
//
//   - held: its memory-over-time is scored with the cached prefix as held
//     (View.CachedPrefix), the prefill it would really need now, as KV on
//     the host already is.
//   - cached (held, and): waiting costs it and the calls its recompute
//     stalls the expected recompute the delay causes, added to its
//     marginal delay cost in the generalized cμ rule (key·g/(g+u), g the
//     aging's factor, 1 without it), u in seconds of delay per second of
//     waiting, from rates measured online:
//   - cached blocks: the prefix cache evicts free blocks at a measured rate
//     (View.CacheEvictions); taken as memoryless over the free queue, each
//     cached block is lost at hazard rate/free blocks, so u = hazard ·
//     PerToken · cached tokens · (1 + running calls).
//   - host KV: while the host tier is full, a paused call that must leave
//     the device is discarded instead of swapped (the engine's forced
//     discards, measured from EvHandled: tokens per second). A call
//     waiting on the host holds its share of the tier (its blocks over the
//     tier's), so u = forced tokens/s · PerToken · share · (1 + running).
//   - sunk (cached, and): a call on the host goes ahead of the calls that
//     hold nothing (pitstop's held-first class) when its swap-in alone
//     wastes less than recomputing it: its swap-out is done, a sunk cost
//     (the default check prices a swap-out and a swap-in).
//
// No time scale is set by hand: the rates and the running load are read
// from the engine, the costs from the cost model. Once a call's blocks are
// evicted, u is 0 and it ranks as any call.
type readmitCache struct {
	held, urgent, sunk bool
	evicted            rateOf // prefix-cache evictions, blocks/s
	forced             rateOf // context discarded for want of host room, tokens/s
	forcedTokens       int64
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

// observe counts the context of a paused call discarded although pitstop
// had chosen to keep it (preserve or swap): the host tier had no room.
func (r *readmitCache) observe(e *engine.Event) {
	if e.Kind != engine.EvHandled || e.Handling != handling.Discard {
		return
	}
	if st, ok := e.Seq.PolicyState.(*callState); ok && st.kindSet && st.kind == handling.Discard {
		return // chosen, not forced
	}
	r.forcedTokens += int64(e.Seq.NumTokens())
}

// readmitKey is the call's key (its memory-over-time, already divided by
// the aging's factor where the aging applies) with the expected recompute
// its wait causes added to its delay cost: key·g/(g+u). The cached prefix
// is the one its score was computed with.
func (p *Pitstop) readmitKey(v *engine.View, s *engine.Sequence, st *callState, key float64, ord programOrder) float64 {
	r := &p.recache
	if !r.urgent || p.noMOT || !(key > 0) {
		return key
	}
	r.evicted.sample(v, v.CacheEvictions())
	r.forced.sample(v, r.forcedTokens)
	u := 0.0
	if c := st.scoreFor.cached; c > 0 && v.FreeBlocks > 0 {
		u += r.evicted.perSecond / float64(v.FreeBlocks) * float64(c)
	}
	if h := len(s.HostSlots()); h > 0 && s.State() == engine.Swapped && v.HostBlocks > 0 {
		u += r.forced.perSecond * float64(h) / float64(v.HostBlocks)
	}
	u *= v.Cost.PerToken * float64(1+v.Running)
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
