package policy

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/pitstop-llm/pitstop/engine"
)

// tailRules is which of pitstop's tail rules are on (Options.PitstopTail,
// PitstopAgingPower, PitstopAgingClock).
type tailRules struct {
	aging     bool    // generalized cμ aging against arrival order's p99 (agedKey)
	power     float64 // the aging's exponent
	byWait    bool    // age by the wait alone instead of the time since arrival
	lane      bool    // the late lane (lateLane)
	rescue    bool    // the lane holds only the calls that can still end within T
	control   bool    // the aging's T scaled by the lane's controller (θ ≤ 1)
	deadline  bool    // least-laxity promotion against per-call arrival-order deadlines (deadlineLane)
	feasible  bool    // the promotion only of calls feasible in the promoted calls' EDF schedule (edfSchedule)
	toP99     bool    // feasible by the later of the deadline and the realized p99 (edfSchedule.bound)
	floor     bool    // that p99 the highest realized so far, so the lane cannot lower its own bound
	perCall   bool    // the aging against each call's own arrival-order time, not one T
	fit       bool    // a promotion only of a call that fits in the free blocks (promotionFit)
	warm      bool    // a call with a prefix-cached context aged from its program's arrival (ageOf)
	resume    bool    // a call back from its tool with its KV on the host ranked with its context paid (resumePaid)
	first     bool    // a promotion only of a call that has not started (firstWait)
	swap      bool    // a promotion only of a call whose evictions are swaps (promotionSwap)
	lag       bool    // the promoted calls' learned lag added to a candidate's rest (promotionLag)
	final     bool    // a promotion only of a call with no tool ahead (finalStretch); with first, either
	gated     bool    // promotions only while the realized p99 is past arrival order's (tailPastArrivalOrder)
	sure      bool    // the same with 95 % confidence (tailSurelyPastArrivalOrder)
	forecast  bool    // promotions only while finished and forecast waiting calls past the bar pass 1 % (laneForecast)
	slack     bool    // with forecast, a promotion only within the slack of the in-time calls it overtakes (fitsSlack)
	wake      bool    // a promotion at the re-rank the candidate's laxity runs out by (laneWake)
	queue     bool    // the shadow scales its service alone, not its prefill queue (enterKeepingQueue)
	cached    bool    // the shadow's prefill less the prefix-cached context (fcfsShadow.workOf)
	guard     bool    // with forecast, the lane shut while the backlog's floor rises (overloadGuard)
	hold      bool    // with guard, shut until the backlog drains back to where it began (overloadGuard.hold)
	trust     bool    // the rank's spread weighted by the tail's controller (rankTrust)
	overtaken bool    // with trust, the controller counts only calls arrival order would have brought within T (rankTrust.heldBack)
	evident   bool    // with trust, the controller steps down only while the late share is past 1 % beyond its noise (rankTrust.pastQuantile); with overdue, the shadow's check with that band (shadowBand)
	checked   bool    // with overdue, the overdue test read only while the shadow is not below the conservation law (shadowCheck)
	each      bool    // with overdue and trust, the weight's controller counts each call once (rankTrust.each)
	overdue   bool    // the lane also promotes waiting calls arrival order would have finished, while they pass 1 % (laneOverdue)
	boost     bool    // γ-Boost's boosted arrival time in place of the aging (boost_key.go)
	boostWait bool    // with boost, γ from arrival order's mean wait alone, not the Cramér–Lundberg root (boostRule)
	boostFull bool    // with boost, S over the whole KV, not the share held while calls wait (boostRule)
	boostResp bool    // with boost, γ one over arrival order's mean response time (boostRule)
	boostAged bool    // with boost, γ = power/T, the aging's own scale (boostRule.byBound)
	boostOwn  bool    // with boost, S the predicted own time and γ as boostResp (ownPoints)
	boostTail bool    // with boost, γ fitted to the arrival-order shadow's response-time tail (boostRule.tailDecay)
	boostPast bool    // the aging below capacity, γ-Boost (its source as boostWait, boostTail, boostAged) past it (boostPast); with hold, until the backlog drains
	busy      bool    // with boostPast, a rise of the backlog's floor counts only from a floor above zero (overloadGuard.busy)
}

// shadowed reports whether the rules need the arrival-order deadlines.
func (r tailRules) shadowed() bool { return r.deadline || r.perCall }

