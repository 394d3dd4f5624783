package policy

import (
	"time"

	"github.com/pitstop-llm/pitstop/engine"
	"github.com/pitstop-llm/pitstop/handling"
)

// Pitstop is our policy. Calls on the device run first and are never
// preempted to admit others; the calls that wait are ranked by what they will
// cost the engine, at the call level by memory-over-time and at the program
// level by an order learned from the programs that completed:
//
//   - Calls on the device run first, in arrival order, and are never
//     preempted to admit a waiting call: a call that holds KV and does not
//     run wastes exactly the memory the ranking economises.
//   - Memory-over-time of the call (LAMPS): the area under the memory curve
//     of its current segment under its predicted handling (handling.RankAt
//     from Forecast().Predicted), lowest first.
//   - A program-level order from Autellix's process table (ATLAS's
//     critical-path service of each program, kept from engine events) and
//     the Gittins index of the learned distribution of programs' service
//     (programModel, gittins_started.go): while every program is a single
//     call (its tool calls are segments of that call) there is none: a
//     call's attained service only says how far it got. Otherwise, where
//     most programs are DAGs (tree searches), programs finish in arrival
//     order, as in Continuum, while the index never lets a fresh program
//     pass a started one (G(a) >= G(0) wherever ten completed programs
//     inform it; before any has completed, the prior of programs alike):
//     sharing the engine between such programs only delays all of them; a
//     program's own calls go longest first (LPT), since the program ends
//     with its longest branch. Chains (one call of a program at a time) go
//     by their program's attained-service queue (least-served first, as
//     ATLAS) until ten programs have completed, a warm-up kept by
//     measurement (chat's sustained rate). Otherwise the call's
//     memory-over-time alone decides. ProgramOrder fixes the order instead.
//     Session 14 put this one question to the index in place of the CV
//     threshold 0.7 and the DAGs' warm-up order (docs/results-policies.md);
//     the shape rule, the tail guard and the queues for a heavy tail were
//     removed in session 13.
//   - Predicted handling at the tool call: the least waste (InferCept's
//     model) with the predicted tool time; re-checked every iteration once
//     the tool overruns its prediction, with the remaining time taken as the
//     time already spent, so a mispredicted long tool stops holding memory.
//   - Anti-starvation from both papers, off by default (their cost to the
//     mean is measured in results-policies.md): Autellix's β (PitstopBeta: a
//     call whose program has waited β times its service goes ahead of the
//     other waiting calls) and LAMPS's counter (PitstopStarvation: a call that
//     has not run for that many iterations goes ahead until it finishes).
//   - No tail guard: session 3's (a call in the queues that had waited 50
//     times the predicted rest of its service went ahead) was removed in
//     session 13, its place not earned beside the aging: switched off alone
//     it lost no point of Show 1 on any family and seed and no sustained
//     rate (docs/results-policies.md, session 13).
//   - Aging (PitstopTail "aging", in every default; "guard" switches it off): a
//     waiting call's memory-over-time is divided by (1 + age/T)², T arrival
//     order's p99 end-to-end time learned online (fcfsReference), the
//     generalized cμ rule for a delay cost that grows past arrival order's
//     tail (agedKey); not in arrival order, whose programs already finish
//     in order.
//   - A quantile controller on that tail (PitstopTail "lane", "rescue",
//     "aging+control" and their combinations; off by default, measured in
//     docs/results-policies.md, session 8): θ moves after every finished
//     call so that 1% of the calls pass T (lateLane), and either a waiting
//     call older than θ·T goes ahead in arrival order (the late lane; with
//     rescue only while it can still end within T) or the aging runs against
//     θ·T.
//   - The default tail since session 12 is "aging+warm+first-final-gated-fit":
//     the aging (with "+warm": a call whose context is still prefix-cached
//     aged from its program's first arrival) plus the deadline lane below,
//     promoting only a call that has not started or will run to its end,
//     only while the p99 this policy realizes is past arrival order's
//     (promotion_gate.go) and only when its peak fits the free blocks
//     (promotion_fit.go).
//   - Least-laxity promotion against per-call arrival-order deadlines
//     (PitstopTail "deadline", "aging+deadline"; off by default, measured
//     in docs/results-policies.md, session 9): a shadow first-come-first-
//     served queue gives each call the time it would end under arrival
//     order (fcfsShadow), and a waiting call whose laxity against it is
//     below what the promoted calls ahead need goes ahead, earliest
//     deadline first (deadlineLane). With "aging+feasible" only while it can
//     still make its deadline behind the promoted calls (edfSchedule): EDF
//     while the deadlines are feasible, the rank under overload (session 10).
//   - An explicit tail bound (PitstopTailBound, off by default: the
//     deployment's latency target in seconds): a waiting call whose time
//     since arrival plus the predicted rest of its service (restOfService)
//     would pass the bound goes ahead of the ranked calls, earliest deadline
//     first. A bound, not a knob fitted to a workload: what it costs the
//     mean and the throughput is measured in docs/results-policies.md.
//   - A tail rule against arrival order (PitstopFCFSTail, off by default:
//     measured in docs/results-policies.md, it cuts the p99 past capacity
//     but costs the mean there and the tail of mixed at 0.7): a waiting call
//     that has waited longer than arrival order's p99 end-to-end time (the
//     wait arrival order would give, learned by the conservation law, times
//     1+PitstopFCFSSlack, plus the p99 of the calls' own times:
//     fcfsReference) goes ahead of the ranked calls, in arrival order.
//   - In arrival order of programs, where a program's first call waits and
//     how far an older program's calls go ahead of a younger one's
//     (PitstopAdmission, PitstopProgramLead; the defaults since session 9,
//     measured in docs/results-policies.md, session 9): with admission "started" and a
//     lead of 0, programs start in arrival order, each once no started
//     program's call waits, and the started programs' calls go in arrival
//     order (program_lead.go).
//   - Eviction of a running call (when a running call needs a block) by swap
//     or recompute, whichever the waste model says costs less.
//   - Goodput protection. With the prefix cache a call's freed blocks stay
//     cached until other calls' allocations evict them, so where the least
//     waste is a swap, the swap is weighed as insurance: its copies against
//     the risk that the blocks are lost before the tool returns and the call
//     is re-admitted (handling.ChooseCached, the risk over the predicted
//     duration distribution: evictionRisk). A call whose KV waits on the host
//     goes ahead of the calls holding nothing when bringing it back wastes
//     less than recomputing it (left behind, it keeps the host tier full and
//     the next calls leaving the device are recomputed), and the tokens a
//     call holds are not priced as prefill in its memory-over-time. With
//     PitstopHostRoom "admit" (session 9), no admission evicts a paused call
//     whose swap-out the host tier would refuse (host_room.go); with "peak"
//     (the default since session 11), a call not on the device is admitted
//     only when its peak memory fits beside the preserved calls that come
//     back before it is done (peak_admit.go).
//     With PitstopHandling "idle-lost" (the default since session 12) or
//     "idle", memory nobody waits for is priced at zero: a paused call is
//     preserved while memory is idle (idle_memory.go); "waste" prices it
//     as above at every iteration.
//
// What is learned from programs (the program model behind the order, the
// reuse probabilities behind the cache hint, the order's shape test) is
// learned per class of programs (engine.Request.Class, the runtime's
// tenant: population.go), so one tenant's programs never shape another's
// order or retention; what describes the shared device and queue (arrival
// order's tail, the controllers on it, the cache's eviction rate) stays
// pooled (PitstopClasses).
//
// NoProgramQueues (no program-level order), NoMemoryOverTime (by the time
// the call became ready instead of memory-over-time), NoDynamicHandling
// (the handling chosen at the tool call stands), NoHeldFirst and
// NoCachedHandling (goodput protection's two parts) switch the parts off
// for ablations.
type Pitstop struct {
	engine.BasePolicy
	a          attained
	pops       populations // what is learned per class of programs (population.go)
	starve     starvation
	beta       float64
	tailBound  float64
	weight     float64
	cvLow      float64
	refresh    scoreRefresh
	noQueues   bool
	fixedOrder bool
	forced     programOrder
	restRules  restRules    // "gittins-rest"'s hand-set rules switched back on
	chainsCall bool         // "gittins-started-call": chains in the call's order from the start (gittins_started.go)
	shapeTest  shapeTest    // "gittins-started-shown", "-held": which programs the DAG test counts (shape_shown.go)
	censored   censoredMode // "gittins-censored(-call)": chains by the censored index (gittins_censored.go)
	noMOT      bool
	noDynamic  bool
	noHeld     bool
	noCached   bool
	readmit    readmitWait
	recache    readmitCache // cached-prefix-aware re-admission (readmit_cache.go)
	room       hostRoom     // host-tier-aware admission (host_room.go)
	memory     idleMemory   // the price of device memory now (idle_memory.go)
	fcfs       fcfsReference
	fcfsTail   bool    // the tail rule against arrival order (lateVsFCFS), off by default
	fcfsSlack  float64 // its ε
	tail       tailRules
	boost      boostRule // γ-Boost in place of the aging (PitstopTail "boost..."; boost_key.go)
	past       boostPast // with "-boost-...-past": whether the boost ranks now (boost_past.go)
	rank       rankMode  // point forecast or expectation over the length bins (expected_rank.go)
	lane       lateLane
	trust      rankTrust     // the rank's spread under the tail's controller (PitstopTail "...-trust")
	lead       programLead   // how far an older program goes ahead in arrival order (program_lead.go)
	deadlines  deadlineLane  // least-laxity promotion against arrival-order deadlines (deadline_lane.go)
	batch      batchOrder    // the order of the calls on the device (decode_first.go)
	prefill    prefillBudget // the prefill chunk beside the decodes (prefill_budget.go)
	retain     retainHint    // which finished calls' cached contexts are evicted first (retain_hint.go)
}

