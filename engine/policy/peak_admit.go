package policy

import (
	"github.com/pitstop-llm/pitstop/engine"
)

// peakAdmit is pitstop's peak-memory admission (PitstopHostRoom "peak": the
// host-room rule of "admit" and this one; issue 12's "admit a waiting call
// only when its peak memory fits", SOLA's rule, with the preserved paused
// calls in it). A call that holds no device KV is admitted only when its
// peak, its context plus its predicted output to its next tool or its end,
// fits in the blocks free now (less the watermark for a waiting call) plus
// the blocks of the calls preserved on the device whose tool is predicted
// to return after the call would reach that peak: those calls are not back
// before it is done, so their blocks are the room it may take (an eviction
// of one is a swap or a recompute, but not a loop). A preserved call whose
// tool returns sooner comes back and needs its blocks while the call still
// grows, so its blocks are counted as reserved. No threshold: blocks against
// blocks, and predicted seconds against predicted seconds.
type peakAdmit struct{}

// fits reports whether s's peak fits in the room the rule counts.
func (peakAdmit) fits(v *engine.View, s *engine.Sequence, budget int) bool {
	bs := max(v.BlockSize, 1)
	out := decodeLeft(s.Forecast().Predicted, s, stateOf(s))
	need := (s.NumTokens() + out + bs - 1) / bs
	room := v.FreeNow()
	if s.State() == engine.Waiting {
		room -= v.Watermark()
	}
	if need <= room {
		return true
	}
	done := peakTime(v, s, out, budget)
	for p := range v.PausedOnDevice() {
		if v.ToolRemaining(p) > done {
			room += p.ResidentBlocks()
			if need <= room {
				return true
			}
		}
	}
	return false
}

// peakTime is the predicted seconds until s, admitted now, reaches its
// peak: its prefill in chunks of the token budget, then out decode
// iterations, each batching this iteration's running calls and s. It is a
// lower bound when the batch grows, which counts fewer preserved calls as
// reserved: the rule errs towards admitting, as the engine did before it.
func peakTime(v *engine.View, s *engine.Sequence, out, budget int) float64 {
	left := s.Remaining()
	if s.State() == engine.Swapped {
		left = 0 // its KV comes back by copy, not prefill
	}
	t := 0.0
	if budget > 0 && left > 0 {
		t += float64(left/budget)*v.Cost.IterTime(budget) + v.Cost.IterTime(left%budget)
		if left%budget == 0 {
			t -= v.Cost.IterTime(0)
		}
	}
	return t + float64(out)*v.Cost.IterTime(v.Running+1)
}
