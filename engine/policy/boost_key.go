package policy

import (
	"fmt"
	"os"
	"github.com/pitstop-llm/pitstop/engine"
	"github.com/pitstop-llm/pitstop/handling"
)

// boostRule is pitstop's γ-Boost (PitstopTail "boost..."; boost.go): in
// place of the aging, a waiting call ranks by its boosted arrival time
// a − b_γ(S) (a its arrival, or with "+warm" its program's while its context
// is cached: ageOf), lowest first.
//
// S is the call's memory-over-time (the rank's own unit, tokens·seconds)
// over the device's KV capacity in tokens: the seconds of the whole engine
// the call's current segment takes if memory is what binds, so that λ·E[S]
// is the memory load. Its distribution is the one expectedRank takes the
// expectation over: one memory-over-time per point of the length model's
// distribution (lengthPoints), conditioned on what the call has generated.
// boostLoad learns λ and the mixture of the last 1,000 segments' size
// distributions (each segment counted once, when first ranked).
//
// γ is solved again at each full re-rank (Refresh): the root of the
// Cramér–Lundberg equation over the window; with no root (the memory load
// at or past 1: arrival order's queue grows, its tail does not decay at
// any rate), or with "-wait" always, 1/W with W arrival order's mean wait
// by the conservation law (fcfsReference): the heavy-traffic law that
// arrival order's wait is exponential with that mean (Kingman), whose decay
// rate is 1/W, measured in real seconds whatever binds the engine. Until
// either is known γ is 0 and every boost 0: arrival order.
type boostRule struct {
	load    boostLoad
	gamma   float64 // γ now, 1/seconds; 0 until known
	solved  bool    // γ came from the equation (not the wait)
	byWait  bool    // "-wait": γ = 1/W always
	version int     // bumped when γ changes: each call's boost is recomputed once
}

// update solves γ again: the equation's root, else (or with byWait) one over
// arrival order's mean wait, else 0.
func (b *boostRule) update(ref *fcfsReference) {
	g, ok := 0.0, false
	if !b.byWait {
		g, ok = b.load.gamma()
	}
	if !ok {
		if w, known := ref.wait(); known && w > 0 {
			g = 1 / w
		}
	}
	if g != b.gamma {
		b.gamma, b.version = g, b.version+1
	}
	b.solved = ok
	if debugBoost {
		debugN++
		if debugN%20 == 0 {
			w, _ := ref.wait()
			fmt.Fprintf(os.Stderr, "boost: n=%d lambda=%.3f ES=%.4g load=%.3f gamma=%.4g solved=%v W=%.2f\n", debugN, b.load.rate(), b.load.hist.mean(), b.load.load(), b.gamma, ok, w)
		}
	}
}

var debugBoost = os.Getenv("PITSTOP_BOOST_DEBUG") != ""
var debugN int

// boostKey is the call's boosted arrival time in seconds (see boostRule).
// The size distribution is computed when the call's shape changes (as its
// score); its boost when it or γ changes.
func (p *Pitstop) boostKey(v *engine.View, s *engine.Sequence, st *callState) float64 {
	k := keyOf(s)
	k.cached = st.scoreFor.cached
	if st.boostFor != k || st.boostPts == nil {
		st.boostPts = p.sizePoints(v, s, st)
		st.boostFor, st.boostVer = k, -1
		if seg := st.segBase + 1; st.boostSeg != seg {
			st.boostSeg = seg // a new segment: one more job for λ and the sizes
			p.boost.load.record(s.ReadyAt().Seconds(), st.boostPts)
		}
	}
	if st.boostVer != p.boost.version {
		st.boost, st.boostVer = boostOf(p.boost.gamma, st.boostPts), p.boost.version
	}
	return (v.Now - p.ageOf(v, s)).Seconds() - st.boost
}

// sizePoints is the call's size distribution: its current segment's
// memory-over-time at each point of the length model's distribution
// (lengthPoints, as expectedRank) over the device's KV tokens; one point
// from the point forecast when there is no distribution.
func (p *Pitstop) sizePoints(v *engine.View, s *engine.Sequence, st *callState) []sizePoint {
	capacity := float64(max(v.TotalBlocks*v.BlockSize, 1))
	seg := segmentOf(s.Forecast().Predicted, s, st)
	if !p.noHeld {
		seg.Held = max(s.Computed(), st.scoreFor.cached)
	}
	load, allowed := loadOf(v), allowedKinds(v, s)
	var pts []sizePoint
	if d := s.Forecast().Dist; d != nil {
		g := max(d.Decoded+s.Generated()-st.segBase, 0)
		lengthPoints(d, g, func(length, pm float64) {
			at := seg
			at.PreDecode = max(int(length+0.5)-g, 1)
			r, _ := handling.RankAt(at, v.Cost, load, allowed...)
			pts = append(pts, sizePoint{s: r / capacity, p: pm})
		})
	}
	if len(pts) == 0 {
		r, _ := handling.RankAt(seg, v.Cost, load, allowed...)
		pts = []sizePoint{{s: r / capacity, p: 1}}
	}
	return pts
}
