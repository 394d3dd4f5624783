package predictor

// OrderLed chooses, for a deployment, between two point predictions of the
// same segments (the expert mixture's median, which has the lower MAE, and
// the window mode, which has the higher Acc-5) by how often each ordered
// pairs of finished segments wrongly, as OrderScored scores its experts: a
// policy ranks by the point, so the mode may replace the median only where
// it orders the deployment's segments at least as well. Each finished
// segment is paired with the orderWindow finished before it; a discordant
// pair costs 1, a tie ½. The second point is chosen once orderLedMinPairs
// pairs are scored and its share of wrong pairs is strictly the lower.
// On the coding agent the window mode (with the argument class) orders
// better and is chosen; on tau and infercept+bfcl it orders worse and never
// is (docs/results-predictor.md, session 10). ModeLed puts it to use.
// Not safe for concurrent use.
type OrderLed struct {
	recent [orderWindow]orderLedSegment
	seen   int
	wrong  [2]float64 // pairs each point ordered wrongly (ties half)
	pairs  float64
}

type orderLedSegment struct {
	pts    [2]int
	actual int
}

// orderLedMinPairs is how many scored pairs OrderLed needs before it may
// choose the second point: about two segments' worth of the window.
const orderLedMinPairs = 50

// Choose is the point to predict with: second when it has ordered the
// finished segments better than first, else first.
func (o *OrderLed) Choose(first, second int) int {
	if o.pairs >= orderLedMinPairs && o.wrong[1] < o.wrong[0] {
		return second
	}
	return first
}

// Observe books a finished segment of actual tokens for which the two
// points were first and second.
func (o *OrderLed) Observe(first, second, actual int) {
	s := orderLedSegment{pts: [2]int{first, second}, actual: actual}
	for i := range min(o.seen, orderWindow) {
		f := &o.recent[i]
		if f.actual == actual {
			continue
		}
		o.pairs++
		for k := range s.pts {
			switch d := (s.pts[k] - f.pts[k]) * (actual - f.actual); {
			case d < 0:
				o.wrong[k]++
			case d == 0:
				o.wrong[k] += 0.5
			}
		}
	}
	o.recent[o.seen%orderWindow] = s
	o.seen++
}
