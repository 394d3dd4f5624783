package main

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"golang.org/x/sync/errgroup"

	"github.com/pitstop-llm/pitstop/bench"
	"github.com/pitstop-llm/pitstop/bench/report"
	"github.com/pitstop-llm/pitstop/bench/workload"
	"github.com/pitstop-llm/pitstop/cluster"
	"github.com/pitstop-llm/pitstop/engine"
	"github.com/pitstop-llm/pitstop/engine/policy"
	"github.com/pitstop-llm/pitstop/engine/sim"
	"github.com/pitstop-llm/pitstop/predictor"
)

func init() { subcommands = append(subcommands, newBenchCmd) }

type benchFlags struct {
	workload, trace, executor, profile string
	policies                           []string
	rates                              []float64
	duration                           float64
	seed                               int64
	jsonPath, csvPath, outDir          string
	predErr                            float64
	predictor                          string
	classes                            string // --classes: none, family
	parallel, checkEvery               int
	progress                           bool
	popts                              policy.Options
	features                           string // --engine-features: bench.FeaturesSame or FeaturesPaper
	cacheEviction                      string // --cache-eviction: engine.Config.CacheEviction
	scaleTokens, scaleTime             float64
	sloTTFT, sloTPOT                   float64 // SLO attainment; 0: sola's SLOs
	stopAfter                          float64 // seconds of engine time; 0: off
	sustained                          sustainedFlags
	families                           familyFlags
	cpu                                cpuFlags
	cpuNames                           []string // flags of --executor cpu only
	replicas                           int      // bench --replicas (bench_cluster.go)
	balancers                          []string
	copts                              cluster.Options
	target                             targetFlags // bench --target (bench_target.go)
	// changed reports whether a flag was given on the command line (nil:
	// none was).
	changed func(name string) bool
}

func newBenchCmd() *cobra.Command {
	var f benchFlags
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Replay an agent workload on the engine for each policy and rate, and report latency, memory and swap metrics",
		Long: `bench replays a workload (programs of LLM calls with tool pauses) on the engine,
once per (policy, rate), with the simulated executor pricing each iteration by a GPU
cost profile (--executor sim), or with a real model's forward pass on this machine's
CPU (--executor cpu: runs go one at a time, the model calibrates first, and
--fit-profile writes a cost profile fitted to the measured iterations that
--executor sim --profile FILE replays). It prints a table and writes the JSON report
(docs/design.md §8), a CSV and PNG plots of latency against rate per policy.

The traces are GPU-sized: on a CPU scale them down with --scale-tokens (every token
count) and --scale-time (tool, think and arrival times), and keep --duration short;
give the sim replay the same workload flags to replay the same workload.

Workloads: ` + strings.Join(workload.Names(), ", ") + `
Policies:  ` + strings.Join(policy.Names(), ", ") + `
Profiles:  ` + strings.Join(sim.ProfileNames(), ", "),
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			f.changed = cmd.Flags().Changed
			return runBench(cmd.Context(), f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.workload, "workload", "infercept-multi", "workload name")
	fl.StringVar(&f.trace, "trace", "", "replay a trace file in the infercept JSON format instead of a named workload")
	fl.StringVar(&f.executor, "executor", "sim", "executor: sim (a cost profile prices each iteration; engine time is virtual) or cpu (a real model runs on this machine's CPU; see --model and the other cpu executor flags)")
	fl.StringVar(&f.profile, "profile", "a100-40g-gptj-6b", "cost profile name, or a path to a profile .json")
	fl.StringSliceVar(&f.policies, "policies", []string{"fcfs", "infercept"}, "comma-separated policies")
	fl.Float64SliceVar(&f.rates, "rates", []float64{1, 3, 5}, "comma-separated arrival rates (programs per second)")
	fl.Float64Var(&f.duration, "duration", 1800, "arrival window in seconds of engine time")
	fl.Int64Var(&f.seed, "seed", 1, "random seed (arrivals, sampling, prediction noise)")
	fl.StringVar(&f.jsonPath, "json", "", "write the JSON report here")
	fl.StringVar(&f.csvPath, "csv", "", "write a CSV report here")
	fl.StringVar(&f.outDir, "out", "", "write PNG plots into this directory")
	fl.StringVar(&f.classes, "classes", "none", "the engine class (serve's tenant) of each program of a plain run: none (one class) or family (the program id up to its last '-': mixed's chat, react and mcts as three tenants); the report splits calls' latencies by class (by_class)")
	fl.Float64Var(&f.predErr, "prediction-error", 0, "with --predictor oracle (ablation, upper bound): prediction error p, prediction = truth + N(0, p·truth)")
	fl.StringVar(&f.predictor, "predictor", "serve", "where policies' predictions come from: serve (what pitstop serve uses: the default length model learning online from the run's finished segments, through serve's own point step (predictor.ServedStep: the expert mixture, then the window mode where it orders better; one per replica) + online tool-duration statistics), onnx (the default length model, not learning + tool-duration statistics), history (the program's mean so far + tool-duration statistics), oracle (ablation, upper bound: truth + --prediction-error noise), serve-length (ablation: serve's lengths with the true tool times), serve-tool (ablation: the true lengths with serve's tool-duration statistics)")
	fl.IntVar(&f.parallel, "parallel", runtime.GOMAXPROCS(0), "runs at once")
	fl.IntVar(&f.checkEvery, "check-every", 0, "check block invariants every N iterations (0: at the end of each run)")
	fl.BoolVar(&f.progress, "progress", false, "show a progress bar even when stderr is not a terminal")
	fl.Float64Var(&f.scaleTokens, "scale-tokens", 1, "multiply every token count of the workload (prompts, decodes, tool returns) by this factor; a positive count stays >= 1")
	fl.Float64Var(&f.scaleTime, "scale-time", 1, "multiply the workload's tool, think and arrival times by this factor")
	fl.Float64Var(&f.stopAfter, "stop-after", 0, "end a run at this engine time (seconds) if programs are still unfinished, and mark it stopped (not sustained; its latencies are lower bounds); for policies that collapse past their load and would take hours to drain. 0: run every program to the end; else at least --duration")
	fl.Float64Var(&f.sloTTFT, "slo-ttft", 0, "SLO attainment: TTFT SLO in seconds that each run's requests are judged against (0: the sola policy's, --sola-ttft)")
	fl.Float64Var(&f.sloTPOT, "slo-tpot", 0, "SLO attainment: TPOT SLO in seconds (0: the sola policy's, --sola-tpot)")
	addSustainedFlags(fl, &f.sustained)
	addFamilyFlags(fl, &f.families)
	addPolicyFlags(fl, &f.popts)
	fl.StringVar(&f.features, "engine-features", bench.FeaturesSame, "engine features of each policy: same (every policy runs with pitstop's: prefix cache, chunked prefill, swap path; except "+strings.Join(bench.OwnFeatureNames(), " and ")+", defined by what they lack) or paper (each policy's own, the setup of the paper it reproduces: lamps and infercept without the prefix cache)")
	fl.StringVar(&f.cacheEviction, "cache-eviction", string(engine.CacheLRU), "the order in which the prefix cache evicts free blocks, the same for every policy (simulated executor): "+strings.Join(engine.CacheEvictions(), " or ")+" (the CLOCK algorithm: a block matched as a cached prefix since it last reached the queue's head goes back to the tail once)")
	addClusterFlags(fl, &f)
	addTargetFlags(fl, &f.target)
	f.cpuNames = addCPUFlags(fl, &f.cpu)
	return cmd
}

