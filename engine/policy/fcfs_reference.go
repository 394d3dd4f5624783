package policy

import (
	"math"
	"slices"

	"github.com/pitstop-llm/pitstop/engine"
)

// fcfsReference learns the wait that arrival order would give a call, with
// no run of arrival order: by Kleinrock's conservation law, under any
// work-conserving order that does not preempt running calls, the waits
// weighted by each call's service, Σ S·W / Σ S, equal the one wait that
// first-come-first-served gives every call (all calls wait alike there). So
// the service-weighted mean wait of the calls the policy finished is the
// reference: a call that has waited longer than it waited more than arrival
// order would have made it wait. Kept as an exponentially weighted mean over
// about the last 20 finished calls (in service weight), so that it follows
// the backlog as the load changes.
//
// A call's end-to-end time under arrival order is that wait plus its own
// time (e2e less its wait: its service, tools and chunking), so the p99 of
// arrival order's e2e is about the reference wait plus the p99 of the own
// times: own keeps the last fcfsWindow own times and p99 their 99th
// percentile, refreshed every fcfsEvery calls.
//
// With expWait (Options.PitstopReference "exp") the bound is instead the
// p99 of W + own with W exponential of the reference mean (Kingman's
// heavy-traffic law for the wait under arrival order), the own times those
// of the window: reference wait plus p99 own time is the p99 of arrival order
// only when every call waits alike, and under arrival order the waits vary
// with the queue, so it is too low.
type fcfsReference struct {
	num, den float64   // decayed Σ S·W and Σ S, seconds² and seconds
	own      p99Window // the finished calls' own times (e2e less wait)
	expWait  bool      // the bound from an exponential wait (see above)
	expBound float64   // that bound, refreshed every fcfsExpEvery calls
}

// fcfsExpEvery is how often, in finished calls, the exponential-wait bound is
// solved again (a bisection over the window of own times).
const fcfsExpEvery = 10

// fcfsWindow own times are kept; the p99 is refreshed every fcfsEvery calls.
const fcfsWindow, fcfsEvery = 1000, 50

// fcfsAlpha weighs a finished call: about the last 20 count, as readmitWait.
const fcfsAlpha = 0.05

// fcfsMinCalls is how many calls must finish before the reference is used.
const fcfsMinCalls = 10

func (r *fcfsReference) observe(e *engine.Event) {
	if e.Kind != engine.EvFinished || e.Seq.Cancelled() || e.Err != nil {
		return
	}
	s, w := e.Seq.Service().Seconds(), e.Seq.Waited().Seconds()
	if s <= 0 {
		return
	}
	r.num += fcfsAlpha * (s*w - r.num)
	r.den += fcfsAlpha * (s - r.den)
	own := (e.Seq.FinishedAt() - e.Seq.Arrival()).Seconds() - w
	r.own.record(own)
	if r.expWait && r.own.n >= fcfsMinCalls && (r.own.n%fcfsExpEvery == 0 || r.expBound == 0) {
		if w, ok := r.wait(); ok {
			r.expBound = expWaitP99(r.own.times, w, r.own.q99)
		}
	}
}

// expWaitP99 is the T where the share of calls with W + own > T is 1%, W
// exponential of mean w, own drawn from own (at least lo, the own times'
// p99): a bisection on the share, which falls as T grows.
func expWaitP99(own []float64, w, lo float64) float64 {
	if w <= 0 {
		return lo
	}
	share := func(t float64) float64 {
		x := 0.0
		for _, o := range own {
			if o >= t {
				x++
			} else {
				x += math.Exp((o - t) / w)
			}
		}
		return x / float64(len(own))
	}
	hi := slices.Max(own) + w*math.Log(100)
	for range 40 {
		mid := (lo + hi) / 2
		if share(mid) > 0.01 {
			lo = mid
		} else {
			hi = mid
		}
	}
	return hi
}

// bound is arrival order's p99 end-to-end time now (the reference wait
// stretched by 1+slack, plus the p99 own time), and whether it is known.
func (r *fcfsReference) bound(slack float64) (float64, bool) {
	w, ok := r.wait()
	if r.expWait && ok && r.expBound > 0 {
		return r.expBound, true
	}
	return (1+slack)*w + r.own.q99, ok
}

// wait is the reference wait in seconds, and whether enough calls finished
// to know it.
func (r *fcfsReference) wait() (float64, bool) {
	if r.own.n < fcfsMinCalls || r.den <= 0 {
		return 0, false
	}
	return r.num / r.den, true
}