// NewPitstop builds the policy.
func NewPitstop(o Options) *Pitstop {
	o = o.Defaults()
	a := newAttained(criticalPath, o)
	a.wholeCalls, a.noDemote = true, true
	starve := newStarvation(o)
	starve.threshold = -1
	if o.PitstopStarvation > 0 {
		starve.threshold = o.PitstopStarvation
	}
	tail, _ := newTailRules(o) // Validate reports bad values
	rank, _ := newRankMode(o)
	recache, _ := newReadmitCache(o.PitstopReadmit)
	room, _ := newHostRoom(o.PitstopHostRoom)
	memory, _ := newIdleMemory(o.PitstopHandling)
	lead, _ := newProgramLead(o.PitstopProgramLead)
	lead.started, _ = newAdmission(o.PitstopAdmission)
	batch, _ := newBatchOrder(o.PitstopBatch)
	prefill, _ := newPrefillBudget(o.PitstopPrefill)
	retain, _ := newRetainHint(o.PitstopEvict)
	p := &Pitstop{
		a:          a,
		starve:     starve,
		beta:       max(o.PitstopBeta, 0),
		tailBound:  o.PitstopTailBound,
		weight:     o.ProgramWeight,
		cvLow:      o.ProgramCVLow,
		refresh:    scoreRefresh{every: o.ScoreRefresh},
		noQueues:   o.NoProgramQueues,
		fixedOrder: !isAuto(o.ProgramOrder),
		forced:     forcedOrder(o.ProgramOrder),
		restRules:  restRulesOf(o.ProgramOrder),
		chainsCall: o.ProgramOrder == "gittins-started-call",
		shapeTest:  shapeTestOf(o.ProgramOrder),
		censored:   censoredModeOf(o.ProgramOrder),
		noMOT:      o.NoMemoryOverTime,
		noDynamic:  o.NoDynamicHandling,
		noHeld:     o.NoHeldFirst,
		noCached:   o.NoCachedHandling,
		fcfsTail:   o.PitstopFCFSTail,
		fcfsSlack:  o.PitstopFCFSSlack,
		fcfs:       fcfsReference{expWait: o.PitstopReference == "exp"},
		tail:       tail,
		rank:       rank,
		trust:      newRankTrust(o.PitstopLaneGain, tail.overtaken, tail.evident),
		lane:       lateLane{rescue: tail.rescue, capped: tail.rescue || tail.control, gain: o.PitstopLaneGain, bySize: o.PitstopLaneOrder == "size"},
		recache:    recache,
		room:       room,
		memory:     memory,
		lead:       lead,
		batch:      batch,
		prefill:    prefill,
		retain:     retain,
		deadlines:  deadlineLane{slack: o.PitstopDeadlineSlack, feasible: o.PitstopDeadlineFeasible, exact: o.PitstopDeadlineExact, edf: edfOf(tail), fit: fitOf(tail), first: tail.first, final: tail.final, gated: tail.gated, sure: tail.sure, forecast: laneForecastOf(tail), overdue: overdueOf(tail), wake: wakeOf(tail), swap: swapOf(tail), lag: lagOf(tail)},
	}
	p.deadlines.shadow.keepQueue, p.deadlines.shadow.cached = tail.queue, tail.cached
	p.boost.byWait, p.boost.fullKV, p.boost.byTail, p.boost.byResp = tail.boostWait, tail.boostFull, tail.boostTail, tail.boostResp
	p.boost.byOwn = tail.boostOwn
	p.past.guard.hold, p.past.guard.busy = tail.boostPast && tail.hold, tail.boostPast && tail.busy
	if tail.boostAged {
		p.boost.byBound = tail.power
	}
	if tail.overdue && tail.checked {
		p.deadlines.overdueCheck = &shadowCheck{}
	}
	if tail.overdue && tail.evident {
		p.deadlines.overdueCheck = &shadowCheck{band: &shadowBand{strict: tail.checked}} // the check with a band (shadow_band.go)
	}
	p.trust.waiting, p.trust.each = tail.overdue && tail.trust, tail.overdue && tail.trust && tail.each
	first := byCall
	if p.forced == byGittinsRest {
		// The index starts as the call's order (model not ready): no
		// re-rank for a change of order at the first iteration, so that
		// with single-call programs the re-ranks fall where byCall's do.
		first = byGittinsRest
	}
	pooled := o.PitstopClasses == "pooled"
	p.pops = newPopulations(o.ProgramIdle, p.censored != censoredOff, pooled, first)
	p.a.table.pooled = pooled
	p.a.table.reshaped = p.pops.shapeChanged
	p.pops.shared, p.pops.alone = sharedModes(o.PitstopClasses)
	p.pops.dropAfter = time.Duration(o.PitstopClassIdle * float64(time.Second))
	return p
}