// newBenchPolicy builds the policy named name with the bench's knobs and
// engine features (--engine-features).
func newBenchPolicy(name string, f benchFlags) (engine.Policy, error) {
	p, err := policy.New(name, f.popts)
	if err != nil {
		return nil, err
	}
	return bench.WithEngineFeatures(f.engineFeatures(), name, p)
}

// classOf is --classes's class of a program: nil for none (one class),
// with family the program id up to its last '-'.
func (f benchFlags) classOf() func(p *workload.Program) string {
	if f.classes != "family" {
		return nil
	}
	return func(p *workload.Program) string {
		if i := strings.LastIndexByte(p.ID, '-'); i > 0 {
			return p.ID[:i]
		}
		return p.ID
	}
}

// simEngine is the engine configuration of a simulated run on profile p:
// the profile's, with --cache-eviction.
func (f benchFlags) simEngine(p *sim.Profile) engine.Config {
	c := p.EngineConfig()
	c.CacheEviction = engine.CacheEviction(f.cacheEviction)
	return c
}

// reportedEviction is --cache-eviction for the report: empty for the
// default, so that the default's JSON is unchanged.
func (f benchFlags) reportedEviction() string {
	if f.cacheEviction == "" || f.cacheEviction == string(engine.CacheLRU) {
		return ""
	}
	return f.cacheEviction
}

// engineFeatures is --engine-features, FeaturesSame when unset.
func (f benchFlags) engineFeatures() string {
	if f.features == "" {
		return bench.FeaturesSame
	}
	return f.features
}

