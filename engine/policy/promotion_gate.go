package policy

// tailPastArrivalOrder is the deadline lane's trigger (PitstopTail
// "aging+warm+first-final-gated"): the lane promotes only while the p99 of
// the end-to-end times this policy has produced lately (edfSchedule's
// realized window) is past arrival order's p99 for the same calls (the
// larger of the shadow queue's p99 and fcfsReference's T, times the
// deadline slack: the floor the lane's deadlines already hold, due).
//
// Why: a promotion serves a call ahead of the ones the rank puts first, so
// the mean pays for it (at azure-code @1 the promoted long prompts gained
// 582 s and the short calls they went ahead of lost 2,546 s: the mean 6.44
// s against 5.58; docs/results-policies.md, session 12). It buys only a
// p99, and the bar is arrival order's p99: while the realized p99 is within
// it, the calls past their arrival-order deadlines are no more than the 1 %
// arrival order itself leaves there, and a promotion buys nothing the bar
// counts. The two p99s are the ones the lane already learns online: no
// constant.
func (d *deadlineLane) tailPastArrivalOrder() bool {
	if d.edf == nil {
		return false
	}
	fcfs, ok := d.shadow.tail()
	if !ok {
		return false
	}
	p, ok := d.edf.realized.p99()
	return ok && p > d.slackOr1()*max(fcfs, d.reference)
}
