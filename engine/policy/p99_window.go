package policy

import "slices"

// p99Window keeps a time of each of the last fcfsWindow finished calls (an
// end-to-end time, or fcfsReference's own time) and their 99th percentile,
// refreshed every fcfsEvery calls, and the highest of those percentiles so
// far (peak99). The shadow queue, fcfsReference and edfSchedule each keep one.
type p99Window struct {
	times, sorted []float64
	n             int
	q99, peak     float64
}

// record adds a finished call's time, seconds.
func (w *p99Window) record(e2e float64) {
	if len(w.times) < fcfsWindow {
		w.times = append(w.times, e2e)
	} else {
		w.times[w.n%fcfsWindow] = e2e
	}
	w.n++
	if w.n%fcfsEvery == 0 || w.n == fcfsMinCalls {
		w.sorted = append(w.sorted[:0], w.times...)
		slices.Sort(w.sorted)
		w.q99 = w.sorted[(len(w.sorted)*99)/100]
		w.peak = max(w.peak, w.q99)
	}
}

// p99 is the window's 99th percentile, and whether enough calls finished
// to know it.
func (w *p99Window) p99() (float64, bool) { return w.q99, w.n >= fcfsMinCalls }

// peak99 is the highest p99 the window has had, and whether enough calls
// finished to know one. It does not fall when the policy shortens its own
// tail (edfSchedule.bound with floor).
func (w *p99Window) peak99() (float64, bool) { return w.peak, w.n >= fcfsMinCalls }