// newTailRules reads the options: PitstopTail is "aging" (with "+warm" and
// the gated, fitting first-final lane the default, below),
// "guard" (no aging: the behaviour before it, without session 3's tail
// guard, removed in session 13), "lane"
// (the late lane without aging), "aging+lane", "rescue" (the
// late lane of the calls that can still end within T), "aging+rescue" or
// "aging+control" (no lane: the aging against θ·T, θ ≤ 1 moved by the lane's
// controller, so the aging strengthens only while more than 1% of the calls
// pass T), "deadline" (least-laxity promotion against each
// call's arrival-order deadline: deadlineLane), "aging+deadline",
// "aging+feasible" (the aging and that promotion, of the calls that can
// still make their deadlines behind the promoted ones: edfSchedule),
// "aging+feasible-p99" (the same, a call's deadline taken no earlier than
// its arrival plus the realized p99 for the test), "aging+feasible-floor"
// (the same, with the highest p99 realized so far in place of the current
// one), "aging+feasible-fit" ("aging+feasible-p99" promoting only a call
// whose admission evicts nothing: promotionFit), "aging+warm" (the aging,
// a call whose context is prefix-cached aged from its program's arrival:
// ageOf), "aging+warm+resume" (the same, a call back from its tool with its
// KV on the host ranked with its context paid: resumePaid), "aging+warm+first" ("aging+warm" with the lane of
// "aging+feasible-p99" promoting only calls that have not started:
// firstWait), "aging+warm+first-lag" (the same, a candidate's rest
// lengthened by the promoted calls' learned lag: promotionLag),
// "aging+warm+final" (the lane promoting only a call with no tool ahead:
// finalStretch), "aging+warm+first-final" (a call that has not started or
// has no tool ahead), "aging+warm+first-final-lag" (that, with the lag),
// "aging+warm+first-final-gated" (first-final promoting only while the
// realized p99 is past arrival order's: tailPastArrivalOrder),
// "aging+warm+first-gated" (the same with first's test alone),
// "aging+warm+first-final-gated-fit" (the trigger and promotionFit),
// "aging+warm+first-final-wake" (first-final promoting a call at the
// re-rank its laxity runs out by, which it asks for: laneWake),
// "aging+warm+first-final-gated-wake" (both), "-gated-lag" (the trigger
// with the lag), "-gated-wake-lag" (both with the lag),
// "aging+warm+first-final-sure" and "-sure-fit" (the trigger at 95 %
// confidence: tailSurelyPastArrivalOrder),
// "aging+warm+first-final-forecast-fit" and "-forecast-fit-queue" (the
// default's lane, its trigger reading the queue too: laneForecast),
// "-forecast-slack-fit" and "-forecast-slack-fit-queue" (the same,
// promoting only within the slack of the calls overtaken: fitsSlack),
// each also with "-queue-cached" (both shadow switches: shadowCached),
// "-forecast-fit-guard", "-forecast-fit-queue-guard",
// "-forecast-fit-queue-cached-guard" and
// "-forecast-slack-fit-queue-cached-guard" (the forecast lane shut while
// the backlog's floor rises: overloadGuard), and
// "-forecast-fit-queue-guard-hold", "-forecast-fit-queue-cached-guard-hold"
// (shut from the rise until the backlog drains back: overloadGuard.hold),
// "aging+warm+first-final-gated-fit-queue" (the default's lane with the
// shadow scaling its calls' service alone, not their wait in its prefill
// queue: enterKeepingQueue), "-gated-fit-cached" and "-gated-fit-queue-cached"
// (the shadow's prefill less the prefix-cached context: fcfsShadow.workOf),
// "aging+warm+first-final-gated-fit-trust" (the default with the rank's
// spread weighted by the tail's controller: rankTrust),
// "aging+warm+first-final-gated-fit-trust-overtaken" (the same, the
// controller counting only the calls the order made late: rankTrust.heldBack),
// "-trust-evident" (the controller stepping down only while the late share
// is past 1 % beyond its sampling error: rankTrust.pastQuantile),
// "aging+warm+first-final-gated-fit-overdue" (the default, its lane also
// promoting the waiting calls arrival order would already have finished
// while they pass 1 %: laneOverdue), "-gated-fit-overdue-trust" (that, and
// the rank's spread weighted by a controller stepping on the overdue gate
// at each re-rank: rankTrust.stepOn), "-overdue-trust-each" (the same
// controller counting each call once: rankTrust.each),
// "-overdue-trust-each-checked" (that, the overdue test read only while the
// shadow's mean end-to-end time is not below arrival order's by the
// conservation law: shadowCheck), "-overdue-trust-each-evident" (the
// same check over the reference wait's window, the shadow taken as early
// only while it is below beyond p99Z standard errors: shadowBand),
// "-overdue-trust-each-checked-evident" (the check over about the last
// 1,000 calls, the shadow read only while above beyond that band:
// shadowBand.strict),
// "aging+warm+first-final-gated-fit-boost-tail-past" (and -wait-, -aged-:
// the default, γ-Boost with that γ source in place of the aging while the
// overload guard says past capacity: boostPast), "-past-busy" (a rise of
// the backlog's floor counted only from a floor above zero:
// overloadGuard.busy), each also with "-hold" (overloadGuard.hold),
// "aging+warm+swap" (the same lane promoting only a call whose
// evictions the free host slots take: promotionSwap) or "deadline-aging" (the aging against each call's own arrival-order time,
// its deadline less its arrival, instead of one T for every call).
// laneTails are the "aging+warm+" suffixes: the deadline lane of
// "aging+feasible-p99" on "aging+warm", with the filters each dash-joined
// part names (first: firstWait, final: finalStretch, gated:
// tailPastArrivalOrder, sure: tailSurelyPastArrivalOrder, wake: laneWake, fit: promotionFit, lag:
// promotionLag, swap: promotionSwap). Only the combinations measured
// (docs/results-policies.md, sessions 11-12) are offered.
var laneTails = map[string]bool{
	"first": true, "first-lag": true, "final": true, "first-final": true, "first-final-lag": true,
	"first-final-gated": true, "first-final-gated-fit": true, "first-gated": true, "first-final-wake": true,
	"first-final-gated-wake": true, "first-final-gated-lag": true, "first-final-gated-wake-lag": true, "swap": true,
	"first-final-sure": true, "first-final-sure-fit": true, "first-final-gated-fit-queue": true,
	"first-final-gated-fit-cached": true, "first-final-gated-fit-queue-cached": true,
	"first-final-forecast-fit": true, "first-final-forecast-fit-queue": true,
	"first-final-forecast-slack-fit": true, "first-final-forecast-slack-fit-queue": true,
	"first-final-forecast-fit-queue-cached": true, "first-final-forecast-slack-fit-queue-cached": true,
	"first-final-forecast-fit-guard": true, "first-final-forecast-fit-queue-guard": true,
	"first-final-forecast-fit-queue-cached-guard": true, "first-final-forecast-slack-fit-queue-cached-guard": true,
	"first-final-forecast-fit-queue-guard-hold": true, "first-final-forecast-fit-queue-cached-guard-hold": true,
	"first-final-gated-fit-trust": true, "first-final-gated-fit-trust-overtaken": true,
	"first-final-gated-fit-trust-evident": true, "first-final-gated-fit-overdue": true,
	"first-final-gated-fit-overdue-trust": true, "first-final-gated-fit-overdue-trust-each": true,
	"first-final-gated-fit-overdue-trust-each-checked": true, "first-final-gated-fit-overdue-trust-each-evident": true,
	"first-final-gated-fit-overdue-trust-each-checked-evident": true,
	"first-final-gated-fit-boost-tail-past":                    true, "first-final-gated-fit-boost-tail-past-hold": true,
	"first-final-gated-fit-boost-wait-past": true, "first-final-gated-fit-boost-wait-past-hold": true,
	"first-final-gated-fit-boost-aged-past": true, "first-final-gated-fit-boost-aged-past-hold": true,
	"first-final-gated-fit-boost-tail-past-busy": true, "first-final-gated-fit-boost-tail-past-busy-hold": true,
	"first-final-gated-fit-boost-wait-past-busy": true, "first-final-gated-fit-boost-wait-past-busy-hold": true,
	"first-final-gated-fit-boost-aged-past-busy": true, "first-final-gated-fit-boost-aged-past-busy-hold": true,
}

