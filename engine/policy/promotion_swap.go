package policy

import "github.com/pitstop-llm/pitstop/engine"

// promotionSwap is the deadline lane's host-room test (PitstopTail
// "aging+warm+swap"): a call is promoted only while the calls promoted in
// the current full re-rank, each at its peak on the device (peakBlocks),
// fit in the blocks free now (less the watermark a waiting call's admission
// keeps) together with what evicting paused calls into the free host slots
// can free (hostRoom.swappable): a promotion may evict, but only by a swap,
// never by a discard that turns the victim into a recompute.
//
// Why: the middle ground between "aging+feasible-fit" (no eviction at all:
// infercept-single's sustained rate fell from the lane's 10.94 to 10.42,
// since the lane's gain there was bought by promotions that evict) and
// "aging+feasible-p99" (any eviction: infercept-multi fell to 4.333, the
// lane swapping out 21 % more than aging, docs/results-policies.md, session
// 10). Blocks against blocks, as the host-room admission: nothing set by
// hand.
type promotionSwap struct {
	reserved int   // peak blocks past the free ones of the calls promoted in this re-rank
	rerankAt int64 // that re-rank's iteration
	room     hostRoom
}

// rerank starts a full re-rank: no call is promoted in it yet.
func (w *promotionSwap) rerank(v *engine.View) { w.reserved, w.rerankAt = 0, v.Iteration }

// fits reports whether s, at its peak beside the calls already promoted in
// this re-rank, fits in the free blocks or by swapping paused calls to the
// free host slots, and counts it there if it does.
func (w *promotionSwap) fits(v *engine.View, s *engine.Sequence, st *callState) bool {
	free := v.FreeNow()
	if s.State() == engine.Waiting {
		free -= v.Watermark()
	}
	need := w.reserved + peakBlocks(v, s, st) - s.ResidentBlocks()
	if short := need - free; short > 0 && !w.room.swappable(v, short) {
		return false
	}
	if v.Iteration == w.rerankAt {
		w.reserved = need
	}
	return true
}
