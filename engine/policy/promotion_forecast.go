package policy

import (
	"cmp"
	"math"
	"slices"
)

// laneForecast is the deadline lane's trigger that reads the queue as well
// as the finished calls (PitstopTail "aging+warm+first-final-forecast-fit"):
// at each full re-rank every waiting call is noted with its place in the
// rank, its prefill and its predicted rest; at the next one the calls are
// walked in rank order, each predicted to end at the time it was noted plus
// the prefill of the calls ranked ahead of it plus its own rest, and the
// ones predicted past their due time are counted. The lane then promotes
// while the finished calls past arrival order's p99 and the waiting calls
// forecast past their due are together more than 1 % of both
// (tailForecastPastArrivalOrder).
//
// Why: tailPastArrivalOrder reads only finished calls, and in a burst the
// calls that will make the tail have not finished: at azure-code @1.125 the
// burst's 7,000-token prompts wait 45–52 s in the queue while the gate
// stays shut, and open it only when their laxity is gone
// (docs/results-policies.md, session 14). The forecast counts them while
// they still wait. The prefill ahead is summed on one server: the token
// budget serves prefill chunks one after another, as the shadow's prefill
// queue does; each call's part is its tokens' share of the budget
// (prefillShare), since short prompts share a chunk; the 1 % is the p99's own definition, no constant fitted.
type laneForecast struct {
	noted      []forecastCall
	at         float64 // when the current re-rank noted its calls, seconds
	late, seen int     // the last complete re-rank's forecast
	// slack, when set (PitstopTail "...-forecast-slack-fit"), promotes a
	// call only while the prefill promoted ahead of the in-time calls it
	// overtakes fits in their slack (fitsSlack); spent is what the current
	// re-rank has promoted, seconds.
	slack bool
	spent float64
	// guard, when set (PitstopTail "...-guard"), shuts the lane while the
	// backlog's floor rises (overloadGuard).
	guard *overloadGuard
}

// forecastCall is one waiting call as a re-rank saw it.
type forecastCall struct {
	class, key    float64 // its place in the rank
	prefill, rest float64 // seconds: its uncomputed context's share of the budget, and all its rest (tool included)
	due           float64 // the lane's due time for it
	st            *callState
}

// note records a waiting call ranked at the current re-rank, at now.
func (f *laneForecast) note(now float64, c forecastCall) {
	f.at = now
	f.noted = append(f.noted, c)
}

// roll closes the re-rank: the calls noted are walked in rank order and
// those predicted past their due counted, for the gate until the next one.
func (f *laneForecast) roll() {
	slices.SortFunc(f.noted, func(a, b forecastCall) int {
		return cmp.Or(cmp.Compare(a.class, b.class), cmp.Compare(a.key, b.key))
	})
	late, ahead, least := 0, 0.0, math.Inf(1)
	for _, c := range f.noted {
		if c.st != nil {
			c.st.slackAhead, c.st.share, c.st.forecastAt = least, c.prefill, f.at
		}
		if end := f.at + ahead + c.rest; end > c.due {
			late++
		} else {
			least = min(least, c.due-end)
		}
		ahead += c.prefill
	}
	f.late, f.seen, f.spent = late, len(f.noted), 0
	clear(f.noted) // drop the call states
	f.noted = f.noted[:0]
}

// fitsSlack reports whether promoting the call keeps every call the last
// re-rank forecast in time ahead of it in time: the prefill promoted so far
// in this re-rank and its own fit in the least slack among them, and if so
// counts its prefill as spent. A call no re-rank has forecast fits.
//
// Why: a promotion moves the call's prefill ahead of the calls ranked
// before it, and each of them ends that much later. Where one of them then
// passes its due, the promotion trades a call past the bar for another and
// buys the p99 nothing, while the mean pays; past capacity (every call
// short of time) it is what displaces the short calls and costs throughput
// (react @12 with an honest reference, docs/results-policies.md, session
// 14). The bound is the forecast's own, no constant.
func (f *laneForecast) fitsSlack(st *callState) bool {
	if !f.slack || st.forecastAt == 0 {
		return true
	}
	if f.spent+st.share > st.slackAhead {
		return false
	}
	f.spent += st.share
	return true
}

// tailForecastPastArrivalOrder is the gate of the forecast lane: the
// finished calls of the realized window past arrival order's p99 (times the
// slack, T beside the shadow's as in tailPastArrivalOrder) plus the waiting
// calls forecast past their due, more than 1 % of the window and the
// waiting calls together.
func (d *deadlineLane) tailForecastPastArrivalOrder() bool {
	if d.edf == nil || d.forecast == nil {
		return false
	}
	fcfs, ok := d.shadow.tail()
	if !ok {
		return false
	}
	if _, ok := d.edf.realized.p99(); !ok {
		return false
	}
	if g := d.forecast.guard; g != nil && g.overloaded() {
		return false // past capacity a promotion costs work done per second
	}
	bar := d.slackOr1() * max(fcfs, d.reference)
	done := d.edf.realized.sorted
	late := len(done) - firstAbove(done, bar) + d.forecast.late
	return 100*late > len(done)+d.forecast.seen
}
