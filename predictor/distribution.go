package predictor

// The length model's output is a distribution over NumClasses bins; these
// read it as policies and point predictions need it. Inside a bin the mass is
// taken as uniform over its BinWidth tokens; the overflow bin's mass sits at
// its overflow value.

// LengthQuantile is the q-quantile (0 < q < 1) of the length distribution
// probs (NumClasses probabilities summing to 1), in tokens.
func LengthQuantile(probs []float32, q float64, overflowTokens int) int {
	var cum float64
	for b, p := range probs[:min(len(probs), NumClasses)] {
		pb := float64(p)
		if pb <= 0 {
			continue
		}
		if cum+pb >= q {
			if b >= OverflowBin {
				return overflowTokens
			}
			return b*BinWidth + int(float64(BinWidth)*(q-cum)/pb)
		}
		cum += pb
	}
	return overflowTokens
}

// ExpectedLength is the mean of the length distribution probs, in tokens.
func ExpectedLength(probs []float32, overflowTokens int) float64 {
	var e float64
	for b, p := range probs[:min(len(probs), NumClasses)] {
		v := float64(b*BinWidth) + float64(BinWidth)/2
		if b >= OverflowBin {
			v = float64(overflowTokens)
		}
		e += float64(p) * v
	}
	return e
}
