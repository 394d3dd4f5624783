package policy

import (
	"math"

	"github.com/pitstop-llm/pitstop/engine"
)

// deadlineLane is pitstop's least-laxity promotion against per-call
// arrival-order deadlines (PitstopTail "deadline", "aging+deadline"): each
// call's deadline is the time it would end under arrival order
// (fcfsShadow), no earlier than arrival order's p99 after its arrival (due;
// PitstopDeadlineExact drops that floor), and a waiting call goes ahead of
// the ranked calls, earliest deadline first, once its laxity (deadline −
// now − the predicted rest of its own time) falls below the time it must
// wait for what goes ahead of it: the device time of the calls promoted at
// the last full re-rank, spread over the shadow's slots, plus the time to
// the next re-rank (a call is only promoted at one). Otherwise pitstop's rank decides. EDF is optimal for
// meeting deadlines on one server, and the arrival-order deadlines are
// feasible by construction (arrival order meets them); the rank keeps the
// mean wherever a call still has room.
//
// With feasible (PitstopDeadlineFeasible) a call whose laxity is already
// negative is left to the rank: it will miss its deadline anyway, and for a
// tail quantile serving it first spends the device on a call the quantile no
// longer counts (Moore–Hodgson, as the rescue lane).
type deadlineLane struct {
	shadow   fcfsShadow
	slack    float64 // the own time's factor in the deadline
	feasible bool    // only calls that can still make their deadline
	exact    bool    // each call's own deadline alone, without the p99 floor
	// edf, when set (PitstopTail "aging+feasible"), promotes a call only if
	// it is feasible in the EDF schedule of the promoted calls (edfSchedule).
	edf *edfSchedule
	// fit, when set (PitstopTail "aging+feasible-fit"), promotes a call only
	// if its admission evicts nothing (promotionFit).
	fit *promotionFit
	// first, when set (PitstopTail "aging+warm+first"), promotes only a
	// call that has not started (firstWait).
	first bool
	// final, when set (PitstopTail "aging+warm+final"), promotes only a
	// call with no tool ahead (finalStretch); with first, a call that is
	// either.
	final bool
	// swap, when set (PitstopTail "aging+warm+swap"), promotes a call only
	// if its admission evicts by swaps alone (promotionSwap).
	swap *promotionSwap
	// gated, when set (PitstopTail "aging+warm+first-final-gated"), lets
	// the lane promote only while its realized p99 is past arrival order's
	// (tailPastArrivalOrder).
	gated bool
	// sure, when set (PitstopTail "aging+warm+first-final-sure-fit"),
	// lets it promote only while the realized p99 is past arrival order's
	// with 95 % confidence (tailSurelyPastArrivalOrder).
	sure bool
	// forecast, when set (PitstopTail "aging+warm+first-final-forecast-fit"),
	// lets it promote only while the finished calls past arrival order's
	// p99 and the waiting calls forecast past their due are more than 1 %
	// (tailForecastPastArrivalOrder).
	forecast *laneForecast
	// wake, when set (PitstopTail "aging+warm+first-final-gated-wake"),
	// promotes a call at the re-rank its laxity runs out by, which it asks
	// for, instead of at the last periodic one before (laneWake).
	wake *laneWake
	// overdue, when set (PitstopTail "...-gated-fit-overdue"), also
	// promotes the waiting calls arrival order would already have finished,
	// while they and the finished calls past the bar pass 1 % (laneOverdue).
	overdue *laneOverdue
	// overdueCheck, with overdue (PitstopTail "...-checked"), reads the
	// overdue test only while the shadow's mean end-to-end time is not
	// below arrival order's by the conservation law (shadowCheck), whose
	// wait is referenceWait (known: referenceKnown), set at each full re-rank.
	overdueCheck   *shadowCheck
	referenceWait  float64
	referenceKnown bool
	// lag, when set (PitstopTail "aging+warm+first-lag"), is added to a
	// candidate's predicted rest (promotionLag).
	lag *promotionLag
	// reference is fcfsReference's T (the conservation-law estimate of
	// arrival order's p99), set at each full re-rank: the floor is the
	// larger of the two estimates, since both fall short of the real p99
	// (the shadow leaves out swaps, recompute and tools holding memory; T
	// the spread of the waits).
	reference float64
	// ahead is the device seconds of the calls promoted at the last full
	// re-rank; next sums them for the current one.
	ahead, next float64
	rerankAt    int64   // the iteration of the current full re-rank
	interval    float64 // seconds between the last two full re-ranks
	lastRerank  float64 // when the last full re-rank ran, seconds
}

