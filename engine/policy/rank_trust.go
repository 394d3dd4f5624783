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
type rankTrust struct {
	c   lateLane      // capped: θ ≤ 1 is the weight
	ref fcfsReference // expWait: the controller's T
}

// newRankTrust is the weight's controller with the late lane's step gain.
func newRankTrust(gain float64) rankTrust {
	return rankTrust{c: lateLane{capped: true, gain: gain}, ref: fcfsReference{expWait: true}}
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
	r.ref.observe(e)
	if e.Kind != engine.EvFinished || e.Seq.Cancelled() || e.Err != nil {
		return
	}
	if t, ok := r.ref.bound(slack); ok && t > 0 {
		r.c.observe((e.Seq.FinishedAt() - e.Seq.Arrival()).Seconds(), t)
	}
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
