package handling

import "math"

// ToolTime is what is known of a tool call's duration, in seconds: a point
// estimate (Mean) and, when the estimator has them, its median and 90th
// percentile, from which a lognormal is fitted; without them the duration is
// taken as exponential with the point estimate as its mean (the most spread
// distribution with that mean, so an unknown spread is not read as
// certainty). With neither, nothing is known and every horizon is
// outlasted.
type ToolTime struct {
	Mean     float64
	P50, P90 float64 // 0 when unknown
	Elapsed  float64 // seconds the tool has already run
}

// z90 is the standard normal's 0.9-quantile.
const z90 = 1.2815515655446004

// survival is P(T > x) of the unconditioned duration.
func (t ToolTime) survival(x float64) float64 {
	if x <= 0 {
		return 1
	}
	if t.P50 > 0 && t.P90 > t.P50 {
		sigma := math.Log(t.P90/t.P50) / z90
		return 0.5 * math.Erfc((math.Log(x)-math.Log(t.P50))/(sigma*math.Sqrt2))
	}
	if !(t.Mean > 0) {
		return 1 // no estimate: nothing is known
	}
	return math.Exp(-x / t.Mean)
}

// Outlasts is the probability that the tool, having run Elapsed seconds,
// runs more than horizon seconds longer: 1 when the distribution says it
// cannot have run this long (it is late, so nothing is known), 0 for an
// infinite horizon.
func (t ToolTime) Outlasts(horizon float64) float64 {
	if math.IsInf(horizon, 1) {
		return 0
	}
	alive := t.survival(t.Elapsed)
	if !(alive > 1e-12) {
		return 1
	}
	return min(t.survival(t.Elapsed+max(horizon, 0))/alive, 1)
}
