package policy

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/pitstop-llm/pitstop/engine"
)

// Options are the knobs of the policies. A zero field takes its default
// (listed with each field); a negative one, where said, turns the feature
// off.
type Options struct {
	// StarvationThreshold is LAMPS's starvation counter (lamps, pitstop): a
	// runnable call that has not run for this many iterations goes to the
	// head of the queue until it finishes. Default 100 (LAMPS §4.4); < 0: off.
	StarvationThreshold int64
	// ScoreRefresh re-scores every runnable call each N iterations (lamps,
	// pitstop), LAMPS's score-refresh interval. Default 0: a call is scored
	// when it changes (arrives, runs, is preempted, resumes), which is every
	// iteration for running calls.
	ScoreRefresh int64
	// StarvationCheck is how often, in iterations, lamps and pitstop look
	// for calls that reached the starvation threshold (each look that finds
	// one re-ranks every runnable call). Default 8.
	StarvationCheck int64

	// Queues is K, the number of attained-service queues (mlfq, plas, atlas,
	// pitstop). Default 8.
	Queues int
	// Quantum is the first queue's quantum in seconds of service; queue i
	// (from 0) has quantum Quantum·2^i and covers program service
	// [Quantum·(2^i−1), Quantum·(2^(i+1)−1)), the last one up to infinity.
	// Default 0.5 s.
	Quantum float64
	// Beta is Autellix's anti-starvation ratio: a call is promoted to the
	// first queue when (program wait + call wait) / (program service + call
	// service) ≥ Beta. Default 8 (as in a public port; the paper gives none);
	// < 0: off.
	Beta float64
	// AgingEvery is how often, in iterations, the β ratio is checked for
	// calls that are not running (a check re-ranks every runnable call).
	// Default 16.
	AgingEvery int64
	// MultiStep applies demotions only every N iterations (Autellix's
	// multi-step scheduling: fewer preemptions). Default 1.
	MultiStep int64
	// PitstopStarvation and PitstopBeta are pitstop's anti-starvation (LAMPS's
	// counter in iterations, Autellix's β). Default 0: off (their cost to the
	// mean latency is measured in docs/results-policies.md); lamps and the
	// Autellix policies use StarvationThreshold and Beta.
	PitstopStarvation int64
	PitstopBeta       float64
	// PitstopTailBound is an explicit bound on a call's end-to-end latency,
	// in seconds (the deployment's latency target; 0: none): a waiting call
	// whose time since arrival plus the predicted rest of its service would
	// pass it goes ahead of the ranked calls, earliest deadline first.
	PitstopTailBound float64
	// PitstopFCFSTail turns on pitstop's tail rule against arrival order: a
	// waiting call that has waited more than (1+PitstopFCFSSlack) times the
	// wait arrival order would give (learned by the conservation law) plus
	// the p99 of the calls' own times goes ahead of the ranked calls, in
	// arrival order (fcfsReference). Off by default: measured in
	// docs/results-policies.md. PitstopFCFSSlack (ε) defaults to 0.
	PitstopFCFSTail  bool
	PitstopFCFSSlack float64
	// PitstopTail picks pitstop's tail rules (newTailRules): "aging+warm"
	// (the default: "aging", with a waiting call whose context is still
	// prefix-cached aged from its program's first arrival),
	// "aging+warm+first-final" ("aging+warm" with the deadline lane
	// promoting only calls that have not started or have no tool call
	// ahead), "aging+warm+first-final-gated-fit" (that lane promoting only
	// while its realized p99 is past arrival order's, and only a call whose
	// peak fits in the free blocks: session 12), "aging"
	// (generalized cμ aging of the memory-over-time key against arrival
	// order's p99, learned online), "guard" (no aging: the order before
	// session 7, without the tail guard removed in session 13), and the
	// others newTailRules lists.
	// PitstopAgingPower is the aging's exponent (default 2) and
	// PitstopAgingClock what it ages by: "age" (time since arrival, the
	// default) or "wait" (time runnable and not running). Measured in
	// docs/results-policies.md (session 7).
	PitstopTail       string
	PitstopAgingPower float64
	PitstopAgingClock string
	// PitstopRank is how pitstop scores a waiting call's memory-over-time:
	// "point" (the default: the point forecast), "expected" (the
	// expectation over the length model's distribution, conditioned on the
	// tokens already generated; the point where the forecast has no
	// distribution), or the ablations "mean" and "median" (the rank at the
	// distribution's conditioned mean or median length), or "auto" (the
	// statistic that has ordered finished segments best, shrunk toward
	// arrival order as its concordance falls to chance; rank_choice.go).
	// Measured in docs/results-policies.md (session 8).
	PitstopRank string
	// PitstopLaneGain is the late lane's controller step (lateLane; 0: the
	// default 0.02) and PitstopLaneOrder the order inside the lane: "arrival"
	// (the default) or "size" (the ranked key: the most calls ended within T
	// per unit of device time). Session 8's ablation knobs.
	PitstopLaneGain  float64
	PitstopLaneOrder string
	// PitstopReference is how pitstop's arrival-order p99 T is estimated
	// (fcfsReference): "mean" (the default: the conservation-law wait plus
	// the p99 of the calls' own times) or "exp" (the p99 of an exponential
	// wait of that mean plus an own time).
	PitstopReference string
	// PitstopProgramLead bounds how far an older program's calls go ahead of
	// a younger program's while programs finish in arrival order
	// (programLead): "off", "auto" (arrival order's p99 end-to-end time,
	// learned) or seconds (the default: 0). PitstopAdmission "started"
	// ranks a program's first call after every call of the started
	// programs (arrivalClass) (the default); "off" as its program's other
	// calls. Defaults since session 9; measured in docs/results-policies.md
	// (session 9).
	PitstopProgramLead string
	PitstopAdmission   string
	// PitstopDeadlineSlack is the own time's factor in a call's
	// arrival-order deadline (deadlineLane; 0: the default 1) and
	// PitstopDeadlineFeasible leaves a call that can no longer make its
	// deadline to the rank (Moore–Hodgson); PitstopDeadlineExact holds each
	// call to its own arrival-order deadline without the floor of arrival
	// order's p99 after its arrival. Session 9's knobs, for PitstopTail
	// "deadline" and "aging+deadline".
	PitstopDeadlineSlack    float64
	PitstopDeadlineFeasible bool
	PitstopDeadlineExact    bool
	// PitstopReadmit is pitstop's cached-prefix-aware re-admission
	// (readmitCache): "cached" (the default), "held", "sunk" or "off".
	PitstopReadmit string
	// PitstopHostRoom is pitstop's host-tier-aware admission (hostRoom):
	// "off", "admit" (session 9's default), "victim" or "peak" (the default
	// since session 11: admit plus the peak-memory admission, peak_admit.go).
	PitstopHostRoom string
	// PitstopHandling is how pitstop prices the device memory a paused call
	// holds: "waste" (session 11's: InferCept's memory-over-time wastes with
	// the prefix cache's eviction risk) or "idle" (session 12: a paused call
	// is preserved while memory is idle, nothing waiting for blocks and the
	// free pool covering the batch's growth, and priced as "waste" from the
	// first iteration memory is short; idle_memory.go) or "idle-lost"
	// ("idle" only for a call whose freed blocks the prefix cache would more
	// likely than not evict before its tool returns; the default since
	// session 12).
	PitstopHandling string
	// PitstopBatch orders pitstop's calls on the device among themselves
	// (batchOrder): "decode-first" (the default since session 13: the calls
	// that need one token ahead of those prefilling, vLLM's chunked-prefill
	// rule), "arrival" (every call on the device in arrival order, before)
	// or "decode-first-late" (decode-first, but a prefilling call whose rest
	// would end past the deadline lane's due time stays ahead of the
	// decodes; session 14).
	PitstopBatch string
	// PitstopPrefill sizes the prefill chunk of pitstop's iterations
	// (prefillBudget): "full" (the default: the profile's token budget) or
	// "balance" (the chunk where the delay it costs the decoding calls
	// meets what it saves the calls waiting for their prefill) or
	// "balance-inflow" (balance, never draining the backlog slower than
	// prefill work arrives); session 16. "balance-expected" and
	// "balance-expected-inflow" price the decodes' delay as its expectation
	// over each call's length distribution (expected_chunk.go), and
	// "-measured" with each takes the decodes' time per iteration from the
	// last iteration (decode_cost.go); session 17.
	// "balance-expected-arrivals" prices the wait of the calls that arrive
	// while the backlog drains and takes L's global minimum
	// (arrival_chunk.go); "-fit" (balance-expected-fit,
	// balance-expected-arrivals-fit) learns an iteration's time from every
	// iteration's prompt tokens, decodes and decode context (iter_fit.go);
	// "balance-expected-flow" also prices the decodes of the calls to come
	// (flow_decodes.go), and "-busy" the first formulation (busy_chunk.go);
	// session 18.
	PitstopPrefill string
	// PitstopEvict is pitstop's hint to the prefix cache of which finished
	// calls' contexts go first (retainHint): "program" (the default since
	// session 14: Belady's rule against the LRU head) or "lru" (no hint).
	PitstopEvict string
	// PitstopClasses is whose programs pitstop learns a program's
	// statistics from (population.go): "class-alone" (the default since
	// session 17: its engine.Request.Class's, the runtime's tenant, and a
	// class keeps an order of its own, its DAG programs' arrival order or
	// its chains' warm-up queues, only while no other class has a call in
	// the engine: a tenant back after its statistics were dropped no longer
	// waits behind every warm tenant's call for its first ten programs,
	// tenant17), "class-shared" (session 16's default: the same for arrival
	// order only; the warm-up queues whoever else waits), "class" (per
	// class, each class in its own order whoever else waits: a class in
	// arrival order then ranks after every waiting call of the classes in
	// the call's order) or "pooled" (every
	// program the engine sees, as before). Bench's runs have one class, so
	// their results are the same under all four.
	PitstopClasses string
	// PitstopClassIdle drops a class's population (class_lifetime.go) once
	// the class has had no call in the engine for this many seconds and
	// none of its programs is left in the process table. 0 (the default):
	// populations are kept for good. Session 16, classes16.
	PitstopClassIdle float64
	// ProgramWeight weighs pitstop's program term with ProgramOrder
	// "remaining" (the program's expected remaining memory-over-time, from
	// programModel) against the call's own memory-over-time. Default 1.
	ProgramWeight float64
	// ProgramCVLow is the CV threshold of ProgramOrder "gittins-rest+cv"
	// (session 11's ablation): below it, programs of one size that are
	// mostly DAGs finish in arrival order. Default 0.7 (session 2). The
	// default order no longer reads it: since session 14 the learned
	// Gittins index decides where the threshold did (gittins_started.go).
	ProgramCVLow float64
	// ProgramOrder fixes pitstop's program-level order instead of choosing
	// it from the learned index: call, remaining, arrival, queues, gittins, or
	// gittins-rest (the Gittins index of the program's remaining service
	// given the call's own rest, gittins_order.go) with any of the old
	// rules back on: +cv, +shape, +warmup. Default auto, also named
	// gittins-started (arrival order of DAG programs while the index never
	// lets a fresh program pass a started one; chains by attained service
	// until ten programs completed; else the call's order:
	// gittins_started.go), or gittins-started-call (chains in the call's
	// order from the start), or gittins-started-shown (the DAG test over
	// the programs that made a second call: shape_shown.go), or
	// gittins-started-held (the DAG test leaving out the programs with no
	// token yet; what auto does since session 18), or gittins-started-all
	// (the DAG test over every program seen: auto before session 18), or gittins-censored / gittins-censored-call /
	// gittins-censored-median (chains by the Gittins index over completed and live, censored,
	// programs, in place of the warm-up's count: gittins_censored.go).
	ProgramOrder string
	// ProgramIdle is how long, in seconds, a program must have had no call in
	// the engine before pitstop counts it as complete and learns from its
	// total service. Default 120 (longer than any think time between calls
	// in the workloads).
	ProgramIdle float64
	// ProgramTTL is how long, in seconds, a program with no active call stays
	// in the process table. Default 600.
	ProgramTTL float64

	// TTFTSLO and TPOTSLO are SOLA's latency targets in seconds. Defaults
	// 0.4 and 0.15 (SOLA's 10x single-request latency for Llama3-8B).
	TTFTSLO, TPOTSLO float64
	// SOLAWindow is the sliding window, in iterations, over which SOLA
	// compares how far TTFT and TPOT are from their SLOs. Default 16.
	SOLAWindow int

	// TTLScale multiplies Continuum's pin TTL (reload cost plus expected
	// queueing). Default 1.
	TTLScale float64

	// SRPTServiceOnly ranks srpt by remaining engine work without the tool
	// time; SRPTRunningFirst makes it keep calls on the device running first
	// (no preemption to admit). Both off: the reference as DESIGN.md §5
	// specifies it.
	SRPTServiceOnly, SRPTRunningFirst bool

	// HostEviction is what gives way when a swap-out finds the host tier
	// full: "newcomer" (default): its KV is discarded, whatever is parked
	// there; "resume": parked KV that resumes later than it, latest first
	// (ResumeOrder, Belady's rule with predicted tool durations).
	HostEviction string

	// Ablations of pitstop: no program-level queues (one queue: memory over
	// time and anti-starvation only), no memory-over-time ordering inside a
	// queue (FCFS as ATLAS), no dynamic handling (the handling predicted at
	// the tool call is kept while the call waits).
	NoProgramQueues, NoMemoryOverTime, NoDynamicHandling bool
	// Ablations of pitstop's goodput protection: calls whose KV waits on the
	// host rank like calls holding nothing, and priced as a full prefill
	// (NoHeldFirst); the handling at a tool call ignores the prefix cache
	// (NoCachedHandling: InferCept's wastes, as if every freed block were
	// lost at once).
	NoHeldFirst, NoCachedHandling bool
}