// deadlineSlack is the own time's default factor in a deadline: arrival
// order's own time, no more.
const deadlineSlack = 1.0

// slackOr1 is the slack, deadlineSlack when unset.
func (d *deadlineLane) slackOr1() float64 {
	if d.slack <= 0 {
		return deadlineSlack
	}
	return d.slack
}

// deadlineOf is the call's arrival-order deadline, placing it in the
// shadow the first time it is asked (its first rank, at its arrival).
func (d *deadlineLane) deadlineOf(v *engine.View, s *engine.Sequence, st *callState) float64 {
	if !st.hasDeadline {
		a := s.Arrival().Seconds()
		start, end := d.shadow.enter(v, a, d.shadow.workOf(v, s, st), meanContext(s, st))
		st.deadline, st.hasDeadline = start+d.slackOr1()*(end-start), true
		st.shadowOwn = d.shadow.lastOwn
		d.shadow.record(end - a)
	}
	return st.deadline
}

// due is the deadline the lane holds the call to: its arrival-order
// deadline, but no earlier than its arrival plus slack times arrival
// order's p99 (the shadow's or T, the larger; unless exact). The bar is a p99: a call that
// ends within arrival order's p99 does not count against it, whatever its
// own deadline, and if every call ends by the later of the two, no more
// calls pass that p99 than under arrival order (those whose own deadline
// is past it). Without the floor every call that waits at all is held to
// its own deadline, and the lane takes the device at any load (session 9's
// first screening, docs/results-policies.md).
func (d *deadlineLane) due(v *engine.View, s *engine.Sequence, st *callState) float64 {
	dl := d.deadlineOf(v, s, st)
	if t, ok := d.shadow.tail(); ok && !d.exact {
		dl = max(dl, s.Arrival().Seconds()+d.slackOr1()*max(t, d.reference))
	}
	return dl
}

// bar is the lane's p99 bar in seconds (slack × the larger of the
// shadow's p99 and T), 0 while the shadow has none.
func (d *deadlineLane) bar() float64 {
	t, ok := d.shadow.tail()
	if !ok {
		return 0
	}
	return d.slackOr1() * max(t, d.reference)
}

// urgent reports whether the waiting call goes ahead now, and its deadline.
func (d *deadlineLane) urgent(v *engine.View, s *engine.Sequence, st *callState) (float64, bool) {
	dl := d.due(v, s, st)
	if !d.promotable(s) {
		return dl, false // started, or a tool ahead: it waits in the rank
	}
	if d.overdueUrgent(v, s, st) {
		return dl, d.promote(v, s, st, dl) // starved: arrival order would have finished it
	}
	if d.gated && !d.tailPastArrivalOrder() {
		return dl, false // the tail is arrival order's: a promotion buys no bar
	}
	if d.sure && !d.tailSurelyPastArrivalOrder() {
		return dl, false // the tail may be arrival order's: a promotion may buy no bar
	}
	if d.forecast != nil && !d.tailForecastPastArrivalOrder() {
		return dl, false // neither the finished calls nor the queue make a tail past arrival order's
	}
	if k := keyOf(s); st.restFor != k {
		st.restDev, st.restTool = restParts(v, s, st)
		st.restFor = k // a waiting call keeps its rest across re-ranks
	}
	dev, tool := st.restDev, st.restTool
	late := 0.0
	if d.lag != nil {
		late = d.lag.lag()
	}
	lax := dl - v.Now.Seconds() - dev - tool - late
	if d.feasible && lax < 0 {
		return dl, false
	}
	need := d.interval + d.ahead/float64(d.shadow.servers())
	if d.wake != nil {
		// the next re-rank the lane can ask for is the next iteration's
		need = d.ahead/float64(d.shadow.servers()) + v.Cost.IterTime(v.Running+1)
		if lax >= need {
			d.wake.deferTo(v.Now.Seconds() + lax - need)
		}
	}
	if lax >= need {
		return dl, false
	}
	if d.edf != nil && !d.edf.feasible(dl, d.edf.bound(s.Arrival().Seconds(), dl)-v.Now.Seconds()-dev-tool-late, d.shadow.servers()) {
		return dl, false // overload: it misses behind the EDF calls ahead anyway
	}
	if d.fit != nil && !d.fit.fits(v, s, st) {
		return dl, false // it would buy its place with evictions: it waits in the rank
	}
	return dl, d.promoteFitting(v, s, st, dl, dev, late)
}

