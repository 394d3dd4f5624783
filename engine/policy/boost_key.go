package policy

import (
	"math"

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
// γ is solved again at each full re-rank (Refresh), from one source:
// plain "boost" the root of the Cramér–Lundberg equation over the window,
// S scaled to the engine's measured seconds (observe); "-full" the same
// root with S as it is; "-wait" 1/W, W arrival order's mean wait by the
// conservation law (fcfsReference; heavy traffic: that wait exponential
// with its mean, Kingman); "-tail" the decay of the arrival-order shadow's
// response times (tailDecay); "-resp" 1/(W + mean own time), M/M/1's rate;
// "-aged" power/T, the aging's own scale; "-own" -resp's γ with S the
// predicted own time in seconds (ownPoints). With no root (the load at or
// past 1: arrival order's queue grows, its tail does not decay at any
// rate) the two equation sources take 1/W. Until a source is known γ is 0
// and every boost 0: arrival order. The sources in seconds keep S in the
// histogram's unit, where γS is small for nearly every call: the boost is
// then about (1/γ)·log(1/(γS)), and the order reads only the sizes' ratios.
// Measured in docs/results-policies.md (session 18): none is a default.
type boostRule struct {
	load               boostLoad
	gamma              float64   // γ now, in the histogram's unit: 1 over seconds of the whole KV
	scale              float64   // seconds of the engine per unit of S, measured (observe); 1 until measured
	busy               bool      // the last iteration left runnable calls out
	busyTime, busyWork float64   // decayed: seconds of such iterations, predicted S of the segments ended in them
	fullKV             bool      // "-full": S over the whole KV as it is (scale 1)
	byWait             bool      // "-wait": γ = 1/W always
	byResp             bool      // "-resp": γ = 1/(W + E[own]), one over arrival order's mean response time
	byBound            float64   // "-aged": γ = power/T, T the aging's arrival-order p99 (fcfsReference.bound), power its exponent; 0 off
	byOwn              bool      // "-own": that γ, S the call's predicted own time in seconds (ownPoints), not its memory-over-time
	byTail             bool      // "-tail": γ fitted to the decay of the arrival-order shadow's response times (tailDecay)
	shadow             p99Window // with byTail: the shadow's response times (deadline less arrival) of the last calls
	version            int       // bumped when γ changes: each call's boost is recomputed once
}

// byEquation reports whether γ is the Cramér–Lundberg root on sizes
// scaled to the engine's measured seconds (plain "boost"): the only source
// that reads the scale; the others are in seconds already (the wait, the
// shadow, the response time) or take S as it is (-full).
func (b *boostRule) byEquation() bool {
	return !b.fullKV && !b.byWait && !b.byTail && !b.byResp && !b.byOwn && b.byBound == 0
}

// update solves γ again from the rule's source (see boostRule).
func (b *boostRule) update(ref *fcfsReference, slack float64) {
	g, ok := 0.0, false
	b.scale = 1
	if b.byEquation() && b.busyWork > 0 && b.busyTime > 0 {
		b.scale = b.busyTime / b.busyWork
	}
	switch {
	case b.byBound > 0:
		if t, known := ref.bound(slack); known && t > 0 {
			g, ok = b.byBound/t, true
		}
	case b.byTail:
		g, ok = b.tailDecay()
	case b.byResp || b.byOwn:
		if w, known := ref.wait(); known {
			if t := w + meanOf(ref.own.times); t > 0 {
				g = 1 / t // M/M/1: arrival order's response time is exponential, its rate one over its mean
			}
		}
	case !b.byWait:
		g, ok = b.load.gammaScaled(b.scale)
	}
	if !ok && !b.byResp && !b.byOwn && b.byBound == 0 {
		if w, known := ref.wait(); known && w > 0 {
			g = b.scale / w // 1/W in seconds of the engine, in the histogram's unit
		}
	}
	if g != b.gamma {
		b.gamma, b.version = g, b.version+1
	}
}

// observe learns how many seconds of the engine a unit of S takes: over
// the iterations where runnable calls were left out (the engine the
// bottleneck, whatever binds: memory, the token budget, the batch's slots),
// their time over the predicted sizes of the segments that ended in them.
// Memory-over-time over the KV alone measured azure-conv @6's load at
// 0.08–0.1 while it queued (the ranks' iteration times are those of the
// moment a call is ranked, and the token budget binds before memory).
func (b *boostRule) observe(e *engine.Event) {
	switch e.Kind {
	case engine.EvIteration:
		if e.Iter == nil || e.Iter.Seqs == 0 {
			return
		}
		b.busy = e.Iter.Waiting > 0
		if b.busy {
			b.busyTime = b.busyTime*(1-boostBusyAlpha) + e.Iter.Duration.Seconds()
			b.busyWork *= 1 - boostBusyAlpha
		}
	case engine.EvPaused, engine.EvFinished:
		if st := stateOf(e.Seq); b.busy && st.boostSeg > 0 {
			b.busyWork += st.boostMean
		}
	}
}

// boostBusyAlpha weighs an iteration in the busy time and work: about the
// last 1,000 iterations with calls waiting.
const boostBusyAlpha = 0.001

// boostKey is the call's boosted arrival time in seconds (see boostRule).
// The size distribution is computed when the call's shape changes (as its
// score); its boost when it or γ changes.
func (p *Pitstop) boostKey(v *engine.View, s *engine.Sequence, st *callState) float64 {
	k := keyOf(s)
	k.cached = st.scoreFor.cached
	if st.boostFor != k || st.boostPts == nil {
		if p.boost.byOwn {
			st.boostPts = ownPoints(v, s, st)
		} else {
			st.boostPts = p.sizePoints(v, s, st)
		}
		st.boostFor, st.boostVer = k, -1
		if b := &p.boost; b.byTail && st.boostSeg == 0 && st.hasDeadline {
			b.shadow.record(st.deadline - s.Arrival().Seconds()) // the call's end under arrival order, once
		}
		if seg := st.segBase + 1; st.boostSeg != seg {
			st.boostSeg = seg // a new segment: one more job for λ and the sizes
			p.boost.load.record(s.ReadyAt().Seconds(), st.boostPts)
			st.boostMean = meanSize(st.boostPts)
		}
	}
	if st.boostVer != p.boost.version {
		st.boost, st.boostVer = p.boost.scale*boostOf(p.boost.gamma, st.boostPts), p.boost.version
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

// tailDecay is the decay rate of the arrival-order shadow's response
// times, fitted between their 90th and 99th percentiles as an exponential
// tail, P(T > t) ∝ e^{−γt}: γ = ln 10 / (q99 − q90). Measured in real
// seconds, whatever binds the engine, and finite in overload (the window's
// tail, not a stationary one). ok is false until the window holds
// fcfsMinCalls calls or when the two quantiles meet.
func (b *boostRule) tailDecay() (float64, bool) {
	w := b.shadow.sorted
	if b.shadow.n < fcfsMinCalls || len(w) < fcfsMinCalls {
		return 0, false
	}
	q90, q99 := w[len(w)*90/100], w[len(w)*99/100]
	if !(q99 > q90) {
		return 0, false
	}
	return math.Ln10 / (q99 - q90), true
}

// ownPoints is the call's size as its predicted own time in seconds, the
// unit of arrival order's response time (fcfsReference's own times: e2e
// less wait): its uncomputed context's prefill, then at each point of the
// length model's distribution the rest of its output one token per
// iteration at the present batch's iteration time, plus its predicted tool
// time (restOfService's terms).
func ownPoints(v *engine.View, s *engine.Sequence, st *callState) []sizePoint {
	pr := s.Forecast().Predicted
	iter := v.Cost.IterTime(v.Running + 1)
	base := prefillTime(v, s)
	if pr.HasTool {
		base += max(pr.ToolTime, 0) + float64(max(pr.After, 0))*iter
	}
	var pts []sizePoint
	if d := s.Forecast().Dist; d != nil {
		g := max(d.Decoded+s.Generated()-st.segBase, 0)
		lengthPoints(d, g, func(length, pm float64) {
			pts = append(pts, sizePoint{s: base + float64(max(int(length+0.5)-g, 1))*iter, p: pm})
		})
	}
	if len(pts) == 0 {
		pts = []sizePoint{{s: base + float64(decodeLeft(pr, s, st))*iter, p: 1}}
	}
	return pts
}

// meanSize is E[S] over the points.
func meanSize(pts []sizePoint) float64 {
	var sum, mass float64
	for _, x := range pts {
		if x.p > 0 {
			sum += x.p * x.s
			mass += x.p
		}
	}
	if !(mass > 0) {
		return 0
	}
	return sum / mass
}

// meanOf is the mean of xs, 0 when empty.
func meanOf(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	var sum float64
	for _, x := range xs {
		sum += x
	}
	return sum / float64(len(xs))
}