// boostTails are what may follow "boost" or "boost-wait" (γ-Boost in place
// of the aging, boost_key.go): nothing, "+warm" (a warm call's arrival its
// program's, as ageOf), or "+warm+first-final-gated-fit" (that, with the
// default's lane).
var boostTails = []string{"", "+warm", "+warm+first-final-gated-fit"}

// tailNames lists the tail rules newTailRules accepts, for its error: the
// plain ones, then each laneTails suffix after "aging+warm+" (sorted), so
// the list cannot drift from what is offered.
func tailNames() []string {
	names := []string{"aging", "guard", "lane", "aging+lane", "rescue", "aging+rescue", "aging+control", "deadline",
		"aging+deadline", "aging+feasible", "aging+feasible-p99", "aging+feasible-floor", "aging+feasible-fit",
		"aging+warm", "aging+warm+resume", "deadline-aging"}
	for _, b := range []string{"boost", "boost-wait", "boost-full", "boost-tail", "boost-resp", "boost-own", "boost-aged"} {
		for _, rest := range boostTails {
			names = append(names, b+rest)
		}
	}
	for _, lane := range slices.Sorted(maps.Keys(laneTails)) {
		names = append(names, "aging+warm+"+lane)
	}
	return names
}

func newTailRules(o Options) (tailRules, error) {
	r := tailRules{power: o.PitstopAgingPower, byWait: o.PitstopAgingClock == "wait"}
	switch {
	case o.PitstopAgingClock != "" && o.PitstopAgingClock != "age" && o.PitstopAgingClock != "wait":
		return r, fmt.Errorf("unknown pitstop aging clock %q (valid: age, wait)", o.PitstopAgingClock)
	case !(o.PitstopAgingPower > 0) || math.IsInf(o.PitstopAgingPower, 0):
		return r, fmt.Errorf("pitstop aging power must be a positive number, got %g", o.PitstopAgingPower)
	case o.PitstopTail == "guard":
		return r, nil
	case o.PitstopTail == "aging":
		r.aging = true
		return r, nil
	case o.PitstopTail == "lane":
		r.lane = true
		return r, nil
	case o.PitstopTail == "aging+lane":
		r.aging, r.lane = true, true
		return r, nil
	case o.PitstopTail == "rescue":
		r.lane, r.rescue = true, true
		return r, nil
	case o.PitstopTail == "aging+rescue":
		r.aging, r.lane, r.rescue = true, true, true
		return r, nil
	case o.PitstopTail == "aging+control":
		r.aging, r.control = true, true
		return r, nil
	case o.PitstopTail == "deadline":
		r.deadline = true
		return r, nil
	case o.PitstopTail == "aging+deadline":
		r.aging, r.deadline = true, true
		return r, nil
	case o.PitstopTail == "aging+feasible":
		r.aging, r.deadline, r.feasible = true, true, true
		return r, nil
	case o.PitstopTail == "aging+feasible-p99":
		r.aging, r.deadline, r.feasible, r.toP99 = true, true, true, true
		return r, nil
	case o.PitstopTail == "aging+feasible-floor":
		r.aging, r.deadline, r.feasible, r.toP99, r.floor = true, true, true, true, true
		return r, nil
	case o.PitstopTail == "aging+feasible-fit":
		r.aging, r.deadline, r.feasible, r.toP99, r.fit = true, true, true, true, true
		return r, nil
	case o.PitstopTail == "aging+warm":
		r.aging, r.warm = true, true
		return r, nil
	case o.PitstopTail == "aging+warm+resume":
		r.aging, r.warm, r.resume = true, true, true
		return r, nil
	case strings.HasPrefix(o.PitstopTail, "aging+warm+") && laneTails[strings.TrimPrefix(o.PitstopTail, "aging+warm+")]:
		r.aging, r.warm, r.deadline, r.feasible, r.toP99 = true, true, true, true, true
		var named bool // "boost": names the γ source that follows
		for _, part := range strings.Split(strings.TrimPrefix(o.PitstopTail, "aging+warm+"), "-") {
			*map[string]*bool{"first": &r.first, "final": &r.final, "gated": &r.gated, "sure": &r.sure, "forecast": &r.forecast, "slack": &r.slack, "wake": &r.wake,
				"fit": &r.fit, "lag": &r.lag, "swap": &r.swap, "queue": &r.queue, "cached": &r.cached, "guard": &r.guard, "hold": &r.hold, "trust": &r.trust, "overtaken": &r.overtaken, "evident": &r.evident, "overdue": &r.overdue, "each": &r.each, "checked": &r.checked,
				"boost": &named, "tail": &r.boostTail, "wait": &r.boostWait, "aged": &r.boostAged, "past": &r.boostPast, "busy": &r.busy}[part] = true
		}
		return r, nil
	case o.PitstopTail == "deadline-aging":
		r.aging, r.perCall = true, true
		return r, nil
	case strings.HasPrefix(o.PitstopTail, "boost"):
		name := strings.TrimPrefix(o.PitstopTail, "boost")
		source := name // the γ source ("", "-wait", ...), then the rest ("", "+warm", ...)
		if i := strings.Index(name, "+"); i >= 0 {
			source, name = name[:i], name[i:]
		} else {
			name = ""
		}
		if !slices.Contains([]string{"", "-wait", "-full", "-tail", "-resp", "-own", "-aged"}, source) {
			break
		}
		wait, full, tailFit := source == "-wait", source == "-full", source == "-tail"
		if !slices.Contains(boostTails, name) {
			break
		}
		if name != "" {
			o.PitstopTail = "aging" + name // the aging's rule with its lane, the aging then replaced
			var err error
			if r, err = newTailRules(o); err != nil {
				return r, err
			}
		}
		r.aging, r.boost, r.boostWait, r.boostFull, r.boostTail, r.boostResp = false, true, wait, full, tailFit, source == "-resp"
		r.boostOwn, r.boostAged = source == "-own", source == "-aged"
		if tailFit && !r.deadline {
			r.perCall = true // the shadow's deadlines without the lane (shadowed); perCall is read by agedKey alone, off with boost
		}
		return r, nil
	}
	return r, fmt.Errorf("unknown pitstop tail rule %q (valid: %s)", o.PitstopTail, strings.Join(tailNames(), ", "))
}