// promote is a promotion past the laxity tests (laneOverdue): it still
// fits in the free blocks or waits in the rank, and counts as promoted.
func (d *deadlineLane) promote(v *engine.View, s *engine.Sequence, st *callState, dl float64) bool {
	if d.fit != nil && !d.fit.fits(v, s, st) {
		return false // it would buy its place with evictions: it waits in the rank
	}
	if k := keyOf(s); st.restFor != k {
		st.restDev, st.restTool = restParts(v, s, st)
		st.restFor = k
	}
	return d.promoteFitting(v, s, st, dl, st.restDev, 0)
}

// promoteFitting is the end of a promotion once the call fits: the swap,
// slack and lag filters, and the device time it puts ahead of the next
// re-rank's candidates.
func (d *deadlineLane) promoteFitting(v *engine.View, s *engine.Sequence, st *callState, dl, dev, late float64) bool {
	if d.swap != nil && !d.swap.fits(v, s, st) {
		return false // it would buy its place with discards: it waits in the rank
	}
	if d.forecast != nil && !d.forecast.fitsSlack(st) {
		return false // it would push a call the forecast has in time past its due
	}
	if d.lag != nil {
		d.lag.mark(v, s, st)
	}
	if v.Iteration == d.rerankAt {
		d.next += dev
		if d.edf != nil {
			d.edf.add(dl, dev)
		}
	}
	return true
}

// promotable reports whether the lane's call tests (firstWait,
// finalStretch) let s be promoted: with both on, either suffices.
func (d *deadlineLane) promotable(s *engine.Sequence) bool {
	switch {
	case d.first && d.final:
		return firstWait(s) || finalStretch(s)
	case d.first:
		return firstWait(s)
	case d.final:
		return finalStretch(s)
	}
	return true
}

// rerank starts a full re-rank at the view's iteration: the calls promoted
// in the last one set the time the next promoted calls must allow for.
func (d *deadlineLane) rerank(v *engine.View) {
	now := v.Now.Seconds()
	if d.forecast != nil {
		d.forecast.roll() // the calls the last re-rank noted
		if g := d.forecast.guard; g != nil && d.rerankAt > 0 {
			g.note(now, d.forecast.seen, d.bar()) // the last re-rank's backlog, one re-rank late
		}
	}
	if d.overdue != nil {
		d.overdue.roll() // the waiting calls the last re-rank counted
	}
	if d.rerankAt > 0 {
		if d.edf != nil {
			d.edf.roll()
		}
		d.ahead = d.next
		d.interval = math.Max(now-d.lastRerank, 0)
	}
	d.next, d.rerankAt, d.lastRerank = 0, v.Iteration, now
	if d.fit != nil {
		d.fit.rerank(v)
	}
	if d.wake != nil {
		d.wake.reset()
	}
	if d.swap != nil {
		d.swap.rerank(v)
	}
}

// observe records a finished call's end-to-end time for the EDF test, and
// a promoted call's lag.
func (d *deadlineLane) observe(e *engine.Event) {
	if d.lag != nil && e.Seq != nil && !e.Seq.Cancelled() && e.Err == nil {
		d.lag.observe(e)
	}
	if d.edf == nil || e.Kind != engine.EvFinished || e.Seq.Cancelled() || e.Err != nil {
		return
	}
	d.edf.realized.record((e.Seq.FinishedAt() - e.Seq.Arrival()).Seconds())
}