// Defaults returns o with every zero field set to its default.
func (o Options) Defaults() Options {
	def := func(x *int64, d int64) {
		if *x == 0 {
			*x = d
		}
	}
	deff := func(x *float64, d float64) {
		if *x == 0 {
			*x = d
		}
	}
	def(&o.StarvationThreshold, 100)
	def(&o.StarvationCheck, 8)
	def(&o.AgingEvery, 16)
	def(&o.MultiStep, 1)
	if o.Queues == 0 {
		o.Queues = 8
	}
	deff(&o.Quantum, 0.5)
	deff(&o.Beta, 8)
	deff(&o.ProgramTTL, 600)
	deff(&o.ProgramIdle, 120)
	deff(&o.ProgramWeight, 1)
	// Session 10's default tail (docs/results-policies.md, "react past
	// capacity" and "session 10, lead"): the aging, with a call whose
	// context is still prefix-cached aged from its program's first arrival.
	// Session 11's "aging+warm+first-final" sustains more on azure-code and
	// costs Show 1's means there ("session 11, lead").
	// Session 12 (docs/results-policies.md, "a lane that promotes only
	// while its tail is past arrival order's" and "session 12, lead"): the
	// deadline lane of first-final on it, promoting only while the p99 this
	// policy realizes is past arrival order's and only a call whose peak
	// fits the free blocks.
	if o.PitstopTail == "" {
		o.PitstopTail = "aging+warm+first-final-gated-fit"
	}
	// Session 13 (docs/results-policies.md, "the last mean ties" and
	// "session 13, lead"): the calls on the device that need one token go
	// before those prefilling, vLLM's chunked-prefill rule; an old call's
	// re-prefill no longer takes the token budget from younger decodes.
	if o.PitstopBatch == "" {
		o.PitstopBatch = "decode-first"
	}
	// Session 14 (docs/results-policies.md, "the scheduler tells the prefix
	// cache which contexts come back"): a finished program's context goes
	// before the LRU head once it is the less likely to be reused.
	if o.PitstopEvict == "" {
		o.PitstopEvict = "program"
	}
	// Session 16 (docs/results-policies.md, "statistics per tenant"): one
	// tenant's programs no longer shape another's order or cache retention;
	// "class" gave the tenants in the call's order strict priority over a
	// tenant in arrival order (mixed's families as tenants @0.7: mcts's
	// mean +26 %, every call's +19 %).
	if o.PitstopClasses == "" {
		o.PitstopClasses = "class-alone"
	}
	// Session 11's host room (docs/results-policies.md, "session 11:
	// admissions and preserved calls" and "session 11, lead"): the
	// host-room admission plus the peak-memory admission. Session 9's
	// defaults: in arrival order of programs the started programs first
	// with no lead.
	if o.PitstopHostRoom == "" {
		o.PitstopHostRoom = "peak"
	}
	// Session 12's handling (docs/results-policies.md, "session 12: light
	// load" and "session 12, lead"): memory nobody waits for is priced at
	// zero for a paused call whose discarded context the prefix cache would
	// lose; "waste" is session 11's.
	if o.PitstopHandling == "" {
		o.PitstopHandling = "idle-lost"
	}
	if o.PitstopAdmission == "" {
		o.PitstopAdmission = "started"
	}
	if o.PitstopProgramLead == "" {
		o.PitstopProgramLead = "0"
	}
	deff(&o.PitstopAgingPower, 2)
	deff(&o.ProgramCVLow, 0.7)
	deff(&o.TTFTSLO, 0.4)
	deff(&o.TPOTSLO, 0.15)
	if o.SOLAWindow == 0 {
		o.SOLAWindow = 16
	}
	deff(&o.TTLScale, 1)
	return o
}

