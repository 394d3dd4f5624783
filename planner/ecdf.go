package planner

import (
	"fmt"
	"math/rand/v2"
	"slices"
)

// ECDF is an empirical distribution of token counts, built from observed
// samples (SamuLLM §4.1: output lengths are drawn i.i.d. from a per-model
// eCDF, clipped by the request's limit; samples, not the mean, because a
// model's time is not linear in its lengths).
type ECDF struct{ sorted []int }

// NewECDF builds the distribution of samples; every sample must be >= 1.
func NewECDF(samples []int) (ECDF, error) {
	if len(samples) == 0 {
		return ECDF{}, fmt.Errorf("no samples")
	}
	s := slices.Clone(samples)
	slices.Sort(s)
	if s[0] < 1 {
		return ECDF{}, fmt.Errorf("sample %d: token counts must be >= 1", s[0])
	}
	return ECDF{sorted: s}, nil
}

// Draw samples one value by inverse transform, clipped to limit (<= 0: none).
func (e ECDF) Draw(r *rand.Rand, limit int) int {
	v := e.sorted[r.IntN(len(e.sorted))]
	if limit > 0 && v > limit {
		v = limit
	}
	return v
}

// Mean of the samples clipped to limit (<= 0: none).
func (e ECDF) Mean(limit int) float64 {
	t := 0
	for _, v := range e.sorted {
		if limit > 0 && v > limit {
			v = limit
		}
		t += v
	}
	return float64(t) / float64(len(e.sorted))
}

// Max is the largest sample.
func (e ECDF) Max() int { return e.sorted[len(e.sorted)-1] }

// Len is the number of samples.
func (e ECDF) Len() int { return len(e.sorted) }