// overdueOf is the deadline lane's overdue promotion when the tail rule asks
// for it (PitstopTail "...-overdue"), else nil.
func overdueOf(r tailRules) *laneOverdue {
	if !r.overdue {
		return nil
	}
	return &laneOverdue{}
}

// laneForecastOf is the deadline lane's queue forecast when the tail rule's
// trigger reads it (laneForecast), else nil.
func laneForecastOf(r tailRules) *laneForecast {
	if !r.forecast {
		return nil
	}
	return &laneForecast{slack: r.slack, guard: guardOf(r)}
}

// guardOf is the forecast lane's overload guard when the tail rule asks
// for it ("-guard"), else nil.
func guardOf(r tailRules) *overloadGuard {
	if !r.guard {
		return nil
	}
	return &overloadGuard{hold: r.hold}
}

// edfOf is the deadline lane's EDF schedule when the tail rule tests the
// promoted set's feasibility (PitstopTail "aging+feasible",
// "aging+feasible-p99", "aging+feasible-floor", "aging+feasible-fit"),
// else nil.
func edfOf(r tailRules) *edfSchedule {
	if !r.feasible {
		return nil
	}
	return &edfSchedule{toP99: r.toP99, floor: r.floor}
}

// fitOf is the deadline lane's no-eviction test when the tail rule asks
// for it (PitstopTail "aging+feasible-fit"), else nil.
func fitOf(r tailRules) *promotionFit {
	if !r.fit {
		return nil
	}
	return &promotionFit{}
}