// addPolicyFlags registers the policies' knobs (policy.Options); zero means
// the policy's default.
func addPolicyFlags(fl *pflag.FlagSet, o *policy.Options) {
	fl.Int64Var(&o.StarvationThreshold, "lamps-starvation", 0, "lamps/pitstop: iterations without running before a call goes to the head (0: default 100; <0: off)")
	fl.Int64Var(&o.ScoreRefresh, "score-refresh", 0, "lamps/pitstop: re-score every runnable call every N iterations (0: only when a call changes)")
	fl.Int64Var(&o.StarvationCheck, "starvation-check", 0, "lamps/pitstop: iterations between looks for starving calls (0: default 8)")
	fl.IntVar(&o.Queues, "queues", 0, "mlfq/plas/atlas/pitstop: number of queues K (0: default 8)")
	fl.Float64Var(&o.Quantum, "quantum", 0, "mlfq/plas/atlas/pitstop: first queue's quantum in seconds of service, doubling per queue (0: default 0.5)")
	fl.Float64Var(&o.Beta, "beta", 0, "mlfq/plas/atlas/pitstop: promote when wait/service >= beta (0: default 8; <0: off)")
	fl.Int64Var(&o.AgingEvery, "aging-every", 0, "mlfq/plas/atlas/pitstop: iterations between beta checks (0: default 16)")
	fl.Int64Var(&o.MultiStep, "multi-step", 0, "mlfq/plas/atlas/pitstop: apply demotions every N iterations (0: default 1)")
	fl.Float64Var(&o.ProgramTTL, "program-ttl", 0, "mlfq/plas/atlas/pitstop: seconds an idle program stays in the process table (0: default 600)")
	fl.Float64Var(&o.TTFTSLO, "sola-ttft", 0, "sola: TTFT SLO in seconds (0: default 0.4)")
	fl.Float64Var(&o.TPOTSLO, "sola-tpot", 0, "sola: TPOT SLO in seconds (0: default 0.15)")
	fl.IntVar(&o.SOLAWindow, "sola-window", 0, "sola: sliding window in iterations for the mode choice (0: default 16)")
	fl.Float64Var(&o.TTLScale, "continuum-ttl-scale", 0, "continuum: multiplier on the pin TTL (0: default 1)")
	fl.BoolVar(&o.SRPTServiceOnly, "srpt-service-only", false, "srpt: rank by remaining engine work, without the tool time")
	fl.BoolVar(&o.SRPTRunningFirst, "srpt-running-first", false, "srpt: calls on the device run first (no preemption to admit)")
	fl.StringVar(&o.HostEviction, "host-eviction", "", "every policy: what gives way when a swap-out finds the host tier full: newcomer (the default: the call being swapped out is discarded) or resume (Belady: the parked call that resumes furthest in the future, if later than the newcomer; docs/results-host-eviction.md)")
	fl.Int64Var(&o.PitstopStarvation, "pitstop-starvation", 0, "pitstop: LAMPS starvation counter threshold in iterations (0: off)")
	fl.Float64Var(&o.PitstopBeta, "pitstop-beta", 0, "pitstop: Autellix anti-starvation ratio beta (0: off)")
	fl.Float64Var(&o.PitstopTailBound, "pitstop-tail-bound", 0, "pitstop: explicit bound on a call's e2e latency in seconds (0: none); a waiting call that would pass it goes ahead, earliest deadline first")
	fl.BoolVar(&o.PitstopFCFSTail, "pitstop-fcfs-tail", false, "pitstop: a waiting call that has waited longer than arrival order's p99 end-to-end time (learned) goes ahead, in arrival order")
	fl.Float64Var(&o.PitstopFCFSSlack, "pitstop-fcfs-slack", 0, "pitstop with --pitstop-fcfs-tail: stretch the learned arrival-order wait by 1+this (>= 0)")
	fl.StringVar(&o.PitstopRank, "pitstop-rank", "", "pitstop: memory-over-time of a waiting call: expected (the default: the expectation over the length model's distribution, conditioned on the tokens already generated; the point where a forecast has no distribution), point (the point forecast), the ablations mean and median (the rank at the distribution's conditioned mean or median length), or auto (the statistic that has ordered finished segments best, shrunk toward arrival order as its concordance falls to chance); docs/results-policies.md, session 8")
	fl.StringVar(&o.PitstopTail, "pitstop-tail", "", "pitstop: tail rules: aging+warm (sessions 10-11's default: aging, with a waiting call whose context is still prefix-cached aged from its program's first arrival), aging+warm+first-final (aging+warm with the lane of aging+feasible-p99 promoting only a call that has not started or has no tool ahead), aging+warm+resume (the same, and a call back from its tool with its KV on the host ranked with its context counted as paid: by the memory-over-time of its tool's result and its next output alone), aging (memory-over-time aged against arrival order's learned p99), guard (no aging: the order before session 7, without the tail guard removed in session 13), lane (the late lane without aging: calls older than a controlled multiple of that p99 go first, in arrival order), aging+lane, rescue (the lane holds only the calls that can still end within that p99), aging+rescue aging+control (the aging against a controlled fraction of that p99), deadline (least-laxity promotion against each call's arrival-order deadline, from a shadow first-come-first-served queue), aging+deadline (the aging plus that promotion), aging+feasible (aging+deadline promoting only the calls that can still make their deadlines behind the promoted ones: EDF while feasible, the rank under overload), aging+feasible-p99 (the same, feasible meaning by the later of the deadline and the arrival plus the p99 realized lately), aging+feasible-floor (the same with the highest p99 realized so far, so the lane cannot lower its own bound), aging+feasible-fit (aging+feasible-p99 promoting only a call whose admission evicts nothing: its peak blocks fit in the free ones), aging+warm+first (aging+warm with the lane of aging+feasible-p99 promoting only calls that have not produced a token), aging+warm+first-lag (the same, a candidate's predicted rest lengthened by how late the promoted calls ended, learned online), aging+warm+final (aging+warm with that lane promoting only a call with no tool call predicted ahead, so the promotion carries it to its end), aging+warm+first-final-lag (aging+warm+first-final with the learned lag), aging+warm+first-final-gated (aging+warm+first-final promoting only while the p99 it realized lately is past arrival order's), aging+warm+first-gated (the same with the lane promoting only calls that have not started), aging+warm+first-final-gated-fit (the default since session 12: aging+warm+first-final-gated promoting only a call whose peak fits in the free blocks, as aging+feasible-fit), aging+warm+first-final-wake (aging+warm+first-final promoting a call at a re-rank it asks for an iteration before its laxity runs out, not at the last periodic re-rank before), aging+warm+first-final-gated-wake (both), aging+warm+first-final-gated-lag (the trigger, with the learned lag), aging+warm+first-final-gated-wake-lag (both, with the learned lag), aging+warm+first-final-sure and aging+warm+first-final-sure-fit (the gated lanes with the trigger at 95 % confidence: the realized p99's lower bound past the upper bound of arrival order's, each from its window's Binomial order statistics; session 13), aging+warm+first-final-gated-fit-queue (the default with the shadow of arrival order scaling only its calls' service by the engine's observed own times, not their wait in its prefill queue; session 14), aging+warm+first-final-gated-fit-cached and aging+warm+first-final-gated-fit-queue-cached (the default, and that, with the shadow's prefill less the prefix-cached context; session 14), aging+warm+first-final-forecast-fit (the default's lane promoting while the finished calls past arrival order's p99 and the waiting calls forecast past their due under the rank are over 1 %; -queue: with that shadow; session 14), aging+warm+first-final-forecast-slack-fit (the same, promoting a call only within the slack of the in-time calls ranked ahead of it; -queue likewise; both also with -queue-cached), aging+warm+first-final-gated-fit-trust (the default with the rank's log-spread weighted by w in [1/16, 1], w moved by a quantile controller so that 1 % of the calls pass arrival order's p99 estimated with an exponential wait: the aging's exponent 2/w set by the measured tail; session 15), aging+warm+first-final-gated-fit-trust-overtaken (the same, the controller counting a call past that p99 only if it would have ended within it with arrival order's mean wait in place of its own: the calls the order made late, not those late by their own time; session 16), aging+warm+first-final-gated-fit-trust-evident (-trust, the controller lowering w only while the share of late calls among the last 1,000 is past 1 % by more than 1.96 binomial standard errors: with about 1 % late, which calls late by their own time give, w stays 1; session 16), aging+warm+first-final-gated-fit-overdue (the default's lane also promoting a call that has not started though arrival order's shadow would already have finished it, while such calls and the finished calls past the bar are over 1 %; session 17), aging+warm+first-final-gated-fit-overdue-trust (that, with -trust's weight stepped by the waiting calls at each re-rank: down for each overdue call, up a hundredth as much for each other; session 17), aging+warm+first-final-gated-fit-overdue-trust-each (the same weight counting each call once: down when first found overdue, up at its end if never; session 17), aging+warm+first-final-gated-fit-overdue-trust-each-checked (that, the overdue test read only while the shadow's mean end-to-end time over the last 1,000 finished calls is not below arrival order's by the conservation law; session 17), aging+warm+first-final-gated-fit-overdue-trust-each-evident (-each with the check over the reference wait's ~20-call window, the shadow silenced only while its mean wait is below the conservation law's by more than 1.96 standard errors; session 17), aging+warm+first-final-gated-fit-overdue-trust-each-checked-evident (the check over about the last 1,000 calls, the overdue test read only while the shadow's mean wait is above the conservation law's by more than 1.96 standard errors; session 17), aging+warm+swap (aging+warm with that lane promoting only a call whose evictions the free host slots take) deadline-aging (the aging against each call's own arrival-order time instead of one learned p99), or boost, boost+warm, boost+warm+first-final-gated-fit (γ-Boost in place of the aging: a waiting call ranked by its arrival less b_γ over its memory-over-time's distribution, γ the Cramér–Lundberg root of the learned load; session 18) with the γ source -full, -wait, -tail, -resp, -own or -aged after boost (e.g. boost-wait+warm+first-final-gated-fit), or aging+warm+first-final-gated-fit-boost-SOURCE-past with SOURCE tail, wait or aged (the default's aging while the system is under capacity, that γ-Boost while the overload guard sees the backlog's floor rise across two windows of arrival order's p99; -past-busy: a rise counted only from a floor above zero; -hold after either: the boost kept until the backlog drains back; session 18); docs/results-policies.md")
	fl.Float64Var(&o.PitstopDeadlineSlack, "pitstop-deadline-slack", 0, "pitstop --pitstop-tail deadline, aging+deadline: the own time's factor in a call's arrival-order deadline (0: the default 1)")
	fl.BoolVar(&o.PitstopDeadlineExact, "pitstop-deadline-exact", false, "pitstop --pitstop-tail deadline, aging+deadline: hold each call to its own arrival-order deadline, without the floor of arrival order's p99 after its arrival")
	fl.BoolVar(&o.PitstopDeadlineFeasible, "pitstop-deadline-feasible", false, "pitstop --pitstop-tail deadline, aging+deadline: leave a call that can no longer make its deadline to the rank (Moore-Hodgson)")
	fl.Float64Var(&o.PitstopAgingPower, "pitstop-aging-power", 0, "pitstop: exponent of the aging (0: the default 2)")
	fl.StringVar(&o.PitstopReadmit, "pitstop-readmit", "", "pitstop: re-admission of a waiting call whose context is in the prefix cache: cached (the default: ranked by the prefill it needs now, plus the expected recompute of waiting), held (the prefill alone) or off (docs/results-policies.md, session 8)")
	fl.StringVar(&o.PitstopHostRoom, "pitstop-hostroom", "", "pitstop: host-tier-aware admission: off, admit (session 9's default: a call that holds no device KV is not admitted while the paused calls it would evict find the host tier full, and a paused call the host can take is evicted first) or victim (that victim choice alone), or peak (the default since session 11: admit, and a call not on the device only when its peak, context plus predicted output to its next tool, fits in the free blocks plus those of preserved calls whose tool returns after it would finish); docs/results-policies.md, sessions 9 and 11")
	fl.StringVar(&o.PitstopHandling, "pitstop-handling", "", "pitstop: price of the device memory a paused call holds: waste (session 11's: InferCept's wastes with the prefix cache's eviction risk) or idle (a paused call is preserved while no call waits for blocks and the free ones cover the batch's next iteration, and priced as waste from the first iteration memory is short) or idle-lost (the default: idle only for a call whose freed blocks the prefix cache would more likely than not evict before its tool returns); docs/results-policies.md, session 12")
	fl.StringVar(&o.PitstopBatch, "pitstop-batch", "", "pitstop: order of the calls on the device: decode-first (the default since session 13: calls that need one token go ahead of those prefilling, so a long re-prefill does not take the token budget from the decodes: vLLM's chunked-prefill rule), arrival (every call on the device in arrival order, the order before) or decode-first-late (decode-first, but a prefilling call whose predicted rest would end past the deadline lane's due time stays ahead of the decodes; session 14); docs/results-policies.md, session 13")
	fl.StringVar(&o.PitstopPrefill, "pitstop-prefill", "", "pitstop: prompt tokens prefilled per iteration beside the decodes: full (the default: the profile's token budget) or balance (the chunk where the delay it costs the decoding calls, each for the iterations it shares with the backlog, meets the delay the iterations' fixed time costs the calls waiting for their prefill, on the cost model and the forecast) or balance-inflow (balance, the chunk never draining the backlog slower than prefill work arrived over the backlog's own drain time); session 16; or balance-expected and balance-expected-inflow (the same with each decoding call's delay its expectation over the length model's distribution of its rest, conditioned on what it has generated, in place of the point forecast; session 17), balance-expected-measured and balance-expected-inflow-measured (the same with the decodes' part of an iteration measured from the last iteration instead of the cost model's, which prices a decode like a prompt token; session 17); or balance-expected-arrivals (balance-expected with the wait of the calls that arrive while the backlog drains priced in, at the arrival rate learned online, and L's global minimum), balance-expected-flow (arrivals with the decodes of the calls still to come priced too), balance-expected-fit, balance-expected-arrivals-fit and balance-expected-flow-fit (the iteration's time learned online by least squares on its prompt tokens, decodes and the context the decodes read), and -busy before -fit or at the end of the arrivals and flow values (the first formulation, which charges a decode for the whole busy period's tokens); session 18; docs/results-policies.md")
	fl.StringVar(&o.PitstopEvict, "pitstop-evict", "", "pitstop: which finished programs' cached contexts the prefix cache evicts first: program (the default since session 14: a finished program's context goes to the free queue's cold head once its learned probability of another call, given its calls and the time since, falls below that of the block LRU would evict next) or lru (no hint, the free queue in LRU order); docs/results-policies.md, session 14")
	fl.StringVar(&o.PitstopClasses, "pitstop-classes", "", "pitstop: whose programs a program's statistics (its order, its context's reuse) are learned from: class-alone (the default since session 17: its own class's, the tenant's in serve (see --classes), and a class keeps an order of its own (its DAG programs in arrival order, its chains' warm-up queues) only while no other class has a call in the engine), class-shared (session 16's default: the same for arrival order only), class (per class, each class in its own order whoever else waits) or pooled (every program's, as before); docs/results-policies.md, sessions 16 and 17")
	fl.Float64Var(&o.PitstopClassIdle, "pitstop-class-idle", 0, "pitstop: seconds a class (tenant) must have had no call in the engine, with none of its programs left, before its learned statistics are dropped and a later call of it starts from the cold prior (0: kept for good, the default); docs/results-policies.md, session 16, classes16")
	fl.StringVar(&o.PitstopProgramLead, "pitstop-program-lead", "", "pitstop: while programs finish in arrival order, how far ahead of a younger program's calls an older program's may go: off, auto (arrival order's learned p99 end-to-end time) or seconds (the default: 0); a waiting call ranks by max(program arrival, own arrival - lead) (docs/results-policies.md, session 9)")
	fl.StringVar(&o.PitstopAdmission, "pitstop-admission", "", "pitstop: while programs finish in arrival order, where a program's first call goes: off (with its program's other calls) or started (the default: after every call of the started programs: programs start in arrival order, each once no started program's call waits; docs/results-policies.md, session 9)")
	fl.StringVar(&o.PitstopAgingClock, "pitstop-aging-clock", "", "pitstop: what the aging counts: age (time since arrival, the default) or wait (time runnable and not running)")
	fl.Float64Var(&o.PitstopLaneGain, "pitstop-lane-gain", 0, "pitstop: the late lane controller's step in log θ per call past the bound (0: the default 0.02)")
	fl.StringVar(&o.PitstopLaneOrder, "pitstop-lane-order", "", "pitstop: order inside the late lane: arrival (the default) or size (the ranked key)")
	fl.StringVar(&o.PitstopReference, "pitstop-reference", "", "pitstop: how arrival order's p99 is estimated: mean (the default: the conservation-law wait plus the p99 own time) or exp (an exponential wait of that mean plus an own time)")
	fl.Float64Var(&o.ProgramWeight, "program-weight", 0, "pitstop --program-order remaining: weight of the program's expected remaining work against the call's memory-over-time (0: default 1)")
	fl.Float64Var(&o.ProgramCVLow, "program-cv-low", 0, "pitstop --program-order gittins-rest+cv: below this CV of program service, DAG programs finish in arrival order (0: default 0.7)")
	fl.Float64Var(&o.ProgramIdle, "program-idle", 0, "pitstop: seconds without a call before a program counts as complete (0: default 120)")
	fl.StringVar(&o.ProgramOrder, "program-order", "", "pitstop: program-level order: auto (also named gittins-started: arrival order of DAG programs while the learned Gittins index of program service never lets a fresh program pass a started one; chains by attained service until ten programs completed; else the call's order), gittins-started-call (the same, chains in the call's order from the start), gittins-started-shown (the same, the DAG-or-chain test over the programs that made a second call only, not those whose first call still waits; session 18), gittins-started-held (the same, leaving out only the programs none of whose calls has generated a token; what auto does since session 18), gittins-started-all (the DAG-or-chain test over every program seen: auto before session 18), gittins-censored (chains by the Gittins index over completed and live (censored) programs, Kaplan-Meier: behind a fresh program by halvings of the index, least attained service past the last completed program), gittins-censored-call (the same, the call's order where the estimate informs), gittins-censored-median (chains by attained service until the Kaplan-Meier estimate places the median of program service, then the call's order), call, remaining, arrival, queues, gittins (the Gittins index of the learned program-service distribution, in levels of 2x), gittins-rest (the Gittins index of the program's remaining service given the call's own rest; +cv, +shape, +warmup switch the old rules back on)")
	fl.BoolVar(&o.NoProgramQueues, "pitstop-no-queues", false, "pitstop ablation: one queue (no program-level attained service)")
	fl.BoolVar(&o.NoMemoryOverTime, "pitstop-no-mot", false, "pitstop ablation: FCFS inside a queue instead of memory-over-time")
	fl.BoolVar(&o.NoDynamicHandling, "pitstop-no-dynamic", false, "pitstop ablation: keep the handling chosen at the tool call")
}

