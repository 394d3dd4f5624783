package policy

import (
	"math"

	"github.com/pitstop-llm/pitstop/engine"
)

// laneWake is the deadline lane's last-moment promotion (PitstopTail
// "aging+warm+first-final-gated-wake"): a candidate whose laxity still
// covers the promoted calls ahead of it is left to the rank, and the lane
// asks for a full re-rank at the moment its laxity would no longer cover
// them, instead of promoting it now because the next periodic re-rank
// (4·AgingEvery iterations) may come too late.
//
// Why: least-laxity promotion is cheap for the mean only if it happens at
// the last moment, so that the calls the rank serves first meanwhile are
// not delayed by the promoted one. A call is only promoted at a re-rank, so
// the lane without this promotes every call whose laxity is under the
// interval between re-ranks: at azure-code @1 that interval is about 13 s
// against deadlines 17 s after arrival, and the promoted calls were
// promoted a median 0.8 s after they arrived (docs/results-policies.md,
// session 12). No constant: the wake is each candidate's own laxity less
// the device time already promoted ahead of it and one iteration (the
// soonest a re-rank can come).
type laneWake struct {
	at float64 // the earliest time a deferred candidate's laxity runs out, seconds
}

// reset forgets the wakes of the last re-rank: this one recomputes them.
func (w *laneWake) reset() { w.at = math.Inf(1) }

// defer records a candidate left to the rank whose laxity runs out at t.
func (w *laneWake) deferTo(t float64) { w.at = min(w.at, t) }

// due reports whether a candidate's laxity has run out since the last
// re-rank, so the lane must re-rank now.
func (w *laneWake) due(v *engine.View) bool { return v.Now.Seconds() >= w.at }