// agedKey is the generalized cμ rule (Van Mieghem 1995) for a delay cost
// that is linear in a call's end-to-end time (the mean) and grows faster
// past the tail of arrival order: the call's cost to the engine (its
// memory-over-time, the key) is divided by the marginal delay cost
// (1 + a/T)^power, a its age (time since arrival, what its end-to-end time
// will include) and T arrival order's p99 end-to-end time learned online
// (fcfsReference: the conservation-law wait plus the p99 of the calls' own
// times), so no time scale is set by hand. The default power 2 ages the
// square root of memory-over-time linearly: memory-over-time grows as the
// square of a call's length (memory held × time), its root as the length,
// the size HRRN and the cμ rule age. A call as old as T then ranks as a
// quarter of its memory-over-time, one of 3T as a sixteenth. Until the
// reference is known the key stands.
func (p *Pitstop) agedKey(v *engine.View, s *engine.Sequence, key float64) float64 {
	t, ok := p.fcfs.bound(p.fcfsSlack)
	if st := stateOf(s); p.tail.perCall {
		t, ok = st.deadline-s.Arrival().Seconds(), st.hasDeadline // its own arrival-order time
	}
	if !ok || t <= 0 {
		return key
	}
	if p.tail.trust {
		key = p.trust.trusted(key) // rank_trust.go
	}
	a := p.ageOf(v, s) // warm_age.go
	if p.tail.byWait {
		a = v.Wait(s)
	}
	if p.tail.control && p.lane.theta > 0 {
		t *= p.lane.theta
	}
	f := 1 + max(a.Seconds(), 0)/t
	if p.tail.power == 2 {
		return key / (f * f) // the default, without Pow's cost
	}
	return key / math.Pow(f, p.tail.power)
}

