package policy

import "github.com/pitstop-llm/pitstop/engine"

// laneOverdue is the deadline lane's starvation signal read from the
// waiting calls (PitstopTail "aging+warm+first-final-gated-fit-overdue"): a
// call is overdue when it has not started and arrival order would already
// have finished it (now past its arrival-order deadline, fcfsShadow's end
// for it). At each full re-rank the overdue calls are counted among the
// waiting ones; while the overdue calls of the last complete re-rank and
// the finished calls past the lane's bar are together more than 1 % of the
// waiting calls and the realized window (the gate's own quantile), an
// overdue call goes ahead of the rank in the lane (earliest due first), if
// it fits in the free blocks (promotionFit) as the lane's other
// promotions.
//
// Why: under a lasting overload the rank holds back a class, not a few
// calls (azure-conv @6: ~300 calls of 300–600 output tokens, each
// overtaken by hundreds of later calls; docs/results-policies.md, sessions
// 14 and 16), and every signal fed by finished calls sees it when the
// starved calls finish, 250–400 s after they start to starve: in the last
// burst the calls the rank holds back are a fraction of a percent of those
// finishing. The waiting calls show it while they wait: from 1,550 s the
// overdue calls are 1–7 % of those waiting (session 17). The lane's own
// laxity test does not: it needs the rest of a call predicted, and there
// the predicted rest is short of the real one, so no waiting call's laxity
// ran out before it started. "Arrival order would have finished it" needs
// no prediction of the rest past the shadow's own, which learns its scale
// from the finished calls, and no constant: a call still waiting then is
// later than arrival order by at least its own time. The 1 % is the p99's
// own definition.
type laneOverdue struct {
	late, seen int // the last complete re-rank's overdue and waiting calls
	cur, curN  int // the current re-rank's
	// fresh is how many calls the last complete re-rank found overdue for
	// the first time (freshN the current one's): each call is counted
	// once, for the "-each" weight (rankTrust.each).
	fresh, freshN int
}

// overdue reports whether the call has not started and arrival order would
// already have finished it.
func overdue(v *engine.View, s *engine.Sequence, st *callState) bool {
	return st.hasDeadline && firstWait(s) && v.Now.Seconds() > st.deadline
}

// note counts a waiting call ranked at the current full re-rank.
func (o *laneOverdue) note(late bool, st *callState) {
	o.curN++
	if late {
		o.cur++
		if !st.overdueSeen {
			st.overdueSeen = true
			o.freshN++
		}
	}
}

// roll closes a re-rank: its counts hold for the gate until the next one.
func (o *laneOverdue) roll() {
	o.late, o.seen, o.cur, o.curN = o.cur, o.curN, 0, 0
	o.fresh, o.freshN = o.freshN, 0
}

// tailOverdue is the overdue promotion's gate: the finished calls of the
// realized window past the lane's bar plus the overdue waiting calls, more
// than 1 % of the window and the waiting calls together.
func (d *deadlineLane) tailOverdue() bool {
	if d.edf == nil || d.overdue == nil {
		return false
	}
	bar := d.bar()
	if bar <= 0 {
		return false
	}
	if _, ok := d.edf.realized.p99(); !ok {
		return false
	}
	done := d.edf.realized.sorted
	late := len(done) - firstAbove(done, bar) + d.overdue.late
	return 100*late > len(done)+d.overdue.seen
}

// overdueUrgent reports whether the lane promotes the waiting call as
// overdue, counting it at a full re-rank.
func (d *deadlineLane) overdueUrgent(v *engine.View, s *engine.Sequence, st *callState) bool {
	if d.overdue == nil {
		return false
	}
	late := overdue(v, s, st)
	if c := d.overdueCheck; late && c != nil && !c.honest(d.referenceWait, d.referenceKnown) {
		late = false // the shadow's deadlines run early: no evidence (shadowCheck)
	}
	if v.Iteration == d.rerankAt {
		d.overdue.note(late, st)
	}
	return late && d.tailOverdue()
}
