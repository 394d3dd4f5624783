package predictor

import "math"

// The mixture's point is the median of its experts' mixed distributions,
// and a median follows a sharp distribution more than its weight: where the
// model puts its mass in a few bins and history's Laplace is as wide as
// history's error, the model pulls the median toward its point even when it
// weighs a third of history. On an agent the model has not seen its sharp
// distribution is not what its errors show (ToolBench's search trees: on
// later segments the model misses by 72 tokens, history by 51, yet the
// median stayed by the model's point; docs/results-predictor.md, session
// 15). CalibrateModelSpread reads the model, for the point only, as wide as
// its errors on the deployment's finished later segments; its distribution
// is what the mixture returns unchanged (forecasts and the hit trade read
// it).

// CalibrateModelSpread makes x's point for a program's later segments read
// the model's distribution widened to the mean absolute error the model has
// shown on the later segments x has booked, while another expert has shown
// less (modelAtShownSpread); first segments, the distribution x returns and
// the weights are unchanged. It returns x. Serve and bench predict with it
// (ServedMix) since session 16, once the hit trade after it was decided on
// the distribution's own median (servedTrade): booked against the moved
// point, the trade cost the shipped model's held-out tau its after-learning
// Acc-5 bar (docs/results-predictor.md, sessions 15 and 16).
func (x *ExpertMix) CalibrateModelSpread() *ExpertMix {
	x.spread = true
	return x
}

// calibrates says whether x's point reads the model at its shown spread.
func (x *ExpertMix) calibrates() bool { return x != nil && x.spread }

// modelAtShownSpread is the model's distribution probs (point tokens) for
// a segment of class k as the point reads it under CalibrateModelSpread, or
// nil where it is read unchanged: not calibrating, a first segment, no
// later segment booked yet, the model the expert with the lowest mean
// absolute error on the later segments booked (on a source it knows, its
// errors are the spread of the lengths, not overconfidence: widening it
// there cost held-out tau 0.011 of rank correlation), or a distribution at
// least as wide as the model's shown error.
func (x *ExpertMix) modelAtShownSpread(k int, probs []float32, point, overflowTokens int) []float32 {
	if x == nil || !x.spread || k == 0 {
		return nil
	}
	x.mu.Lock()
	n, loss := x.n[k][ExpertModel], x.loss[k][ExpertModel]
	best := n > 0
	for e := ExpertBlend; e < numExperts; e++ {
		if x.n[k][e] > 0 && n > 0 && x.loss[k][e]/x.n[k][e] < loss/n {
			best = false
		}
	}
	x.mu.Unlock()
	if n == 0 || best {
		return nil
	}
	return widenToError(probs, point, loss/n, overflowTokens)
}

// widenToError mixes d (a length distribution whose point is point) with a
// Laplace around point whose mean absolute error is shown, in the share
// that makes up the gap between d's own expected absolute error around
// point (implied) and shown: 1 − implied/shown. nil when d is at least that
// wide already (or shown ≤ 0). A Laplace's scale is its mean absolute error,
// so the widened distribution's expected error is at least implied and
// tends to shown as d gets sharper.
func widenToError(d []float32, point int, shown float64, overflowTokens int) []float32 {
	if shown <= 0 {
		return nil
	}
	share := 1 - midpointAbsError(d, point, overflowTokens)/shown
	if share <= 0 {
		return nil
	}
	lap := laplaceBins(float64(point), shown)
	out := make([]float32, len(d))
	for i := range d {
		out[i] = float32((1-share)*float64(d[i]) + share*float64(lap[i]))
	}
	return out
}

// midpointAbsError is d's expected absolute error around point with each
// bin's mass at its midpoint (the overflow bin's at overflowTokens): the
// error the widening reads, coarser than expectedAbsError's per-token spread.
func midpointAbsError(d []float32, point, overflowTokens int) float64 {
	var e float64
	for b, p := range d {
		v := float64(b*BinWidth) + float64(BinWidth)/2
		if b >= OverflowBin {
			v = float64(overflowTokens)
		}
		e += float64(p) * math.Abs(v-float64(point))
	}
	return e
}