// swapOf is the deadline lane's host-room test when the tail rule asks
// for it (PitstopTail "aging+warm+swap"), else nil.
func swapOf(r tailRules) *promotionSwap {
	if !r.swap {
		return nil
	}
	return &promotionSwap{}
}

// wakeOf is the deadline lane's last-moment promotion when the tail rule
// asks for it, else nil.
func wakeOf(r tailRules) *laneWake {
	if !r.wake {
		return nil
	}
	w := &laneWake{}
	w.reset()
	return w
}

// lagOf is the deadline lane's learned lag when the tail rule asks for it
// (PitstopTail "aging+warm+first-lag"), else nil.
func lagOf(r tailRules) *promotionLag {
	if !r.lag {
		return nil
	}
	return &promotionLag{}
}

// programOrder is how programs are ordered now (see Pitstop).
type programOrder uint8

const (
	byCall        programOrder = iota // the call's memory-over-time alone
	byRemaining                       // plus the program's expected remaining work
	byArrival                         // programs in arrival order
	byQueue                           // the program's attained-service queue, then the call's memory-over-time
	byGittins                         // the program's Gittins-index level, then the call's memory-over-time
	byGittinsRest                     // the Gittins index of the program's remaining service given the call's own rest (gittins_order.go)
	byCensored                        // chains by the censored Gittins index, then the call's memory-over-time (gittins_censored.go)
)

