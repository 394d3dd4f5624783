package policy

import "github.com/pitstop-llm/pitstop/engine"

// shadowCheck tests the arrival-order shadow's deadlines against the
// conservation law (PitstopTail "...-overdue-trust-each-checked"): over the
// finished calls, the mean of the shadow's end-to-end times (deadline less
// arrival) against arrival order's mean from fcfsReference (its wait, the
// service-weighted mean wait of the calls, plus their mean own time). The
// overdue test is read only while the shadow is not below it.
//
// Why: the overdue signal is only as honest as the shadow's deadlines, and
// they run early where the shadow leaves out what the engine pays (swaps,
// recompute, tools holding memory) or its scale cancels its queue
// (docs/results-policies.md, session 14: the shadow's mean 0.54x fcfs's on
// azure-code @1.35, 0.36x on chat, 1.04x on azure-conv @6). Against early
// deadlines more than 1 % of the waiting calls are overdue under any order,
// arrival order included, and the weight's controller flattens the rank
// where no tail needs it (session 17). The conservation law needs no run of
// arrival order; both means are over about the last fcfsWindow calls.
type shadowCheck struct {
	shadow, own float64 // decayed means, seconds
	n           int
	band        *shadowBand // with "-evident", the test over the wait's window with a band (shadow_band.go)
}

// observe records a finished call's shadow end-to-end time and own time.
func (c *shadowCheck) observe(e *engine.Event) {
	if c.band != nil {
		c.band.observe(e)
		return
	}
	if e.Kind != engine.EvFinished || e.Seq.Cancelled() || e.Err != nil {
		return
	}
	st := stateOf(e.Seq)
	if !st.hasDeadline {
		return
	}
	a := e.Seq.Arrival().Seconds()
	own := (e.Seq.FinishedAt() - e.Seq.Arrival()).Seconds() - e.Seq.Waited().Seconds()
	alpha := max(1/float64(c.n+1), 1.0/fcfsWindow) // the plain mean until the window fills
	c.shadow += alpha * (st.deadline - a - c.shadow)
	c.own += alpha * (own - c.own)
	c.n++
}

// honest reports whether the shadow's mean end-to-end time is at least
// arrival order's by the conservation law (wait w), and whether enough
// calls finished to tell; until then it is taken as honest.
func (c *shadowCheck) honest(w float64, ok bool) bool {
	if c.band != nil {
		return c.band.honest() // its own wait over the same calls
	}
	if !ok || c.n < fcfsMinCalls {
		return true
	}
	return c.shadow >= w+c.own
}
