package policy

import "github.com/pitstop-llm/pitstop/engine"

// promotionFit is the deadline lane's no-eviction test (PitstopTail
// "aging+feasible-fit"): a call is promoted only while the calls promoted
// in the current full re-rank, each at its peak on the device (its context
// and the rest of its predicted output up to its tool or its end), fit in
// the blocks free now, less the watermark a waiting call's admission keeps.
// A promotion is a reordering among the waiting calls; one that does not
// fit is admitted by evicting paused calls' KV to the host, and at
// infercept-multi @4.5 the lane swapped out 21 % more than aging for a tail
// no lower (docs/results-policies.md, session 10). Such a call waits in the
// aging rank, which ages it ahead in time anyway. Blocks against blocks:
// nothing set by hand.
type promotionFit struct {
	reserved int   // peak blocks of the calls promoted in the current full re-rank
	rerankAt int64 // that re-rank's iteration
}

// rerank starts a full re-rank: no call is promoted in it yet.
func (f *promotionFit) rerank(v *engine.View) { f.reserved, f.rerankAt = 0, v.Iteration }

// fits reports whether s, at its peak, fits in the free blocks beside the
// calls already promoted in this re-rank, and counts it there if it does.
func (f *promotionFit) fits(v *engine.View, s *engine.Sequence, st *callState) bool {
	free := v.FreeNow()
	if s.State() == engine.Waiting {
		free -= v.Watermark()
	}
	need := peakBlocks(v, s, st) - s.ResidentBlocks()
	if f.reserved+need > free {
		return false
	}
	if v.Iteration == f.rerankAt {
		f.reserved += need
	}
	return true
}

// peakBlocks is the device blocks s holds at its peak in the current
// segment: its context now and the rest of its predicted output before its
// tool (or to its end).
func peakBlocks(v *engine.View, s *engine.Sequence, st *callState) int {
	bs := max(v.BlockSize, 1)
	return (s.NumTokens() + decodeLeft(s.Forecast().Predicted, s, st) + bs - 1) / bs
}
