package policy

import (
	"math"

	"github.com/pitstop-llm/pitstop/engine"
)

// rankTrust is how far the aging trusts the size rank (PitstopTail "...-trust"):
// a weight w in [laneThetaMin, 1] on the rank's log-spread, so that agedKey
// orders by w·ln key − power·ln(1 + a/T). w = 1 is the default's order; as w
// falls the aging's exponent is in effect power/w (w = ½ ages as power 4)
// and at the floor the calls go nearly in arrival order, whose p99 T is.
//
// Why: the aging by T moves a call whose memory-over-time is k times a
// fresh call's past it only at an age of (k^(1/power) − 1)·T. Under an
// overload that lasts (azure-conv at 6 programs/s, docs/results-policies.md
// session 14: a third of the calls, ~400 output tokens, 13x a typical
// call's key, each overtaken by a median 786 later calls) that class is the
// backlog, and its p99 passes arrival order's whatever offset the aging
// uses (the late lane's controller on T alone: 1.23x). A size order is worth
// its tail only while the tail stays within arrival order's; the weight is
// therefore not set by hand but by the late lane's quantile controller
// (lateLane.observe, Robbins–Monro on the share of finished calls past T):
// every call past T lowers it, every call within raises it a hundredth as
// much, so it stays at 1 (the default's order exactly) while no more than
// 1 % of the calls pass T, and compresses the rank only as far as the
// measured tail asks.
//
// The controller's T is arrival order's p99 with the waits' spread
// (fcfsReference's expWait, Kingman's exponential wait), not the aging's T
// (the mean wait plus the p99 own time): that one is arrival order's p99
// only where every call waits alike, and in a burst arrival order's waits
// vary, so against it more than 1 % of the calls pass even under arrival
// order and the weight would sink to its floor wherever there is a queue.
// It still errs low where the calls' own times hold tools and cached
// prefixes: on mixed @0.5 the weight falls and the mean rises 0.4 %
// (docs/results-policies.md, session 15). Taking T no lower than the
// arrival-order shadow's p99, or counting a late call only while the
// deadline lane's trigger is on, kept mixed but left azure-conv @6 at the
// default's tail (measured there, not kept).
//
// With overtaken (PitstopTail "...-trust-overtaken") a call past T counts
// against the rank only if arrival order would have brought it within T:
// its own time (end-to-end less its wait) plus the reference wait W, the
// wait arrival order gives a call on average (the conservation law), is
// within T. Measured call by call (docs/results-policies.md, session 16):
// the calls that moved w where it cost the mean were late by their own
// time, not by the order: on mixed @0.5 the late calls waited 0.0–0.1 s
// (long generations, tools) and held w near 0.6 all run; on infercept-multi
// past capacity (h100-80g-gptj-6b @12.75) 5.9 % of the first 200 s's calls
// passed T with waits of 0.1 s (tool time against a T still learned from
// few calls) and sank w to 0.15 for 1,000 s. Flattening the rank cannot
// bring such a call in, so it is no evidence against the rank; the
// starved class of azure-conv @6 (overtaken by hundreds of later calls,
// its own time a fraction of T) still is.
//
// With evident ("...-trust-evident") a late call lowers w only while the
// share of late calls among the last fcfsWindow is past laneQuantile by
// more than its sampling error (p99Z binomial standard errors, the `sure`
// trigger's confidence); otherwise it counts as within. Where w does not
// change the late share (calls late by their own time, about 1 % by the
// construction of T), the plain controller is a neutral random walk capped
// at 1 that wanders down and costs the mean (mixed @0.5: w 0.5–0.7 the whole
// run at 1.07 % late, session 16); with the band it climbs back to 1.
//
// With waiting ("...-overdue-trust") the controller reads the waiting calls
// instead of the finished ones: at each full re-rank every waiting call
// counted is a step, down if it is overdue (laneOverdue: arrival order would
// already have finished it), up a hundredth as much if not, so w falls
// while more than 1 % of the waiting calls are overdue. The finished calls see the
// starvation 250–400 s late (session 16); the overdue calls show it while
// they wait (session 17). With each ("...-overdue-trust-each") every call
// is one observation, as in the finished-call controller: a step down when
// a re-rank first finds it overdue, a hundredth of a step up when it ends
// without having been; the plain waiting controller counts a waiting call
// at every re-rank, so a long queue moves w many steps per call.
type rankTrust struct {
	waiting   bool          // steps from the overdue gate at each re-rank (stepOn), not from finished calls
	each      bool          // with waiting, one step per call: down when first found overdue, up at its end if never
	c         lateLane      // capped: θ ≤ 1 is the weight
	ref       fcfsReference // expWait: the controller's T
	overtaken bool          // count only calls arrival order would have brought within T
	evident   bool          // step down only while the late share is past laneQuantile beyond its noise
	late      []bool        // with evident, the last fcfsWindow calls' lateness (a ring)
	nLate, at int           // late calls in the ring; the ring's next slot
}