// programOrders names the orders for Options.ProgramOrder.
var programOrders = map[string]programOrder{"call": byCall, "remaining": byRemaining, "arrival": byArrival, "queues": byQueue, "gittins": byGittins}

// orderOf is the program-level order of the population's programs now
// (see Pitstop); the measurements behind it are in
// docs/results-policies.md.
func (p *Pitstop) orderOf(pop *population) programOrder {
	switch {
	case p.fixedOrder && p.forced == byGittinsRest:
		return p.restOrder(pop)
	case p.fixedOrder:
		return p.forced
	}
	return p.startedOrder(pop) // gittins_started.go
}

// Priority: calls on the device first (class 0); then starving and
// β-promoted calls (class 1); then the calls a tail rule promotes (class
// 1.25–1.5, see the cases); then the others: class 2 +
// their program's queue (byQueue), 2 + the program's arrival·1e-6
// (byArrival) or 2, each by
// memory-over-time, lowest first (plus the program's expected remaining work
// with ProgramOrder "remaining"), except in arrival order, where a program's
// own calls go highest first.
func (p *Pitstop) Priority(v *engine.View, s *engine.Sequence) engine.Priority {
	st := stateOf(s)
	starved := p.starve.ranked(v, s, st)
	if st.row == nil {
		p.a.queueOf(v, s, st) // a call seen before its arrival event: join the table
	}
	pop := p.popOf(s, st)
	ord := p.orderNow(pop)
	if p.tail.shadowed() {
		p.deadlines.deadlineOf(v, s, st) // every call enters the shadow at its first rank
	}
	if s.State() == engine.Running {
		if ord == byArrival {
			return p.batch.running(s, st.row.first.Seconds())
		}
		pr := p.batch.running(s, s.Arrival().Seconds()) // decode_first.go
		if p.lateOnDevice(v, s, st) {
			pr.Class = 0 // decode-first-late: past its due, ahead of the decodes
		}
		return pr
	}
	var key float64
	if p.noMOT {
		key = s.ReadyAt().Seconds()
	} else {
		key = p.score(v, s, st)
	}
	if ord == byGittinsRest {
		key = p.restKey(v, s, st, key) // before the aging: it ages the program's key as it ages the call's
	}
	class := 2.0
	switch {
	case p.tail.boost && ord != byArrival && !p.noMOT:
		key = p.boostKey(v, s, st) // boosted arrival time (boost_key.go): in place of the aging and the cached-prefix urgency
	case p.tail.boostPast && ord != byArrival && !p.noMOT && p.boostPastKey(v, s, st, &key):
		// past capacity: the boosted arrival time (boost_past.go)
	case p.tail.aging && ord != byArrival:
		key = p.agedKey(v, s, key)
		fallthrough
	default:
		key = p.readmitKey(v, s, st, key, ord) // readmit_cache.go
	}
	switch ord {
	case byRemaining:
		key += p.weight * pop.model.remaining(st.row.attained())
	case byArrival:
		// A program finishes with its longest branch: its own calls go
		// longest first (LPT), so the long branch does not start last.
		class += p.lead.arrivalClass(s, st, p.programArrival(s, st), &p.fcfs)
		key = -key
	case byQueue:
		class += float64(p.a.queues.index(st.row.attained()))
	case byCensored:
		class += p.censoredClass(pop, st.row.attained())
	case byGittins:
		if pop.model.ready() {
			class += float64(pop.model.gittins.level(st.row.attained().Seconds()))
		} else {
			class += float64(p.a.queues.index(st.row.attained())) // until the model is ready: ATLAS's queues
		}
	}
	if p.tailBound > 0 {
		// Explicit tail bound: earliest deadline first among the calls that
		// would pass it.
		deadline := s.Arrival().Seconds() + p.tailBound
		if v.Now.Seconds()+restOfService(v, s, st) > deadline {
			return engine.Priority{Class: 1.5, Key: deadline}
		}
	}
	if f := p.deadlines.forecast; f != nil && v.Iteration == p.deadlines.rerankAt && st.hasDeadline {
		dev, tool := restParts(v, s, st)
		f.note(v.Now.Seconds(), forecastCall{class: class, key: key, prefill: prefillShare(v, s), rest: dev + tool, due: p.deadlines.due(v, s, st), st: st})
	}
	switch {
	case starved || p.promoted(v, s, st):
		class = 1
	case s.State() == engine.Swapped && !p.noHeld && p.hostFirst(v, s):
		// Goodput protection: a call whose KV waits on the host, where
		// bringing it back wastes less than recomputing it, goes ahead of
		// the calls that hold nothing, as calls on the device do: left
		// behind them it keeps the host tier full, and the next calls that
		// must leave the device are discarded and recomputed (coding past
		// capacity: 19.6 M tokens recomputed without the rule, none with
		// it; docs/results-policies.md). Where recomputing is the cheaper
		// (short contexts, per-block copies) the rule only adds swaps.
		class = 1.25
	case p.tail.deadline:
		// Least laxity against the call's arrival-order deadline: earliest
		// deadline first among the calls that would miss it behind the rank.
		if dl, ok := p.deadlines.urgent(v, s, st); ok {
			return engine.Priority{Class: 1.5, Key: dl}
		}
	case p.inLane(v, s) && p.lane.bySize:
		// The late lane by the ranked key: the most calls ended within T
		// per unit of device time.
		return engine.Priority{Class: 1.4, Key: key}
	case p.lateVsFCFS(v, s) || p.inLane(v, s):
		// Waited past arrival order's p99 end-to-end time: served in
		// arrival order, ahead of the ranked calls.
		return engine.Priority{Class: 1.5, Key: s.Arrival().Seconds()}
	}
	return engine.Priority{Class: class, Key: key}
}