// Validate reports the first nonsensical knob.
func (o Options) Validate() error {
	o = o.Defaults()
	switch {
	case o.Queues < 1:
		return fmt.Errorf("queues must be at least 1, got %d", o.Queues)
	case o.Quantum < 0:
		return fmt.Errorf("quantum must be positive seconds, got %g", o.Quantum)
	case o.ScoreRefresh < 0:
		return fmt.Errorf("score refresh interval must not be negative, got %d", o.ScoreRefresh)
	case o.StarvationCheck < 1 || o.AgingEvery < 1 || o.MultiStep < 1:
		return fmt.Errorf("check intervals must be at least 1 iteration")
	case o.TTFTSLO < 0 || o.TPOTSLO < 0:
		return fmt.Errorf("SLOs must be positive seconds")
	case !isAuto(o.ProgramOrder) && !validOrder(o.ProgramOrder):
		return fmt.Errorf("unknown program order %q (valid: auto (also named gittins-started), gittins-started-call, gittins-started-shown, gittins-started-held, gittins-started-all, call, remaining, arrival, queues, gittins, gittins-rest, gittins-rest with any of +cv, +shape, +warmup, gittins-censored, gittins-censored-call, gittins-censored-median)", o.ProgramOrder)
	case o.SOLAWindow < 1:
		return fmt.Errorf("SOLA window must be at least 1 iteration, got %d", o.SOLAWindow)
	case o.TTLScale < 0:
		return fmt.Errorf("TTL scale must not be negative, got %g", o.TTLScale)
	case o.PitstopFCFSSlack < 0:
		return fmt.Errorf("pitstop fcfs slack must not be negative, got %g", o.PitstopFCFSSlack)
	case badTail(o) != nil:
		return badTail(o)
	case badRank(o) != nil:
		return badRank(o)
	case o.PitstopLaneGain < 0 || math.IsNaN(o.PitstopLaneGain) || math.IsInf(o.PitstopLaneGain, 0):
		return fmt.Errorf("pitstop lane gain must be a positive number (0: the default), got %g", o.PitstopLaneGain)
	case o.PitstopReference != "" && o.PitstopReference != "mean" && o.PitstopReference != "exp":
		return fmt.Errorf("unknown pitstop reference %q (valid: mean, exp)", o.PitstopReference)
	case o.PitstopLaneOrder != "" && o.PitstopLaneOrder != "arrival" && o.PitstopLaneOrder != "size":
		return fmt.Errorf("unknown pitstop lane order %q (valid: arrival, size)", o.PitstopLaneOrder)
	case o.PitstopDeadlineSlack < 0 || math.IsNaN(o.PitstopDeadlineSlack) || math.IsInf(o.PitstopDeadlineSlack, 0):
		return fmt.Errorf("pitstop deadline slack must be a positive number (0: the default 1), got %g", o.PitstopDeadlineSlack)
	case badReadmit(o) != nil:
		return badReadmit(o)
	case badHostRoom(o) != nil:
		return badHostRoom(o)
	case badHandling(o) != nil:
		return badHandling(o)
	case badBatch(o) != nil:
		return badBatch(o)
	case badPrefill(o) != nil:
		return badPrefill(o)
	case badEvict(o) != nil:
		return badEvict(o)
	case o.PitstopClasses != "class" && o.PitstopClasses != "pooled" && o.PitstopClasses != "class-shared" && o.PitstopClasses != "class-alone":
		return fmt.Errorf("unknown pitstop classes %q (valid: class, pooled, class-shared, class-alone)", o.PitstopClasses)
	case badLead(o) != nil:
		return badLead(o)
	case o.PitstopTailBound < 0:
		return fmt.Errorf("pitstop tail bound must not be negative seconds, got %g", o.PitstopTailBound)
	case o.PitstopClassIdle < 0:
		return fmt.Errorf("pitstop class idle must not be negative seconds, got %g", o.PitstopClassIdle)
	case o.ProgramTTL < 0:
		return fmt.Errorf("program TTL must not be negative, got %g", o.ProgramTTL)
	case o.HostEviction != "" && o.HostEviction != "newcomer" && o.HostEviction != "resume":
		return fmt.Errorf("unknown host eviction %q (valid: newcomer, resume)", o.HostEviction)
	}
	return nil
}

