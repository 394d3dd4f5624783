package policy

// arrivalRate is the rate at which calls join the prefill backlog (balance's
// "-arrivals"): calls per second and prompt tokens per second, over the
// last arrivalSample arrivals (a call's prompt, or a resumed call's
// uncomputed context). The span runs to now, so a rate decays when
// arrivals stop. The sample size sets the estimate's precision (a Poisson
// count of 32 is within about 18 % of its mean), not a fit to a workload.
type arrivalRate struct {
	at   [arrivalSample]float64
	n    [arrivalSample]int
	next int // ring position of the oldest entry once full
	size int
	sum  int
}

const arrivalSample = 32

func (r *arrivalRate) add(t float64, tokens int) {
	if r.size == arrivalSample {
		r.sum -= r.n[r.next]
	} else {
		r.size++
	}
	r.at[r.next], r.n[r.next] = t, tokens
	r.sum += tokens
	r.next = (r.next + 1) % arrivalSample
}

// rate is (calls per second, tokens per second) over the span from the
// oldest arrival kept to now; 0 with fewer than two arrivals seen.
func (r *arrivalRate) rate(now float64) (calls, tokens float64) {
	if r.size < 2 {
		return 0, 0
	}
	oldest := r.at[0]
	if r.size == arrivalSample {
		oldest = r.at[r.next]
	}
	span := now - oldest
	if span <= 0 {
		return 0, 0
	}
	return float64(r.size) / span, float64(r.sum) / span
}