// benchPlan is a validated bench invocation.
type benchPlan struct {
	w       *workload.Workload
	profile *sim.Profile // --executor sim
	cpu     *cpuBench    // --executor cpu: the model loaded, not yet calibrated
	// replicas, with --replicas: one profile per replica (--profile cycled).
	replicas []*sim.Profile
}

func planBench(f benchFlags) (*benchPlan, error) {
	changed := f.changed
	if changed == nil {
		changed = func(string) bool { return false }
	}
	if err := f.target.check(changed); err != nil {
		return nil, err
	}
	switch f.executor {
	case "sim":
		for _, n := range f.cpuNames {
			if changed(n) {
				return nil, usagef("--%s is a flag of --executor cpu, not of --executor %s", n, f.executor)
			}
		}
	case "cpu":
		if changed("profile") {
			return nil, usagef("--profile prices --executor sim; --executor cpu measures its own iterations (write them as a profile with --fit-profile)")
		}
		if changed("parallel") && f.parallel != 1 {
			return nil, usagef("--parallel %d: runs on --executor cpu go one at a time (their timings must not overlap)", f.parallel)
		}
	default:
		return nil, usagef("unknown executor %q (valid: sim, cpu)", f.executor)
	}
	if len(f.policies) == 0 {
		return nil, usagef("no policies given (valid: %s)", strings.Join(policy.Names(), ", "))
	}
	for _, p := range f.policies {
		if _, err := newBenchPolicy(p, f); err != nil {
			return nil, usageError{err.Error()}
		}
	}
	if err := f.sustained.validate(&f, changed); err != nil {
		return nil, err
	}
	switch {
	case f.classes != "none" && f.classes != "family" && f.classes != "":
		return nil, usagef("unknown --classes %q (valid: none, family)", f.classes)
	case f.classes == "family" && (f.sustained.on || f.target.url != "" || f.executor != "sim"):
		return nil, usagef("--classes family is a flag of a plain simulated run")
	}
	if len(f.rates) == 0 {
		return nil, usagef("no rates given")
	}
	for _, r := range f.rates {
		if !(r > 0) {
			return nil, usagef("invalid rate %g: rates must be positive numbers", r)
		}
	}
	if !(f.duration > 0) {
		return nil, usagef("invalid duration %g: must be positive seconds", f.duration)
	}
	if f.stopAfter != 0 && (!(f.stopAfter >= f.duration) || math.IsInf(f.stopAfter, 0)) {
		return nil, usagef("invalid --stop-after %g: must be 0 (off) or seconds of engine time at least --duration (%g), so that every arrival happens", f.stopAfter, f.duration)
	}
	if f.predErr < 0 {
		return nil, usagef("invalid prediction error %g: must be >= 0", f.predErr)
	}
	if f.predErr > 0 && f.predictor != "oracle" {
		return nil, usagef("--prediction-error %g needs --predictor oracle (it adds noise to the truth; --predictor %s predicts)", f.predErr, f.predictor)
	}
	if f.sloTTFT < 0 || f.sloTPOT < 0 || math.IsInf(f.sloTTFT, 0) || math.IsInf(f.sloTPOT, 0) {
		return nil, usagef("invalid SLO --slo-ttft %g / --slo-tpot %g: must be positive seconds (0: the sola policy's)", f.sloTTFT, f.sloTPOT)
	}
	switch f.predictor {
	case "serve", "oracle", "onnx", "history", predictorServeLength, predictorServeTool:
	default:
		return nil, usagef("unknown predictor %q (valid: serve, onnx, history, oracle, serve-length, serve-tool)", f.predictor)
	}
	for _, s := range []struct {
		name string
		v    float64
	}{{"scale-tokens", f.scaleTokens}, {"scale-time", f.scaleTime}} {
		if !(s.v > 0) || math.IsInf(s.v, 0) {
			return nil, usagef("invalid --%s %g: must be a positive factor", s.name, s.v)
		}
	}
	plan := &benchPlan{}
	var err error
	if f.replicas != 0 || changed("replicas") || changed("balancers") {
		if plan.replicas, err = planCluster(f, changed); err != nil {
			return nil, err
		}
	} else if f.executor == "sim" {
		if plan.profile, err = sim.LoadProfile(f.profile); err != nil {
			return nil, usageError{err.Error()}
		}
	} else if err := f.cpu.validate(); err != nil {
		return nil, err
	}
	var w *workload.Workload
	if f.trace != "" {
		w, err = workload.LoadFile(f.trace)
	} else {
		opts, oerr := f.families.options(f.workload, changed)
		if oerr != nil {
			return nil, oerr
		}
		w, err = workload.LoadWith(f.workload, f.seed, opts)
	}
	if err != nil {
		return nil, usageError{err.Error()}
	}
	if err := w.Scale(f.scaleTokens, f.scaleTime); err != nil {
		return nil, usageError{err.Error()}
	}
	if ev, err := engine.ParseCacheEviction(f.cacheEviction); err != nil {
		return nil, usageError{"--cache-eviction: " + err.Error()}
	} else if ev != engine.CacheLRU && (f.executor != "sim" || f.target.url != "") {
		return nil, usageError{"--cache-eviction " + f.cacheEviction + " applies to the simulated executor only (--executor sim, no --target)"}
	}
	for _, p := range []string{f.jsonPath, f.csvPath} {
		if p == "" {
			continue
		}
		if st, err := os.Stat(filepath.Dir(p)); err != nil || !st.IsDir() {
			return nil, usagef("cannot write %s: directory %s does not exist", p, filepath.Dir(p))
		}
	}
	if f.executor == "cpu" {
		// Last: loading a checkpoint is the slow part of the checks.
		if plan.cpu, err = loadCPUBench(f.cpu); err != nil {
			return nil, err
		}
	}
	plan.w = w
	return plan, nil
}

