package policy

import "github.com/pitstop-llm/pitstop/engine"

// promotionLag is the deadline lane's learned lag (PitstopTail
// "aging+warm+first-lag"): how much later than predicted the calls the lane
// promoted reached the end of the device work they were promoted for (their
// next pause on a tool, or their end), the mean over the last fcfsWindow of
// them (never below zero). Measured to the next pause, not to the call's
// end: a call with several tools has later segments no prediction covers. The lane adds it to a candidate's predicted rest, in its laxity and
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

// mark records, at its first promotion, when the call's device work up to
// its next pause or its end is predicted to be done (segmentRest).
func (l *promotionLag) mark(v *engine.View, s *engine.Sequence, st *callState) {
	if !st.laneMarked {
		st.laneEnd, st.laneMarked = v.Now.Seconds()+segmentRest(v, s, st), true
	}
}

// observe records a promoted call's lag at its next pause or its end.
func (l *promotionLag) observe(e *engine.Event) {
	if e.Kind != engine.EvPaused && e.Kind != engine.EvFinished {
		return
	}
	st := stateOf(e.Seq)
	if !st.laneMarked || st.laneMeasured {
		return
	}
	st.laneMeasured = true
	l.record(e.Time.Seconds() - st.laneEnd)
}

// segmentRest is restOfService's device time up to the call's next pause
// or its end: its prefill left and its predicted output before the tool.
func segmentRest(v *engine.View, s *engine.Sequence, st *callState) float64 {
	return float64(decodeLeft(s.Forecast().Predicted, s, st))*v.Cost.IterTime(v.Running+1) + prefillTime(v, s)
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
