package policy

import "math"

// tailSurelyPastArrivalOrder is the deadline lane's trigger with a
// confidence bound (PitstopTail "aging+warm+first-final-sure-fit"): the
// lane promotes only while the realized p99 is past arrival order's with
// 95 % confidence: the lower bound of the realized window's p99 past the
// upper bound of the shadow's (each times the deadline slack, T beside the
// shadow's as in tailPastArrivalOrder).
//
// Why: a window's p99 is one order statistic, the 10th longest of 1,000
// calls, and two of them differ by chance: a trigger on their point
// comparison opens and closes on noise. The number of a window's n calls
// past its true p99 is Binomial(n, 0.01), so the true p99 lies between the
// order statistics n·0.99 ∓ z·√(n·0.99·0.01) with confidence about that of
// z (the normal approximation; z = 1.96 for 95 %, the conventional level,
// not fitted to a trace). Measured (docs/results-policies.md, session 13):
// the same Show 1 points as the point trigger, azure-code @1.35's p99 1.04x
// fcfs's against 1.0975x; at azure-code @1 it moves the mean 5.97 → 5.93 s
// only, since there the trigger is opened by the shadow's estimate of
// arrival order's p99 being half the real one, a bias no confidence bound
// removes.
func (d *deadlineLane) tailSurelyPastArrivalOrder() bool {
	if d.edf == nil {
		return false
	}
	fcfs, ok := d.shadow.p99Bound(+p99Z)
	if !ok {
		return false
	}
	p, ok := d.edf.realized.p99Bound(-p99Z)
	return ok && p > d.slackOr1()*max(fcfs, d.reference)
}

// p99Z is the normal quantile of the trigger's two one-sided bounds: 1.96,
// a 95 % two-sided interval.
const p99Z = 1.96

// p99Bound is the order statistic of the window at the p99's confidence
// bound z standard errors above (z > 0) or below (z < 0) the p99's rank,
// and whether enough calls finished to know it.
func (w *p99Window) p99Bound(z float64) (float64, bool) {
	n := len(w.sorted)
	if w.n < fcfsMinCalls || n == 0 {
		return 0, false
	}
	r := float64(n)*0.99 + z*math.Sqrt(float64(n)*0.99*0.01)
	i := min(max(int(math.Floor(r)), 0), n-1)
	return w.sorted[i], true
}
