package policy

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/pitstop-llm/pitstop/engine"
)

// hostRoom is pitstop's host-tier-aware admission (Options.PitstopHostRoom).
// A call that holds no device KV (waiting, or swapped to the host) and does
// not fit in the free blocks is admitted by evicting paused calls' KV: the
// engine swaps each victim to the host tier, and discards it when the tier
// is full. Past capacity the tier fills with calls back from their tools
// waiting for their swap-in (infercept-multi @5.2: 82 % of it on average,
// full 67 % of the time; docs/results-policies.md, session 9), so those
// evictions are discards: an admission overrules the handling that chose
// to preserve the victim (the least waste among what the host allowed) and
// turns it into a recompute of the victim's whole context.
//
//   - admit: such an admission is refused while the host tier cannot take
//     the blocks it would evict (the paused calls, in PausedVictim's order,
//     that fit in the free host slots do not cover the shortfall), and,
//     as the engine's own admission does for a call that does not fit
//     (HoldBack), the waiting and swapped calls ranked after it wait too in
//     this iteration. Running calls are never refused; a call that fits in
//     the free blocks, or whose evictions the host can take, is admitted as
//     before. No threshold: the rule compares blocks with blocks.
//     Among the paused calls, one the host tier can take is evicted first
//     (PausedVictim).
//   - peak: admit, and before it the peak-memory admission (peak_admit.go):
//     a call not on the device waits until its peak fits in the free
//     blocks and those of the preserved calls not back before it is done.
//   - victim: the victim choice alone, every call admitted.
//   - off: every call is admitted, and the engine picks the victim (the
//     most predicted tool time remaining).
type hostRoom struct {
	on, victim bool
	peak       *peakAdmit         // "peak": the peak-memory admission too (peak_admit.go), nil off
	held       int64              // the iteration in which a refusal held back the rest, -1 none
	cands      []*engine.Sequence // scratch for swappable
}

// newHostRoom reads Options.PitstopHostRoom.
func newHostRoom(mode string) (hostRoom, error) {
	switch mode {
	case "", "off":
		return hostRoom{held: -1}, nil
	case "admit":
		return hostRoom{on: true, victim: true, held: -1}, nil
	case "victim":
		return hostRoom{victim: true, held: -1}, nil
	case "peak":
		return hostRoom{on: true, victim: true, peak: &peakAdmit{}, held: -1}, nil
	}
	return hostRoom{}, fmt.Errorf("unknown pitstop host-room rule %q (valid: off, admit, victim, peak)", mode)
}

// Shape tells the engine, with the rule on, that a refusal holds back the
// waiting and swapped calls ranked after it (Admit refuses each, held, with
// no side effect), so the engine stops asking them; and caps the
// iteration's tokens as the prefill budget says (prefill_budget.go).
func (p *Pitstop) Shape(v *engine.View) engine.BatchLimits {
	return engine.BatchLimits{RefusalHolds: p.room.on, Tokens: p.prefill.tokens(v)}
}

// Admit refuses, with the rule on, a call whose admission would evict paused
// calls' KV that the host tier has no room for (see hostRoom).
func (p *Pitstop) Admit(v *engine.View, s *engine.Sequence, budget int) bool {
	r := &p.room
	if !r.on || s.State() == engine.Running {
		return true
	}
	if r.held == v.Iteration {
		return false // held back behind a refused call
	}
	if r.peak != nil && !r.peak.fits(v, s, budget) {
		r.held = v.Iteration
		p.memory.wanted(v)
		return false
	}
	short := admitBlocks(v, s, budget) - v.FreeNow()
	if s.State() == engine.Waiting {
		short += v.Watermark()
	}
	if short <= 0 || r.swappable(v, short) {
		return true
	}
	r.held = v.Iteration
	p.memory.wanted(v)
	return false
}

// swappable reports whether the evictions the admission causes are swaps
// alone: evicting paused calls in PausedVictim's order, each victim fitting
// in the host slots the earlier ones left, frees short blocks, or all of
// them when they hold fewer (the call's growth would evict every one). With
// no paused call on the device nothing is evicted.
func (r *hostRoom) swappable(v *engine.View, short int) bool {
	c := r.cands[:0]
	total := 0
	for s := range v.PausedOnDevice() {
		c = append(c, s)
		total += s.ResidentBlocks()
	}
	r.cands = c
	defer clear(c)
	if total == 0 {
		return true
	}
	short = min(short, total)
	slices.SortFunc(c, func(a, b *engine.Sequence) int { return cmp.Compare(v.ToolRemaining(b), v.ToolRemaining(a)) })
	free, freed := v.HostFreeNow(), 0
	for _, s := range c {
		if n := s.ResidentBlocks(); n <= free {
			free -= n
			freed += n
			if freed >= short {
				return true
			}
		}
	}
	return false
}

// admitBlocks is the device blocks s needs to reach its first decode if
// admitted now: its whole context (a waiting call's cached prefix is taken
// from the free blocks too), not only this iteration's chunk, since a call
// admitted with a first chunk that fits grows through the rest of its
// prefill as a running call, whose growth evicts paused calls unrefused.
func admitBlocks(v *engine.View, s *engine.Sequence, _ int) int {
	bs := max(v.BlockSize, 1)
	return (s.NumTokens() + bs - 1) / bs
}

// PausedVictim, with the rule on, evicts a paused call the host tier can
// take (a swap, copied back later) before one it cannot (a discard,
// recomputed): among those that fit, the engine's choice (the most
// predicted tool time remaining); when none fits, the smallest context, so
// the recompute is no larger than the room needs.
func (p *Pitstop) PausedVictim(v *engine.View, paused []*engine.Sequence) *engine.Sequence {
	p.memory.wanted(v) // a paused call is evicted for room
	if !p.room.victim {
		return p.BasePolicy.PausedVictim(v, paused)
	}
	free := v.HostFreeNow()
	var fit, small *engine.Sequence
	fitLeft := -1.0
	for _, c := range paused {
		n := c.ResidentBlocks()
		if n <= free {
			if left := v.ToolRemaining(c); left > fitLeft {
				fit, fitLeft = c, left
			}
		} else if small == nil || n < small.ResidentBlocks() {
			small = c
		}
	}
	if fit != nil {
		return fit
	}
	return small
}