var constructors = map[string]func(Options) engine.Policy{
	"fcfs":      func(Options) engine.Policy { return FCFS{} },
	"vllm-opt":  func(Options) engine.Policy { return VLLMOpt{} },
	"infercept": func(Options) engine.Policy { return InferCept{} },
	"lamps":     func(o Options) engine.Policy { return NewLAMPS(o) },
	"mlfq":      func(o Options) engine.Policy { return NewMLFQ(o) },
	"plas":      func(o Options) engine.Policy { return NewPLAS(o) },
	"atlas":     func(o Options) engine.Policy { return NewATLAS(o) },
	"sola":      func(o Options) engine.Policy { return NewSOLA(o) },
	"continuum": func(o Options) engine.Policy { return NewContinuum(o) },
	"srpt":      func(o Options) engine.Policy { return NewSRPT(o) },
	"pitstop":   func(o Options) engine.Policy { return NewPitstop(o) },
	// vLLM's prefill-first scheduler without chunking (SOLA's vLLM-D).
	"vllm-prefill-first": func(Options) engine.Policy { return &VLLMPrefillFirst{} },
	// Ablations of pitstop, by name so that one bench run compares them.
	"pitstop-noqueues": func(o Options) engine.Policy { o.NoProgramQueues = true; return NewPitstop(o) },
	"pitstop-nomot":    func(o Options) engine.Policy { o.NoMemoryOverTime = true; return NewPitstop(o) },
	"pitstop-nodyn":    func(o Options) engine.Policy { o.NoDynamicHandling = true; return NewPitstop(o) },
	"pitstop-noheld":   func(o Options) engine.Policy { o.NoHeldFirst = true; return NewPitstop(o) },
	"pitstop-nocached": func(o Options) engine.Policy { o.NoCachedHandling = true; return NewPitstop(o) },
}

