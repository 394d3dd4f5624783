package policy

import (
	"math/rand/v2"
	"testing"
)

// samplesIndex is G(a) over samples of mass 1 each, as gittinsTable asks
// gittinsOver.
func samplesIndex(sorted, suffix []float64, a float64) float64 {
	counts := make([]float64, len(sorted)+1)
	for i := range counts {
		counts[i] = float64(len(sorted) - i)
	}
	return gittinsOver(sorted, counts, suffix, 0, a)
}

// samplesIndexBefore is the samples' own loop that gittinsOver replaced
// (done and the survivors counted as integers).
func samplesIndexBefore(sorted, suffix []float64, a float64) float64 {
	n := len(sorted)
	i := firstAbove(sorted, a)
	best := 0.0
	for j := i; j < n; j++ {
		done := float64(j - i + 1)
		work := (suffix[i] - suffix[j+1]) - done*a + float64(n-1-j)*(sorted[j]-a)
		if work > 0 {
			best = max(best, done/work)
		}
	}
	return best
}

// TestGittinsTableRoundsAsBefore: the default's index table over the
// samples, now through gittinsOver (shared with the Kaplan–Meier
// estimate), is bit for bit the samples' own loop it replaced, at every
// grid point, on heavy-tailed samples with ties.
func TestGittinsTableRoundsAsBefore(t *testing.T) {
	r := rand.New(rand.NewPCG(17, 1))
	for trial := range 20 {
		var m programModel
		for range 50 + 40*trial {
			x := 0.5 / (r.Float64() + 0.01)
			if r.IntN(5) == 0 {
				x = float64(r.IntN(4) + 1) // ties
			}
			m.add(x)
		}
		m.rebuild()
		for i, a := range m.gittins.at {
			if want := samplesIndexBefore(m.sorted, m.suffix, a); m.gittins.index[i] != want {
				t.Fatalf("trial %d: G(%g) = %v, the samples' loop gave %v", trial, a, m.gittins.index[i], want)
			}
		}
	}
}
