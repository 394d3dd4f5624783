package policy

import (
	"math"
	"slices"
)

// gittinsTable is the Gittins index of a program given its attained service,
// from the learned distribution of programs' total service (programModel's
// samples): G(a) = sup_Δ P(S − a ≤ Δ | S > a) / E[min(S − a, Δ) | S > a],
// the rate at which service spent on the program now completes it. Serving
// the highest index first minimises the mean response time of a single
// server with preemption (Gittins; Aalto, Ayesta and Righter 2009); it is
// least-attained-service for a decreasing hazard rate (heavy tails) and
// first-come-first-served for an increasing one, so one order covers both
// cases that programModel's CV thresholds told apart.
//
// The index is tabulated at gittinsPoints quantiles of the samples and as
// many even steps over their range when the model is rebuilt
// (O(points·n)), and looked up by binary search (the point at or below).
type gittinsTable struct {
	at    []float64 // attained service, ascending
	index []float64 // G at at[i]
	max   float64
}

const gittinsPoints = 64

// build tabulates the index over sorted samples (ascending) with suffix
// sums suffix[i] = Σ sorted[i:].
func (g *gittinsTable) build(sorted, suffix []float64) {
	n := len(sorted)
	g.at, g.index, g.max = g.at[:0], g.index[:0], 0
	if n == 0 {
		return
	}
	for _, a := range gittinsGrid(sorted) {
		x := gittinsAt(sorted, suffix, a)
		g.at, g.index = append(g.at, a), append(g.index, x)
		g.max = max(g.max, x)
	}
}

// gittinsGrid is where an index over sorted samples (ascending, not empty)
// is tabulated: at gittinsPoints quantiles of the samples and as many even
// steps over their range, from 0. The index changes fastest near the
// samples, and between them for programs of nearly one size.
func gittinsGrid(sorted []float64) []float64 {
	n := len(sorted)
	pts := make([]float64, 0, 2*gittinsPoints)
	for k := range gittinsPoints {
		pts = append(pts, sorted[min(k*n/gittinsPoints, n-1)], sorted[n-1]*float64(k)/gittinsPoints)
	}
	pts[0] = 0
	slices.Sort(pts)
	return slices.Compact(pts)
}

// gittinsAt is G(a) over the samples: the best stopping point Δ is one of
// the survivors' remaining service.
func gittinsAt(sorted, suffix []float64, a float64) float64 {
	n := len(sorted)
	i := firstAbove(sorted, a)
	if i == n {
		return 0 // longer than every sample: nothing known, lowest index
	}
	best := 0.0
	for j := i; j < n; j++ {
		done := float64(j - i + 1)
		// Σ_{k=i..j} (s_k − a) for those done, Δ_j for the rest.
		work := (suffix[i] - suffix[j+1]) - done*a + float64(n-1-j)*(sorted[j]-a)
		if work > 0 {
			best = max(best, done/work)
		}
	}
	return best
}

// level is the program's priority level from its index: 0 for the highest
// index in the table, one more for each halving below it (at most 15), so
// programs whose indices differ by less than 2x share a level and the call's
// memory-over-time orders them.
func (g *gittinsTable) level(a float64) int {
	if len(g.at) == 0 || g.max <= 0 {
		return 0
	}
	i, found := slices.BinarySearch(g.at, a)
	if !found {
		i--
	}
	x := g.index[max(i, 0)]
	if x <= 0 {
		return 15
	}
	return min(int(math.Log2(g.max/x)), 15)
}
