package policy

import (
	"math"
)

// γ-Boost (George Yu and Ziv Scully, "Strongly Tail-Optimal Scheduling in
// the Light-Tailed M/G/1", SIGMETRICS 2024): serve the waiting jobs in order
// of their boosted arrival time a − b_γ(S). With the size known,
// b_γ(s) = (1/γ)·log(1/(1 − e^{−γs})); with only its distribution,
// b_γ = (1/γ)·log(M/(M − 1)), M = E[e^{γS}]. γ is the decay rate of
// arrival order's response-time tail, the root of γ = λ(E[e^{γS}] − 1)
// (Cramér–Lundberg) over the distribution of all jobs' sizes. A small job
// gets a large boost, a large one almost none: the order is arrival order's
// for the tail and size-aware for the mean, with the boost's scale 1/γ set
// by the load instead of by hand. The pieces here are the maths; boostLoad
// learns λ and the sizes' distribution online, and boost_key.go applies it
// to pitstop's waiting calls.

// sizePoint is one point of a job's size distribution: size s (seconds of
// the whole engine) with probability mass p.
type sizePoint struct{ s, p float64 }

// boostKnown is b_γ(s) for a known size: (1/γ)·log(1/(1 − e^{−γs})).
func boostKnown(gamma, s float64) float64 {
	if !(gamma > 0) || !(s > 0) {
		return 0
	}
	return -math.Log(-math.Expm1(-gamma*s)) / gamma
}

// boostOf is b_γ for a size known only as a distribution:
// (1/γ)·log(M/(M − 1)) with M = E[e^{γS}] over pts (masses renormalized).
// One point is boostKnown's closed form. 0 when γ or the points are unusable.
func boostOf(gamma float64, pts []sizePoint) float64 {
	if !(gamma > 0) {
		return 0
	}
	var m1, mass float64 // E[e^{γS}] − 1 accumulated with expm1 (no cancellation for small γS)
	for _, x := range pts {
		if x.p > 0 {
			m1 += x.p * math.Expm1(gamma*max(x.s, 0))
			mass += x.p
		}
	}
	if !(mass > 0) || !(m1 > 0) {
		return 0
	}
	m1 /= mass
	if math.IsInf(m1, 1) {
		return 0
	}
	return math.Log1p(1/m1) / gamma // log(M/(M−1)) = log(1 + 1/(M−1))
}

// solveGamma is the positive root γ of γ = λ·(M(γ) − 1), M(γ) = E[e^{γS}]
// over the histogram h, by bisection; ok is false when there is none: the
// load λ·E[S] is at least 1 (arrival order's tail does not decay: the queue
// grows) or nothing is known.
func solveGamma(lambda float64, h *sizeHistogram) (float64, bool) {
	mean := h.mean()
	if !(lambda > 0) || !(mean > 0) || lambda*mean >= 1 {
		return 0, false
	}
	f := func(g float64) float64 { return lambda*h.mgfMinus1(g) - g } // < 0 below the root, > 0 above
	hi := 1 / mean
	for i := 0; f(hi) <= 0; i++ {
		if i == 200 {
			return 0, false
		}
		hi *= 2
	}
	lo := 0.0
	for range 60 {
		mid := (lo + hi) / 2
		if f(mid) > 0 {
			hi = mid
		} else {
			lo = mid
		}
	}
	return (lo + hi) / 2, true
}

// sizeHistogram is a distribution of job sizes in log-spaced bins:
// histPerOctave bins per doubling from 2^histMinExp to 2^histMaxExp seconds
// (sizes outside are clamped to the end bins). A bin stands for its
// geometric centre, within 2^(1/16) ≈ 4.4 % of any size in it. Its moment
// generating function costs one exp per occupied bin, whatever the number of
// jobs, so γ can be solved again at every re-rank.
type sizeHistogram struct {
	mass  [histBins]float64
	total float64
	sum   float64 // Σ mass·size, for the mean
}

const (
	histPerOctave = 8
	histMinExp    = -24 // 60 ns of the engine
	histMaxExp    = 16  // 18 hours
	histBins      = (histMaxExp - histMinExp) * histPerOctave
)

