package policy

import "github.com/pitstop-llm/pitstop/engine"

// promotionLag is the deadline lane's learned lag (PitstopTail
// "aging+warm+first-lag"): how much later than predicted the calls the lane
// promoted ended, the mean over the last fcfsWindow of them (never below
// zero). The lane adds it to a candidate's predicted rest, in its laxity and
// in the EDF test, so a call is promoted as early as the promoted calls
// turn out to need.
//
// Why: a call's predicted rest (restOfService) counts its prefill at the
// whole token budget and its decode at a batch of decodes alone, but a
// promoted call shares each iteration's budget with the running calls
// ranked before it and decodes in iterations full of their prefill chunks;
// so promoted calls end past their deadlines (azure-code @3.125: 55 % of
// them, by 9.1 s on average; docs/results-policies.md, session 10), which
// on azure-code is the margin by which the lane misses arrival order's p99
// (127.0 s against fcfs's 121.1 s at 3.25 programs/s). The lag is measured
// on the calls the lane promotes, under the load they meet: no constant.
type promotionLag struct {
	late []float64 // finish less predicted end, seconds, a ring of fcfsWindow
	n    int       // promoted calls finished
	sum  float64   // the ring's sum
}

// mark records, at its first promotion, when a call is predicted to end.
func (l *promotionLag) mark(st *callState, end float64) {
	if !st.laneMarked {
		st.laneEnd, st.laneMarked = end, true
	}
}

// observe records a finished call's lag if the lane promoted it.
func (l *promotionLag) observe(e *engine.Event) {
	st := stateOf(e.Seq)
	if !st.laneMarked {
		return
	}
	l.record(e.Seq.FinishedAt().Seconds() - st.laneEnd)
}

// record adds a promoted call's lag, seconds.
func (l *promotionLag) record(late float64) {
	if len(l.late) < fcfsWindow {
		l.late = append(l.late, late)
	} else {
		i := l.n % fcfsWindow
		l.sum -= l.late[i]
		l.late[i] = late
	}
	l.sum += late
	l.n++
}

// lag is the mean lag of the promoted calls that finished lately, seconds:
// 0 until fcfsMinCalls of them finished, and never below 0.
func (l *promotionLag) lag() float64 {
	if l.n < fcfsMinCalls {
		return 0
	}
	return max(l.sum/float64(len(l.late)), 0)
}
