package policy

import "slices"

// e2eWindow keeps the end-to-end times of the last fcfsWindow finished
// calls and their 99th percentile, refreshed every fcfsEvery calls (as the
// shadow's and fcfsReference's windows), and the highest of those
// percentiles so far (peak99).
type e2eWindow struct {
	times, sorted []float64
	n             int
	q99, peak     float64
}

// record adds a finished call's end-to-end time, seconds.
func (w *e2eWindow) record(e2e float64) {
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
func (w *e2eWindow) p99() (float64, bool) { return w.q99, w.n >= fcfsMinCalls }

// peak99 is the highest p99 the window has had, and whether enough calls
// finished to know one. It does not fall when the policy shortens its own
// tail (edfSchedule.bound with floor).
func (w *e2eWindow) peak99() (float64, bool) { return w.peak, w.n >= fcfsMinCalls }