// lateVsFCFS reports whether the call has waited longer than arrival order
// would let any call take from arrival to its end at its p99: more than the
// reference wait (stretched by 1+ε) plus the p99 own time (fcfsReference).
// Such a call is in the tail whatever its own size; its wait alone decides,
// not a prediction of its rest.
func (p *Pitstop) lateVsFCFS(v *engine.View, s *engine.Sequence) bool {
	if !p.fcfsTail {
		return false
	}
	b, ok := p.fcfs.bound(p.fcfsSlack)
	return ok && v.Wait(s).Seconds() > b
}

// restOfService is the predicted rest of a call's service in seconds: its
// uncomputed context prefilled in token-budget chunks and its predicted
// decode to the end of the call one token per iteration, each at the present
// batch's iteration time, plus its predicted tool time.
func restOfService(v *engine.View, s *engine.Sequence, st *callState) float64 {
	c := v.Cost
	pr := s.Forecast().Predicted
	decode := decodeLeft(pr, s, st)
	t := 0.0
	if pr.HasTool {
		decode += max(pr.After, 0)
		t += max(pr.ToolTime, 0)
	}
	t += float64(decode) * c.IterTime(v.Running+1)
	return t + prefillTime(v, s)
}

// prefillShare is s's uncomputed context's share of the prefill server:
// its tokens over the token budget, times a full chunk's iteration time.
// Unlike prefillTime it does not round up to whole chunks, since short
// prompts share a chunk: summed over the calls ahead of one it is the time
// their prefill holds the budget (laneForecast).
func prefillShare(v *engine.View, s *engine.Sequence) float64 {
	prefill := s.NumTokens() - s.Computed()
	budget := v.Cost.TokenBudget
	if prefill <= 0 || budget <= 0 {
		return prefillTime(v, s)
	}
	return float64(prefill) / float64(budget) * v.Cost.IterTime(budget)
}

// prefillTime is the predicted seconds of s's uncomputed context, prefilled
// in token-budget chunks, each at a full chunk's iteration time.
func prefillTime(v *engine.View, s *engine.Sequence) float64 {
	prefill := s.NumTokens() - s.Computed()
	if prefill <= 0 {
		return 0
	}
	c := v.Cost
	budget := c.TokenBudget
	if budget <= 0 {
		budget = prefill
	}
	return float64((prefill+budget-1)/budget) * c.IterTime(budget)
}

// promoted is Autellix's anti-starvation: the call's program (with the call)
// has waited β times the service it got. It lasts to the end of the call's
// segment.
func (p *Pitstop) promoted(v *engine.View, s *engine.Sequence, st *callState) bool {
	if st.queue < 0 {
		return true
	}
	if p.beta <= 0 || st.row == nil {
		return false
	}
	wait := st.row.wait + v.Wait(s) - st.waitBase
	svc := st.row.service + s.Service() - st.svcBase
	if svc > 0 && float64(wait) >= p.beta*float64(svc) {
		st.queue = -1
		return true
	}
	return false
}

