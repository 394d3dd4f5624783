package policy

import (
	"slices"
)

// restIndex is the Gittins index of a program's remaining service, with
// everything the policy knows about it inside the index rather than beside
// it: the program's attained service (as gittinsTable) and the waiting
// call's own predicted rest (its memory-over-time, m). The program still
// needs R = m + F: the call's rest, known from its forecast, then F, what
// the program's later calls will need. F is 0 with probability q (the call
// is the program's last; learned as completed programs per call, and 0
// while another call of the program is in the engine) and otherwise
// distributed as S − b given S > b, S the learned total service of
// programs (programModel's samples) and b the program's attained service
// when the call ends (attained plus the call's rest), scaled by the average
// context a second of service holds, so that F is in m's unit.
//
// The index is G = sup_Δ P(R ≤ Δ) / E[min(R, Δ)] (Gittins; Aalto, Ayesta
// and Righter 2009), and the call's key is 1/G, the effective remaining
// work, lowest first. No stopping point below m completes anything, so the
// candidates are Δ = m (the call is the last: index q/m) and Δ = m plus the
// survivors' residuals. Three cases follow from the learned distribution
// alone, with no threshold on it:
//
//   - Every program is a single call (q = 1): the key is m, exactly the
//     call's memory-over-time order (byCall), whatever the distribution.
//   - Decreasing hazard (heavy tail): S − b grows with b, so a program that
//     has attained more ranks later: least attained service first.
//   - Increasing hazard (programs of about one size): S − b shrinks as b
//     grows, so the programs that are further along finish first: close to
//     arrival order of programs.
//
// For each of gittinsPoints·2 points b (the quantiles of the samples and
// even steps over their range, as gittinsTable), the rebuild keeps up to
// restCandidates stopping points (the survivors' quantiles): the fraction
// of survivors done by Δ and E[min(S − b, Δ) | S > b]; a lookup is a binary
// search and restCandidates divisions.
type restIndex struct {
	at   []float64   // b, ascending, below the largest sample
	done [][]float64 // per b: P(S − b ≤ Δ_j | S > b)
	work [][]float64 // per b: E[min(S − b, Δ_j) | S > b], seconds
	max  float64     // the largest sample
}

const restCandidates = 32

// build tabulates the stopping points over sorted samples (ascending) with
// suffix sums suffix[i] = Σ sorted[i:].
func (r *restIndex) build(sorted, suffix []float64) {
	n := len(sorted)
	r.at, r.done, r.work, r.max = r.at[:0], r.done[:0], r.work[:0], 0
	if n == 0 {
		return
	}
	r.max = sorted[n-1]
	for _, b := range gittinsGrid(sorted) {
		i := firstAbove(sorted, b)
		if i == n {
			continue // at the largest sample: lookups use the fallback
		}
		left := n - i
		var done, work []float64
		prev := -1
		for k := 1; k <= restCandidates; k++ {
			j := i + (k*left+restCandidates-1)/restCandidates - 1 // the last survivor at quantile k/restCandidates
			if j == prev {
				continue
			}
			prev = j
			c := float64(j - i + 1)
			// Σ_{k=i..j} (s_k − b) for those done by Δ_j = s_j − b, Δ_j for the rest.
			w := (suffix[i] - suffix[j+1]) - c*b + float64(n-1-j)*(sorted[j]-b)
			done, work = append(done, c/float64(left)), append(work, w/float64(left))
		}
		r.at, r.done, r.work = append(r.at, b), append(r.done, done), append(r.work, work)
	}
}

// firstAbove is the index of the first sample above b (len if none).
func firstAbove(sorted []float64, b float64) int {
	i, _ := slices.BinarySearch(sorted, b)
	for i < len(sorted) && sorted[i] <= b {
		i++
	}
	return i
}

// key is 1/G for a call whose own rest is m (memory-over-time), whose
// program will have attained b seconds of service when the call ends, and
// which is its program's last with probability q; scale converts seconds
// of service to m's unit. With q = 1 it is m exactly. The table's point at
// or below b stands for b (the survivors there include b's). A program at
// or past the largest sample is expected to need as much again as it has
// had (programModel.residual's rule): F = b.
func (r *restIndex) key(m, b, q, scale float64) float64 {
	if q >= 1 || len(r.at) == 0 {
		return m
	}
	q = max(q, 0)
	best := m / q // Δ = m: done only if this call is the last (+Inf at q = 0)
	if b >= r.max {
		return min(best, m+(1-q)*scale*b)
	}
	i, found := slices.BinarySearch(r.at, b)
	if !found {
		i--
	}
	i = max(i, 0)
	for j, d := range r.done[i] {
		best = min(best, (m+(1-q)*scale*r.work[i][j])/(q+(1-q)*d))
	}
	return best
}
