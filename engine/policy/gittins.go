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
	at     []float64 // attained service, ascending
	index  []float64 // G at at[i]
	max    float64
	counts []float64 // counts[i] = n − i: the samples' suffix masses (gittinsOver)
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
	g.counts = slices.Grow(g.counts[:0], n+1)[:n+1]
	for i := range g.counts {
		g.counts[i] = float64(n - i)
	}
	for _, a := range gittinsGrid(sorted) {
		x := gittinsOver(sorted, g.counts, suffix, 0, a)
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

// gittinsOver is G(a) over a discrete distribution of service: values
// times (ascending) with suffix sums of their masses sm[k] = Σ mass[k:]
// and of mass × value st[k] = Σ mass[k:]·times[k:], and tail the mass past
// the last value, whose service is unknown (it adds work and no
// completion within any horizon). The best stopping point Δ is one of the
// values past a; 0 past the last. programModel's samples are masses of 1
// each (gittinsTable: sm the counts, st the sums, tail 0), the
// Kaplan–Meier estimate's are probabilities (kmService). Integer counts
// keep the samples' arithmetic exact: done and the survivors are the
// integers the samples' own loop used, so the default's tables round as
// before the two copies were merged (TestGittinsTableRoundsAsBefore).
func gittinsOver(times, sm, st []float64, tail, a float64) float64 {
	n := len(times)
	i := firstAbove(times, a)
	best := 0.0
	for j := i; j < n; j++ {
		done := sm[i] - sm[j+1]
		// Σ_{k=i..j} mass_k·(t_k − a) for those done, Δ_j for the rest.
		work := (st[i] - st[j+1]) - done*a + (sm[j+1]+tail)*(times[j]-a)
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