func runBench(ctx context.Context, f benchFlags) error {
	if f.sustained.on && f.sustained.from != "" {
		return replotSustained(f)
	}
	plan, err := planBench(f)
	if err != nil {
		return err
	}
	if ctx == nil {
		ctx = context.Background()
	}
	if f.sustained.on {
		return runSustained(ctx, f, plan)
	}
	if f.target.url != "" {
		return runBenchTarget(ctx, f, plan.w)
	}
	st := workload.Stats(plan.w)
	fmt.Printf("workload %s: %d programs, %d calls, %d tool calls; mean prompt %.0f, decode %.0f tokens per call, tool %.2f s\n",
		plan.w.Name, st.Programs, st.Calls, st.ToolCalls, st.MeanPrompt, st.MeanDecode, st.MeanToolTime)
	rep := &report.Report{Workload: plan.w.Name, Executor: f.executor, EngineFeatures: f.engineFeatures(), CacheEviction: f.reportedEviction()}
	if rep.EngineFeatures == bench.FeaturesPaper {
		fmt.Println("engine features: paper (each policy's own: lamps and infercept without the prefix cache)")
	} else {
		fmt.Printf("engine features: same (prefix cache, chunked prefill, swap path for every policy but %s)\n", strings.Join(bench.OwnFeatureNames(), ", "))
	}
	sloTTFT, sloTPOT := f.slo()
	parallel := max(f.parallel, 1)
	if cb := plan.cpu; cb != nil {
		fmt.Printf("executor cpu: %s\n", cb.describe())
		fmt.Fprintf(os.Stderr, "calibrating the cpu executor (up to %v)...\n", cb.f.calibrate)
		if err := cb.calibrate(); err != nil {
			return err
		}
		rep.Profile = "cpu:" + cb.f.model
		parallel = 1
	} else if plan.replicas != nil {
		rep.Profile = describeReplicas(plan.replicas)
		fmt.Printf("replicas: %s\n", rep.Profile)
	} else {
		fmt.Printf("profile %s (%s on %s)\n", plan.profile.Name, plan.profile.Model, plan.profile.Device)
		rep.Profile = plan.profile.Name
	}
	type job struct {
		policy, balancer string
		rate             float64
	}
	var jobs []job
	balancers := []string{""}
	if plan.replicas != nil {
		balancers = f.balancers
	}
	for _, r := range f.rates {
		for _, p := range f.policies {
			for _, b := range balancers {
				jobs = append(jobs, job{p, b, r})
			}
		}
	}
	expected := int64(0)
	for _, r := range f.rates {
		expected += int64(r * f.duration)
	}
	expected *= int64(len(f.policies) * len(balancers))
	var opts []report.ProgressOption
	if f.progress {
		opts = append(opts, report.ForceProgress())
	}
	prog := report.NewProgress(expected, "bench", os.Stderr, opts...)
	runs := make([]report.Run, len(jobs))
	var mu sync.Mutex
	lengthModel, err := lengthPredictor(f.predictor)
	if err != nil {
		return err
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(parallel)
	for i, j := range jobs {
		g.Go(func() error {
			pol, _ := newBenchPolicy(j.policy, f)
			rc := bench.RunConfig{
				Workload: plan.w, Policy: pol, Name: j.policy, Rate: j.rate, Duration: f.duration, Seed: f.seed,
				PredictionError: f.predErr, Predictors: splitPredictions(newPredictors(lengthModel, learnsOnline(f.predictor)), f.predictor), Progress: prog, CheckEvery: f.checkEvery,
				SLOTTFT: sloTTFT, SLOTPOT: sloTPOT, StopAfter: time.Duration(f.stopAfter * float64(time.Second)),
				ClassOf: f.classOf(),
			}
			var run report.Run
			var err error
			if plan.cpu != nil {
				run, err = plan.cpu.run(gctx, rc)
			} else if plan.replicas != nil {
				run, err = runClusterJob(gctx, rc, plan.replicas, j.balancer, f)
			} else {
				rc.Engine, rc.Executor = f.simEngine(plan.profile), sim.NewExecutor(plan.profile)
				run, err = bench.Run(gctx, rc)
			}
			if err != nil {
				return fmt.Errorf("%s%s at rate %g: %w", j.policy, j.balancer, j.rate, err)
			}
			mu.Lock()
			runs[i] = run
			mu.Unlock()
			return nil
		})
	}
	err = g.Wait()
	prog.Finish()
	if err != nil {
		return err
	}
	rep.Runs = runs
	slices.SortStableFunc(rep.Runs, func(a, b report.Run) int {
		if a.Rate != b.Rate {
			if a.Rate < b.Rate {
				return -1
			}
			return 1
		}
		if a.Policy != b.Policy {
			return slices.Index(f.policies, a.Policy) - slices.Index(f.policies, b.Policy)
		}
		return slices.Index(f.balancers, a.Balancer) - slices.Index(f.balancers, b.Balancer)
	})
	report.WriteTable(os.Stdout, rep)
	if plan.cpu != nil {
		if err := plan.cpu.writeFitted(); err != nil {
			return err
		}
	}
	leaks := 0
	for _, r := range rep.Runs {
		leaks += r.LeakedBlocks
	}
	if f.jsonPath != "" {
		if err := report.WriteJSON(f.jsonPath, rep); err != nil {
			return err
		}
	}
	if f.csvPath != "" {
		if err := report.WriteCSV(f.csvPath, rep); err != nil {
			return err
		}
	}
	if f.outDir != "" {
		if err := os.MkdirAll(f.outDir, 0o755); err != nil {
			return err
		}
		files, err := report.Plot(f.outDir, rep)
		if err != nil {
			return err
		}
		fmt.Printf("plots: %s\n", strings.Join(files, ", "))
	}
	if leaks > 0 {
		return fmt.Errorf("%d KV blocks leaked across runs", leaks)
	}
	return nil
}

// slo is the TTFT and TPOT SLO that SLO attainment is measured against:
// --slo-ttft/--slo-tpot, each defaulting to the sola policy's SLO
// (--sola-ttft/--sola-tpot, or their defaults), so that a run of sola is
// judged by the SLOs it schedules for unless told otherwise.
func (f *benchFlags) slo() (ttft, tpot float64) {
	def := f.popts.Defaults()
	ttft, tpot = f.sloTTFT, f.sloTPOT
	if ttft == 0 {
		ttft = def.TTFTSLO
	}
	if tpot == 0 {
		tpot = def.TPOTSLO
	}
	return ttft, tpot
}

// lengthPredictor loads the output-length predictor a bench run asks for; nil
// means oracle-with-noise predictions.
func lengthPredictor(name string) (predictor.LengthPredictor, error) {
	switch name {
	case "onnx", "serve", predictorServeLength, predictorServeTool:
		m, err := predictor.LoadDefault()
		if errors.Is(err, predictor.ErrORTMissing) {
			// The same model in the Go forward pass: the same predictions
			// without ONNX Runtime.
			info, perr := predictor.ParseONNX(predictor.DefaultModelBytes())
			if perr != nil || info.MLP == nil {
				return nil, fmt.Errorf("--predictor %s: %w", name, err)
			}
			return predictor.GoClassifier{MLP: info.MLP, OverflowTokens: info.OverflowTokens}, nil
		}
		if err != nil {
			return nil, fmt.Errorf("--predictor %s: %w", name, err)
		}
		return m, nil
	case "history":
		return predictor.HistoryPredictor{Default: 50}, nil
	}
	return nil, nil
}

// newPredictors gives one run its predictors: the shared length model (with
// learn, wrapped in the run's own online learner and followed by serve's
// point step, as serve runs it) and its own tool-duration statistics, learnt online during the run. The fixed
// models' answers go through the run's memo (bench.MemoLength: the same
// answers, fewer ONNX Runtime calls).
func newPredictors(length predictor.LengthPredictor, learn bool) *bench.Predictors {
	if length == nil {
		return nil
	}
	var mlp *predictor.MLP
	over, median := 0, -1
	switch m := length.(type) {
	case *predictor.Model:
		mlp, over, median = m.Info().MLP, m.OverflowTokens(), predictor.TrainMedian(m.Info())
	case predictor.GoClassifier:
		mlp, over = m.MLP, m.OverflowTokens
		// lengthPredictor builds a GoClassifier only of the default model.
		if info, err := predictor.ParseONNX(predictor.DefaultModelBytes()); err == nil {
			median = predictor.TrainMedian(info)
		}
	}
	var step func() predictor.ServedStep
	switch {
	case mlp != nil && learn:
		// As serve: the model's side mixed with the history baseline, by
		// how well each ordered the finished segments (policies rank by
		// it), then the window mode where it orders better; one per
		// replica, as serve has one per process.
		step = func() predictor.ServedStep { return predictor.NewServedStep(median) }
	case mlp != nil:
		step = func() predictor.ServedStep { return predictor.ServedStep{Mix: predictor.ServedMix(median)} }
	}
	if mlp != nil {
		length = bench.NewMemoLength(length)
	}
	if learn {
		if o, err := predictor.NewOnlineLength(length, mlp, over, predictor.OnlineOptions{}); err == nil {
			length = o
		}
	}
	return &bench.Predictors{Length: length, Duration: predictor.NewDurationEstimator(predictor.DurationOptions{}), NewStep: step}
}
