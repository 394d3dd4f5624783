package policy

import "github.com/pitstop-llm/pitstop/engine"

// starvation is LAMPS's starvation counter (§4.4) kept without scanning
// every waiting call each iteration: a call the engine has not re-ranked has
// not run since (running makes it dirty), so the calls are queued in the
// order they were last ranked, each with the iteration its counter reaches
// the threshold. A look every `every` iterations pops the entries that are
// due; if one of them still has not run, every runnable call is re-ranked and
// Priority marks the starving ones. A preempted call may be found up to one
// threshold late (its entry sits behind later-due ones); the amortized cost is
// O(1) per ranking.
type starvation struct {
	threshold int64   // < 0: off
	relative  float64 // > 0: the threshold is max(threshold, relative × p99 of waits)
	waits     waitHistogram
	every     int64
	fifo      []starveEntry
	head      int
	pending   bool
	lastCheck int64
}

type starveEntry struct {
	s   *engine.Sequence
	at  int64 // iteration it was ranked
	due int64 // iteration its counter reaches the threshold
}

func newStarvation(o Options) starvation {
	return starvation{threshold: o.StarvationThreshold, every: o.StarvationCheck}
}

// limit is the number of iterations without running that makes a call
// starving now.
func (t *starvation) limit() int64 {
	if t.relative <= 0 {
		return t.threshold
	}
	return max(t.threshold, int64(t.relative*t.waits.quantile(0.99)))
}

// waitHistogram is a decaying log-bucket histogram of the iterations calls
// waited before they ran: buckets grow by 25%, counts halve every 4,096
// samples so that it follows the load.
type waitHistogram struct {
	n     [64]float64
	total float64
	adds  int
}

func waitBucket(w int64) int {
	b, x := 0, float64(w)+1
	for x >= 1.25 && b < 63 {
		x /= 1.25
		b++
	}
	return b
}

func (h *waitHistogram) add(w int64) {
	h.n[waitBucket(w)]++
	h.total++
	h.adds++
	if h.adds%4096 == 0 {
		for i := range h.n {
			h.n[i] /= 2
		}
		h.total /= 2
	}
}

// quantile is the upper edge of the bucket holding quantile q, in iterations.
func (h *waitHistogram) quantile(q float64) float64 {
	if h.total == 0 {
		return 0
	}
	need, acc := (1-q)*h.total, 0.0
	for b := len(h.n) - 1; b >= 0; b-- {
		acc += h.n[b]
		if acc > need {
			x := 1.0
			for range b + 1 {
				x *= 1.25
			}
			return x - 1
		}
	}
	return 0
}

// ranked records a ranking of s and reports whether s is starving: it has
// not run for threshold iterations (sticky: it stays at the head until it
// finishes, LAMPS §4.4).
func (t *starvation) ranked(v *engine.View, s *engine.Sequence, st *callState) bool {
	st.rankedAt = v.Iteration
	if st.starved || t.threshold < 0 {
		return st.starved
	}
	if t.relative > 0 { // sample how long calls wait before they run
		switch {
		case s.State() != engine.Running && !st.waiting:
			st.waiting, st.readyIter = true, v.Iteration-v.Starvation(s)
		case s.State() == engine.Running && st.waiting:
			st.waiting = false
			t.waits.add(max(v.Iteration-1-st.readyIter, 0))
		}
	}
	waited := v.Starvation(s)
	lim := t.limit()
	if waited >= lim {
		st.starved = true
		return true
	}
	if s.Runnable() {
		t.fifo = append(t.fifo, starveEntry{s: s, at: v.Iteration, due: v.Iteration + lim - waited})
	}
	return false
}

// refresh reports whether a starving call waits for a re-rank (at most once
// every `every` iterations).
func (t *starvation) refresh(v *engine.View) bool {
	if t.threshold < 0 {
		return false
	}
	for t.head < len(t.fifo) && t.fifo[t.head].due <= v.Iteration {
		e := t.fifo[t.head]
		t.fifo[t.head] = starveEntry{}
		t.head++
		st := stateOf(e.s)
		if st.rankedAt != e.at || st.starved || !e.s.Runnable() {
			continue
		}
		if w, lim := v.Starvation(e.s), t.limit(); w >= lim {
			t.pending = true
		} else { // the threshold rose meanwhile: look again when it is due
			t.fifo = append(t.fifo, starveEntry{s: e.s, at: e.at, due: v.Iteration + lim - w})
		}
	}
	if t.head > 1024 && t.head*2 > len(t.fifo) {
		n := copy(t.fifo, t.fifo[t.head:])
		clear(t.fifo[n:])
		t.fifo = t.fifo[:n]
		t.head = 0
	}
	if t.pending && v.Iteration-t.lastCheck >= t.every {
		t.pending = false
		t.lastCheck = v.Iteration
		return true
	}
	return false
}