// newRankTrust is the weight's controller with the late lane's step gain.
func newRankTrust(gain float64, overtaken, evident bool) rankTrust {
	return rankTrust{c: lateLane{capped: true, gain: gain}, ref: fcfsReference{expWait: true}, overtaken: overtaken, evident: evident}
}

// weight is w now: 1 until a call has finished.
func (r *rankTrust) weight() float64 {
	if r.c.theta == 0 {
		return 1
	}
	return r.c.theta
}

// observe learns arrival order's p99 from a finished call and moves w
// against it.
func (r *rankTrust) observe(e *engine.Event, slack float64) {
	if r.waiting {
		if r.each && e.Kind == engine.EvFinished && !e.Seq.Cancelled() && e.Err == nil && !stateOf(e.Seq).overdueSeen {
			r.c.observe(0, 1) // ended never found overdue: a step up
		}
		return // the steps down come from stepOn
	}
	r.ref.observe(e)
	if e.Kind != engine.EvFinished || e.Seq.Cancelled() || e.Err != nil {
		return
	}
	if t, ok := r.ref.bound(slack); ok && t > 0 {
		r.count((e.Seq.FinishedAt() - e.Seq.Arrival()).Seconds(), e.Seq.Waited().Seconds(), t)
	}
}

// count moves w after a call that finished in e2e seconds, wait of them
// waiting, against arrival order's p99 t.
func (r *rankTrust) count(e2e, wait, t float64) {
	if r.overtaken && e2e > t && !r.heldBack(e2e-wait, t) {
		e2e = t // late by its own time: counted as within
	}
	if r.evident && !r.pastQuantile(e2e > t) {
		e2e = t // no evidence the tail is past T: counted as within
	}
	r.c.observe(e2e, t)
}

// stepOn moves w after a full re-rank that counted seen waiting calls,
// late of them overdue: each overdue call a step down, each other a
// hundredth of a step up (the controller's steps, summed; the bounds
// applied once), so that w stays at 1 while no more than 1 % of the waiting
// calls are overdue.
func (r *rankTrust) stepOn(late, seen int) {
	if seen <= 0 {
		return
	}
	if r.c.theta == 0 {
		r.c.theta = r.c.ceiling()
	}
	g := r.c.gain
	if g <= 0 {
		g = laneGain
	}
	step := g*laneQuantile/(1-laneQuantile)*float64(seen-late) - g*float64(late)
	r.c.theta = min(max(r.c.theta*math.Exp(step), laneThetaMin), r.c.ceiling())
}

// pastQuantile records a call's lateness in the ring and reports whether
// the ring's late share is past laneQuantile beyond p99Z standard errors.
func (r *rankTrust) pastQuantile(late bool) bool {
	if len(r.late) < fcfsWindow {
		r.late = append(r.late, late)
	} else {
		if r.late[r.at] {
			r.nLate--
		}
		r.late[r.at] = late
		r.at = (r.at + 1) % fcfsWindow
	}
	if late {
		r.nLate++
	}
	n := float64(len(r.late))
	return float64(r.nLate)/n > laneQuantile+p99Z*math.Sqrt(laneQuantile*(1-laneQuantile)/n)
}

// heldBack reports whether a call of the given own time (seconds) would
// have ended within t had it waited the reference wait, arrival order's
// mean: then its passing t is the order's doing.
func (r *rankTrust) heldBack(own, t float64) bool {
	w, ok := r.ref.wait()
	return ok && own+w <= t
}

// trusted is the key with its spread weighted by w (key^w): the order among
// equal ages is the key's for any w > 0.
func (r *rankTrust) trusted(key float64) float64 {
	w := r.weight()
	if w >= 1 || key <= 0 {
		return key
	}
	return math.Pow(key, w)
}