// inLane reports whether the waiting call is in the late lane: older than
// θ·T (lateLane), T arrival order's p99 learned online.
func (p *Pitstop) inLane(v *engine.View, s *engine.Sequence) bool {
	if !p.tail.lane {
		return false
	}
	t, ok := p.fcfs.bound(p.fcfsSlack)
	return ok && t > 0 && p.lane.isLate((v.Now-s.Arrival()).Seconds(), t)
}

// observeLane moves the late lane's controller after a finished call.
func (p *Pitstop) observeLane(e *engine.Event) {
	if p.tail.trust {
		p.trust.observe(e, p.fcfsSlack) // rank_trust.go
	}
	if !p.tail.lane && !p.tail.control || e.Kind != engine.EvFinished || e.Seq.Cancelled() || e.Err != nil {
		return
	}
	if t, ok := p.fcfs.bound(p.fcfsSlack); ok && t > 0 {
		p.lane.observe((e.Seq.FinishedAt() - e.Seq.Arrival()).Seconds(), t)
	}
}

// programArrival is the time by which arrival order of programs ranks a
// waiting call: its program's first arrival; with the controlled aging, θ of
// the way from the call's own arrival to it, so that while more than 1% of
// the calls pass T the order moves toward arrival order of calls (a burst of
// an old program's branches no longer goes ahead of every call of the
// younger programs), and back while the tail is within T.
func (p *Pitstop) programArrival(s *engine.Sequence, st *callState) float64 {
	first := st.row.first.Seconds()
	if !p.tail.control || p.lane.theta <= 0 {
		return first
	}
	return p.lane.theta*first + (1-p.lane.theta)*s.Arrival().Seconds()
}