// score is the memory-over-time of the call's current segment under the
// least-waste handling predicted for it. A call that has not changed since it
// was scored keeps its score (unless ScoreRefresh asks for fresh ones).
func (p *Pitstop) score(v *engine.View, s *engine.Sequence, st *callState) float64 {
	k := keyOf(s)
	k.cached = p.recache.cached(v, s)
	if r, ok := p.resumePaid(v, s, st); ok {
		st.score, st.scoreFor = r, k
		return r
	}
	if st.scoreFor == k && !p.refresh.now {
		return st.score
	}
	seg := segmentOf(s.Forecast().Predicted, s, st)
	if !p.noHeld {
		seg.Held = max(s.Computed(), k.cached) // held KV and the cached prefix are not prefilled again
	}
	st.score = p.rankOf(v, s, st, seg)
	st.scoreFor = k
	return st.score
}

// Handle is the least waste with the predicted remaining tool time, chosen
// at the tool call. While the call waits the choice stands until the tool
// overruns its prediction; from then on (unless NoDynamicHandling) it is
// re-checked every iteration with the remaining time estimated as the time
// already spent (a tool known to be late is expected to take as long again).
func (p *Pitstop) Handle(v *engine.View, s *engine.Sequence) handling.Kind {
	if k, ok := p.idleHandle(v, s); ok {
		return k // PitstopHandling "idle": memory is worth nothing now (idle_memory.go)
	}
	st := stateOf(s)
	elapsed := s.ToolElapsed(v.Now)
	overdue := elapsed > s.Tool().Expected
	if st.kindSet && (p.noDynamic || !overdue) {
		if st.kind == handling.Swap && !hostFits(v, s) {
			return handling.Discard
		}
		return st.kind
	}
	sit := v.Situation(s)
	if overdue {
		sit.ToolRemaining = elapsed
	}
	k, _ := handling.Choose(sit, v.Cost, allowedKinds(v, s)...)
	if k == handling.Swap {
		// With the prefix cache, a swap is insurance against the cached
		// blocks' eviction: weigh it by the risk (handling.ChooseCached).
		// Only in place of a swap: taking the risk in place of a preserve
		// cost infercept-multi 1-18% of its mean (docs/results-policies.md),
		// since a call whose blocks are lost comes back behind the queue.
		k, _ = handling.ChooseCached(sit, v.Cost, p.evictionRisk(v, s), allowedKinds(v, s)...)
	}
	st.kind, st.kindSet = k, true
	return k
}

// evictionRisk is the probability that a paused call's blocks, freed into
// the prefix cache now, are evicted before its tool returns: that the tool
// outlasts the time the free blocks ahead of them take to be consumed at the
// engine's highest allocation rate (handling.EvictionHorizon), over the
// predicted duration distribution (median and p90 when the estimator has
// them). 1 (InferCept's choice) with NoCachedHandling.
func (p *Pitstop) evictionRisk(v *engine.View, s *engine.Sequence) float64 {
	if p.noCached {
		return 1
	}
	h := v.Cost.EvictionHorizon(v.FreeBlocks*v.BlockSize) - p.readmit.mean
	return toolTimeOf(v, s).Outlasts(h)
}

// toolTimeOf is what the forecast knows of a paused call's tool duration.
func toolTimeOf(v *engine.View, s *engine.Sequence) handling.ToolTime {
	t := handling.ToolTime{Mean: s.Tool().Expected, Elapsed: s.ToolElapsed(v.Now)}
	if d := s.Forecast().Dist; d != nil {
		for i, q := range d.ToolTimeLevels {
			if i >= len(d.ToolTimeQuantiles) {
				break
			}
			switch q {
			case 0.5:
				t.P50 = d.ToolTimeQuantiles[i]
			case 0.9:
				t.P90 = d.ToolTimeQuantiles[i]
			}
		}
	}
	return t
}

func (p *Pitstop) Evict(v *engine.View, s *engine.Sequence) handling.Kind {
	p.memory.wanted(v) // a running call gives way: memory is short
	return leastWasteEvict(v, s)
}

func (p *Pitstop) Traits() engine.Traits { return engine.Traits{PrefixCache: true} }

