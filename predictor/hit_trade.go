package predictor

import "math"

// Acc-5 counts a point within ±5 tokens of the actual length; the median
// that minimises the absolute error often sits between two modes of the
// predicted distribution (a tool call of a fixed length, or a longer reply)
// and hits neither. HitTrade moves the point to the centre of the
// distribution's densest 11-token window where that buys enough hits for
// the absolute error it costs, and only while such moves have paid on the
// deployment's own finished segments.
//
// The exchange rate is hitTradeRate hits per token of absolute error, used
// twice: per segment, the expected gain in the chance of a hit must be at
// least hitTradeRate × the expected rise in absolute error (both under the
// mixture's distribution); and per deployment, the moves are served only
// while their realized gain in hits, over the finished segments where the
// candidate and the median differed, is above hitTradeRate × their realized
// rise in absolute error. A model that is unsure on an unseen agent
// promises gains it does not deliver, so a fresh deployment serves the
// median until its own segments say otherwise.

// hitTradeRate is the exchange rate, in hits per token of absolute error.
// Chosen from 0.01, 0.02, 0.03, 0.04, 0.05 and 0.1 as the one with the
// highest mean second-half Acc-5 over the six sets built from the training
// sources alone (each source's held-out programs with its own model and
// with the shipped one, and the two leave-one-source-out streams), among
// those that cost no set more than 1 token of MAE; leaving either
// leave-one-source-out stream out of the choice picks the same value
// (docs/results-predictor.md, session 11).
const hitTradeRate = 0.03

// hitTradeMinSegments is how many finished segments with a move the
// deployment needs before it may serve the moves.
const hitTradeMinSegments = 20

// hitCandidate is the point HitTrade may serve for a segment whose
// mixture has distribution dist (NumClasses bins, the mass uniform over
// each bin's tokens, the overflow bin's at overflowTokens) and median
// median: the centre of the densest 11-token window below the overflow bin
// when the chance of a hit it adds is at least hitTradeRate × the expected
// absolute error it adds, else median.
func hitCandidate(dist []float32, median, overflowTokens int) int {
	if len(dist) != NumClasses || median < 0 || median >= NumBins*BinWidth {
		return median
	}
	best, top := median, -1.0
	for x := range NumBins * BinWidth {
		if m := windowMass(dist, x); m > top {
			best, top = x, m
		}
	}
	if best == median {
		return median
	}
	if top-windowMass(dist, median) >= hitTradeRate*(expectedAbsError(dist, best, overflowTokens)-expectedAbsError(dist, median, overflowTokens)) {
		return best
	}
	return median
}

// windowMass is the mass dist puts within ±5 tokens of x, below the
// overflow bin (each bin's mass spread evenly over its BinWidth tokens).
// The 11 tokens meet two bins at most.
func windowMass(dist []float32, x int) float64 {
	lo, hi := max(x-acc5HalfWidth, 0), min(x+acc5HalfWidth, NumBins*BinWidth-1)
	var m float64
	for b := lo / BinWidth; b <= hi/BinWidth; b++ {
		from, to := max(lo, b*BinWidth), min(hi, (b+1)*BinWidth-1)
		m += float64(dist[b]) * float64(to-from+1)
	}
	return m / BinWidth
}

// expectedAbsError is E|X − x| for X distributed as dist, each bin's mass
// spread evenly over its BinWidth tokens, the overflow bin's at
// overflowTokens.
func expectedAbsError(dist []float32, x, overflowTokens int) float64 {
	e := float64(dist[OverflowBin]) * math.Abs(float64(overflowTokens-x))
	for b, p := range dist[:NumBins] {
		lo := b * BinWidth
		var mean float64 // the mean |y − x| over the bin's tokens y
		switch {
		case x >= lo+BinWidth-1:
			mean = float64(x-lo) - float64(BinWidth-1)/2
		case x <= lo:
			mean = float64(lo-x) + float64(BinWidth-1)/2
		default:
			k := float64(x - lo)
			mean = (k*(k+1)/2 + (BinWidth-1-k)*(BinWidth-k)/2) / BinWidth
		}
		e += float64(p) * mean
	}
	return e
}

// HitTrade is a deployment's record of what moving the point to
// hitCandidate has realized: over the finished segments where the
// candidate differed from the mixture's median, the hits it added and the
// absolute error it added. Not safe for concurrent use; ModeLed holds one.
type HitTrade struct {
	hits, absErr float64 // candidate's minus the median's, summed
	moves        int     // finished segments where the two differed
}

// On says whether the candidate is served: it has realized more than
// hitTradeRate hits per token of absolute error it added, over at least
// hitTradeMinSegments moves.
func (t *HitTrade) On() bool {
	return t.moves >= hitTradeMinSegments && t.hits-hitTradeRate*t.absErr > 0
}

// Point is what the deployment serves for a segment whose mixture's median
// is median and whose candidate is candidate.
func (t *HitTrade) Point(median, candidate int) int {
	if t.On() {
		return candidate
	}
	return median
}

// Observe books a finished segment of actual tokens.
func (t *HitTrade) Observe(median, candidate, actual int) {
	if median == candidate {
		return
	}
	hit := func(x int) float64 {
		if abs(x-actual) <= acc5HalfWidth {
			return 1
		}
		return 0
	}
	t.hits += hit(candidate) - hit(median)
	t.absErr += float64(abs(candidate-actual) - abs(median-actual))
	t.moves++
}

// servedTrade is the point the mixture serves for p (Traded): the hit
// trade's candidate while the trade has paid and the candidate moves off
// the distribution's own median, else the mixture's point. The trade is a
// question about the distribution (does its densest window deliver hits
// its median does not?), so it is decided and booked against p.Median,
// never against a point CalibrateModelSpread moved: booked against the
// moved point, the trade switched on while the calibration held and kept
// serving its candidates after the calibration let go (held-out tau with
// the shipped model: 72 second-half segments moved, 7 hits lost;
// docs/results-predictor.md, session 16).
func servedTrade(t *HitTrade, p ServedPoint) int {
	if c := t.Point(p.Median, p.Candidate); c != p.Median {
		return c
	}
	return p.Mixed
}