// Names lists the valid policy names.
func Names() []string {
	names := make([]string, 0, len(constructors))
	for n := range constructors {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// New builds a policy by name. Each call returns a fresh policy: those with
// state (process tables, counters) must not be shared between engines.
func New(name string, o Options) (engine.Policy, error) {
	c, ok := constructors[name]
	if !ok {
		return nil, fmt.Errorf("unknown policy %q (valid: %s)", name, strings.Join(Names(), ", "))
	}
	if err := o.Validate(); err != nil {
		return nil, fmt.Errorf("policy %s: %w", name, err)
	}
	p := c(o.Defaults())
	if o.HostEviction == "resume" {
		p = ResumeOrder{p}
	}
	return p, nil
}

func validOrder(name string) bool {
	_, _, ok := parseProgramOrder(name)
	return ok
}

// badTail is newTailRules's error on o's tail options (o with defaults).
func badTail(o Options) error { _, err := newTailRules(o); return err }

func badRank(o Options) error { _, err := newRankMode(o); return err }

// badReadmit is newReadmitCache's error on o.PitstopReadmit.
func badReadmit(o Options) error { _, err := newReadmitCache(o.PitstopReadmit); return err }

// badHostRoom is newHostRoom's error on o.PitstopHostRoom.
func badHostRoom(o Options) error { _, err := newHostRoom(o.PitstopHostRoom); return err }

// badHandling is newIdleMemory's error on o.PitstopHandling.
func badHandling(o Options) error { _, err := newIdleMemory(o.PitstopHandling); return err }
