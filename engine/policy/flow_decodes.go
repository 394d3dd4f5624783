package policy

import (
	"slices"
	"sort"
)

// flowDecodes prices the decodes still to come ("-flow"): the calls whose
// prefill ends while the backlog drains decode beside the rest of it, and
// each of their iterations carries the chunk too. The arrivals' wait
// (arrivalCost.arrivals) says a smaller chunk costs the calls to come;
// this term is the other side of the same calls: once prefilled, a smaller
// chunk makes each of their decode iterations shorter. Counting one side
// alone prices every future call as if it only waited, and keeps the full
// budget where the calls' time is mostly decode (chat: TTFT 0.4 s, e2e
// 13 s at its sustained edge).
//
// In the fluid picture (arrivalCost) the busy period prefills B = W·c/κ
// tokens, calls finishing their prefill at r/m a second (m the mean prompt
// of a call). A call whose prefill ends with u prompt tokens still to
// drain behind it and D tokens to decode is delayed, beyond what any chunk
// costs it, P·min(D·κ, u)/(1 − P·a) (arrivalCost's decode delay with u for
// W). Over the busy period (u from B down to 0) the calls pay
// P/(m·(1 − P·a))·∫₀ᴮ min(D·κ, u) du = P/(m·(1 − P·a))·g(D·κ), g(x) =
// x·B − x²/2 for x < B, B²/2 beyond. D is not known for calls not yet
// run: it is averaged over the output lengths of the last flowSample
// segments that ended (the rests of the decodes present are not a sample
// of a whole segment's length).
type flowDecodes struct {
	ring [flowSample]float64
	next int
	size int
	// sorted lengths and prefix sums of D and D², rebuilt by prepare.
	d, s1, s2 []float64
}

const flowSample = 64

// add records a segment's output length (tokens it generated).
func (f *flowDecodes) add(n int) {
	if n <= 0 {
		return
	}
	f.ring[f.next] = float64(n)
	f.next = (f.next + 1) % flowSample
	f.size = min(f.size+1, flowSample)
}

// prepare sorts the sample for cost: call once per decision.
func (f *flowDecodes) prepare() {
	f.d = append(f.d[:0], f.ring[:f.size]...)
	slices.Sort(f.d)
	f.s1 = append(f.s1[:0], 0)
	f.s2 = append(f.s2[:0], 0)
	for i, v := range f.d {
		f.s1 = append(f.s1, f.s1[i]+v)
		f.s2 = append(f.s2, f.s2[i]+v*v)
	}
}

// mean is E_D[g(D·c)] over the sample for a busy period of b tokens (c is
// κ in arrivalCost); 0 with no sample.
func (f *flowDecodes) mean(c, b float64) float64 {
	n := len(f.d)
	if n == 0 {
		return 0
	}
	k := sort.SearchFloat64s(f.d, b/c) // D·c < b below k
	short := c*b*f.s1[k] - c*c*f.s2[k]/2
	long := float64(n-k) * b * b / 2
	return (short + long) / float64(n)
}
