package workload

import (
	"hash/fnv"
	"math"
	"math/rand/v2"
	"sync"
)

// lognorm is a discretised, clamped lognormal: round(exp(mu + sigma·Z)) clamped to
// [lo, hi]. mu is calibrated so that the mean of the discretised, clamped variable is the
// requested mean, not the mean before rounding and clamping.
type lognorm struct {
	mu, sigma float64
	lo, hi    int
}

type lognormKey struct {
	mean, sigma float64
	lo, hi      int
}

var lognormCache sync.Map // lognormKey → lognorm

// newLognorm returns the lognormal with shape sigma whose discretised, clamped mean is mean.
func newLognorm(mean, sigma float64, lo, hi int) lognorm {
	k := lognormKey{mean, sigma, lo, hi}
	if d, ok := lognormCache.Load(k); ok {
		return d.(lognorm)
	}
	d := lognorm{sigma: sigma, lo: lo, hi: hi}
	a, b := math.Log(float64(max(lo, 1)))-10, math.Log(float64(hi))+10
	for range 80 { // the mean grows with mu: bisect
		d.mu = (a + b) / 2
		if d.mean() < mean {
			a = d.mu
		} else {
			b = d.mu
		}
	}
	lognormCache.Store(k, d)
	return d
}

// quadPoints is the number of equal-probability strata used to compute a mean.
const quadPoints = 4096

// mean is the expected value, by midpoint quadrature over equal-probability strata.
func (d lognorm) mean() float64 {
	s := 0.0
	for i := range quadPoints {
		s += float64(d.quantile((float64(i) + 0.5) / quadPoints))
	}
	return s / quadPoints
}

// quantile is the inverse CDF at u in (0, 1).
func (d lognorm) quantile(u float64) int {
	z := math.Sqrt2 * math.Erfinv(2*u-1)
	x := math.Round(math.Exp(d.mu + d.sigma*z))
	switch {
	case math.IsNaN(x) || x < float64(d.lo):
		return d.lo
	case x > float64(d.hi):
		return d.hi
	}
	return int(x)
}

// draws returns n values, one from each of n equal-probability strata, in random order
// (Latin-hypercube sampling): the population's mean and tail follow the distribution closely
// even for a few hundred draws, and the whole thing is fixed by r.
func (d lognorm) draws(r *rand.Rand, n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = d.quantile((float64(i) + r.Float64()) / float64(n))
	}
	r.Shuffle(n, func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out
}

// newRand is the generator of a synthetic workload: a PCG seeded with the user's seed and a
// stream derived from a label, so workloads (and the parts of mixed) draw independent streams.
func newRand(seed int64, label string) *rand.Rand {
	h := fnv.New64a()
	h.Write([]byte(label))
	return rand.New(rand.NewPCG(uint64(seed), h.Sum64()))
}
