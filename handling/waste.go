package handling

import "math"

// Situation is a call at (or paused at) a tool call.
type Situation struct {
	Context       int     // C_i: tokens of the call's context (KV) at the tool call
	OtherRunning  int     // C_other: context tokens of the other running calls (their KV stays resident)
	RunningTokens int     // tokens the other running calls add to each iteration (decodes: 1 each)
	ToolRemaining float64 // expected remaining tool time, seconds
}

// nonNeg returns x, or 0 when x is negative or NaN.
func nonNeg(x float64) float64 {
	if x > 0 {
		return x
	}
	return 0
}

// Waste is the memory held idle or wasted by handling the call in situation
// s with kind k, in byte·seconds (token·seconds when m.KVBytesPerToken is not
// set). With C = Context, C_other = OtherRunning, T = ToolRemaining and
// M = KVBytesPerToken (InferCept's equations 1–3 with its c_h chunking; see
// the package documentation):
//
//	Preserve: M·T·C
//	Discard:  M·(staircase area of recomputing C in chunks + C_other·PerToken·C)
//	Swap:     M·2·SwapTime(C)·(C + C_other)
//
// Negative counts and a negative or NaN tool time are taken as zero; an
// invalid kind wastes +Inf.
func Waste(k Kind, s Situation, m CostModel) float64 {
	if !k.Valid() {
		return math.Inf(1)
	}
	w := tokenWastes(s, m, m.SwapTime(max(s.Context, 0)))
	return w[k] * m.bytesPerToken()
}

// tokenWastes is the three wastes in token·seconds (before the factor M,
// which does not change their order), indexed by Kind, with swapT =
// SwapTime(Context) computed by the caller.
func tokenWastes(s Situation, m CostModel, swapT float64) [NumKinds]float64 {
	c := max(s.Context, 0)
	cf := float64(c)
	other := float64(max(s.OtherRunning, 0))
	own, _ := m.staircase(c, 0, s.RunningTokens)
	return [NumKinds]float64{
		Preserve: nonNeg(s.ToolRemaining) * cf,
		Swap:     2 * swapT * (cf + other),
		Discard:  own + other*m.PerToken*cf,
	}
}

// Choose returns the least-waste kind among allowed (nil or empty: all three;
// invalid kinds are ignored, and if none is valid all three are considered)
// and the wastes of all three kinds, indexed by Kind, whatever allowed says.
// Ties go to the kind that keeps the most: preserve, then swap, then discard.
func Choose(s Situation, m CostModel, allowed ...Kind) (Kind, [3]float64) {
	w := tokenWastes(s, m, m.SwapTime(max(s.Context, 0)))
	k := pick(w, allowed)
	mb := m.bytesPerToken()
	for i := range w {
		w[i] *= mb
	}
	return k, w
}

// kindMask is the set of allowed kinds as pick reads it: nil, empty or no
// valid kind means all three.
func kindMask(allowed []Kind) uint8 {
	var mask uint8
	for _, k := range allowed {
		if k.Valid() {
			mask |= 1 << k
		}
	}
	if mask == 0 {
		mask = 1<<NumKinds - 1
	}
	return mask
}

// pick is the least of w among allowed, ties to the lower Kind.
func pick(w [NumKinds]float64, allowed []Kind) Kind {
	mask := kindMask(allowed)
	best, found := Preserve, false
	for k := Preserve; k < NumKinds; k++ {
		if mask&(1<<k) == 0 {
			continue
		}
		// A NaN waste (from NaN costs) never wins over a number.
		if !found || w[k] < w[best] || (math.IsNaN(w[best]) && !math.IsNaN(w[k])) {
			best, found = k, true
		}
	}
	return best
}
