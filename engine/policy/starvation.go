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
	threshold int64 // < 0: off
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

// ranked records a ranking of s and reports whether s is starving: it has
// not run for threshold iterations (sticky: it stays at the head until it
// finishes, LAMPS §4.4).
func (t *starvation) ranked(v *engine.View, s *engine.Sequence, st *callState) bool {
	st.rankedAt = v.Iteration
	if st.starved || t.threshold < 0 {
		return st.starved
	}
	waited := v.Starvation(s)
	lim := t.threshold
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
		if v.Starvation(e.s) >= t.threshold {
			t.pending = true
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