// Refresh re-ranks every runnable call when the program order changes, every
// 4·AgingEvery iterations while programs are in queues (AgingEvery with β),
// when a call starved, and every ScoreRefresh iterations when set. The aging
// (the waiting calls' keys age at different rates) re-ranks every
// 4·AgingEvery iterations too: more often would break the ordering step's
// budget (issue 3: a re-rank of 10,000 waiting calls costs milliseconds).
func (p *Pitstop) Refresh(v *engine.View) bool {
	due := p.starve.refresh(v)
	// A new program order re-ranks everything at once; within an order only
	// the queues (a program's service grows while its other calls run) and β
	// drift, slowly: queues are re-checked every 4·AgingEvery iterations.
	moved, drifting := p.ordersMoved()
	every := 4 * p.a.agingEvery
	if p.beta > 0 {
		every = p.a.agingEvery
	}
	drifts := p.beta > 0 || p.fcfsTail || p.tail.aging || p.tail.boost || p.tail.lane || p.tail.deadline || p.tailBound > 0 || drifting
	if moved || drifts && v.Iteration-p.a.lastAging >= every {
		p.a.lastAging = v.Iteration
		p.keepOrders()
		due = true
		if p.tail.boost || p.tail.boostPast {
			p.boost.update(&p.fcfs, p.fcfsSlack) // γ solved again (boost_key.go)
		}
	}
	due = p.refresh.due(v) || due
	if p.deadlines.wake != nil && p.deadlines.wake.due(v) {
		due = true // a deferred candidate's laxity ran out (laneWake)
	}
	if due && p.tail.deadline {
		p.deadlines.rerank(v) // the promoted calls are counted afresh
		if p.tail.boostPast {
			p.past.note(v.Now.Seconds(), p.deadlines.bar()) // boost_past.go
		}
		p.deadlines.reference, _ = p.fcfs.bound(p.fcfsSlack)
		p.deadlines.referenceWait, p.deadlines.referenceKnown = p.fcfs.wait()
		if p.tail.trust && p.tail.overdue {
			if o := p.deadlines.overdue; p.trust.each {
				p.trust.stepOn(o.fresh, o.fresh) // each call once: its step up comes at its end (rank_trust.go)
			} else {
				p.trust.stepOn(o.late, o.seen) // the rank's spread from the waiting calls (rank_trust.go)
			}
		}
	}
	return due
}

func (p *Pitstop) Observe(e *engine.Event) {
	p.a.observe(e)
	p.readmit.observe(e)
	if p.tail.resume {
		observeResume(e)
	}
	if p.rank.auto != nil {
		p.rank.auto.observe(e) // --pitstop-rank auto learns from finished segments (rank_choice.go)
	}
	if p.tail.shadowed() {
		p.deadlines.shadow.observe(e)
		p.deadlines.observe(e)
		if c := p.deadlines.overdueCheck; c != nil {
			c.observe(e) // shadow_check.go
		}
	}
	if p.fcfsTail || p.tail.aging || p.tail.boost || p.tail.lane || p.tail.control || p.tail.deadline || p.lead.auto {
		p.fcfs.observe(e) // the reference serves the tail rules alone
		p.observeLane(e)
	}
	if p.tail.boost || p.tail.boostPast {
		p.boost.observe(e) // boost_key.go
	}
	if p.tail.boostPast {
		p.past.observe(e) // boost_past.go
	}
	p.retain.observe(e, &p.pops)
	p.prefill.observe(e)
	if e.Kind == engine.EvArrived || e.Kind == engine.EvFinished {
		p.pops.count(e, p.popOf(e.Seq, stateOf(e.Seq)))
	}
	switch e.Kind {
	case engine.EvPaused:
		if st := stateOf(e.Seq); st.queue < 0 {
			st.queue = 0 // a β promotion lasts to the end of the segment
		}
	case engine.EvFinished:
		p.popOf(e.Seq, stateOf(e.Seq)).model.finished(e.Seq)
	case engine.EvIteration:
		if !p.noQueues {
			p.pops.sweep(&p.a.table, e.Time)
		}
	}
}

// Queue is the attained-service queue of the call's program while programs
// are in queues, -1 for a promoted or starving call, 0 otherwise; for
// metrics.
func (p *Pitstop) Queue(s *engine.Sequence) int {
	st := stateOf(s)
	switch {
	case st.queue < 0 || st.starved:
		return -1
	case st.row != nil && p.orderOf(p.popOf(s, st)) == byQueue:
		return p.a.queues.index(st.row.attained())
	}
	return 0
}

// swapCheaper reports whether bringing the call's KV back from the host
// wastes less than recomputing it would (InferCept's wastes, no tool time).
func swapCheaper(v *engine.View, s *engine.Sequence) bool {
	sit := v.Situation(s)
	sit.ToolRemaining = 0
	k, _ := handling.Choose(sit, v.Cost, handling.Swap, handling.Discard)
	return k == handling.Swap
}