// binOf is the bin a size falls in.
func binOf(s float64) int {
	if !(s > 0) {
		return 0
	}
	b := int(math.Floor((math.Log2(s) - histMinExp) * histPerOctave))
	return min(max(b, 0), histBins-1)
}

// binSize is the size bin b stands for (its geometric centre).
func binSize(b int) float64 {
	return math.Exp2(histMinExp + (float64(b)+0.5)/histPerOctave)
}

// add puts mass p at size s (p < 0 takes it away).
func (h *sizeHistogram) add(s, p float64) {
	b := binOf(s)
	h.mass[b] += p
	h.total += p
	h.sum += p * binSize(b)
}

// mean is E[S], 0 when empty.
func (h *sizeHistogram) mean() float64 {
	if !(h.total > 1e-12) {
		return 0
	}
	return h.sum / h.total
}

// mgfMinus1 is E[e^{γS}] − 1.
func (h *sizeHistogram) mgfMinus1(gamma float64) float64 {
	if !(h.total > 1e-12) {
		return 0
	}
	var x float64
	for b, m := range h.mass {
		if m > 1e-12 {
			x += m * math.Expm1(gamma*binSize(b))
		}
	}
	return x / h.total
}

// boostLoad learns what γ needs: the arrival rate λ of jobs and the
// distribution of their sizes, over a sliding window of the last
// boostWindow jobs (each job's size distribution, as the ranks see it,
// added to the histogram whole: the window's sizes are the mixture of its
// jobs'). A window of jobs, not of time, so it follows the load as fast as
// jobs come and needs no time constant.
type boostLoad struct {
	hist  sizeHistogram
	jobs  [boostWindow][]sizePoint // the window's jobs, a ring
	times [boostWindow]float64     // their arrivals, seconds
	next  int                      // the ring's next slot
	n     int                      // jobs in the window
}

// boostWindow jobs are kept: the rate's relative error over n arrivals is
// about 1/√n (3 % at 1,000).
const boostWindow = 1000

// boostMinJobs must have arrived before γ is solved.
const boostMinJobs = 50

// record adds a job that arrived at t (seconds) with size distribution pts,
// dropping the window's oldest.
func (l *boostLoad) record(t float64, pts []sizePoint) {
	if l.n == boostWindow {
		l.addPoints(l.jobs[l.next], -1)
	} else {
		l.n++
	}
	l.jobs[l.next], l.times[l.next] = pts, t
	l.addPoints(pts, 1)
	l.next = (l.next + 1) % boostWindow
}

// addPoints adds (sign 1) or takes away (−1) a job's normalized mass.
func (l *boostLoad) addPoints(pts []sizePoint, sign float64) {
	var mass float64
	for _, x := range pts {
		mass += max(x.p, 0)
	}
	if !(mass > 0) {
		return
	}
	for _, x := range pts {
		if x.p > 0 {
			l.hist.add(x.s, sign*x.p/mass)
		}
	}
}

// rate is λ over the window: the jobs after the oldest over the time since
// it, in jobs per second; 0 until boostMinJobs have arrived.
func (l *boostLoad) rate() float64 {
	if l.n < boostMinJobs {
		return 0
	}
	oldest := l.times[(l.next-l.n+boostWindow)%boostWindow]
	newest := l.times[(l.next-1+boostWindow)%boostWindow]
	if !(newest > oldest) {
		return 0
	}
	return float64(l.n-1) / (newest - oldest)
}

// gamma is γ from the window, and whether the equation has a root there
// (see solveGamma): the load below 1.
func (l *boostLoad) gamma() (float64, bool) {
	return solveGamma(l.rate(), &l.hist)
}

// gammaScaled is γ for sizes k times the histogram's, in the histogram's
// unit (γ·k): with S = k·s, γ = λ(E[e^{γks}] − 1) is u = kλ(E[e^{us}] − 1)
// for u = γk, so the histogram's γ at the rate kλ.
func (l *boostLoad) gammaScaled(k float64) (float64, bool) {
	return solveGamma(k*l.rate(), &l.hist)
}

// load is λ·E[S] over the window.
func (l *boostLoad) load() float64 { return l.rate() * l.hist.mean() }
