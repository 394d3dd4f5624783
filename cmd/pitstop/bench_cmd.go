package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"golang.org/x/sync/errgroup"

	"github.com/pitstop-llm/pitstop/bench"
	"github.com/pitstop-llm/pitstop/bench/report"
	"github.com/pitstop-llm/pitstop/bench/workload"
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
	parallel, checkEvery               int
	progress                           bool
	popts                              policy.Options
}

func newBenchCmd() *cobra.Command {
	var f benchFlags
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Replay an agent workload on the engine for each policy and rate, and report latency, memory and swap metrics",
		Long: `bench replays a workload (programs of LLM calls with tool pauses) on the engine,
once per (policy, rate), with the simulated executor pricing each iteration by a GPU
cost profile. It prints a table and writes the JSON report (DESIGN.md §8), a CSV and
PNG plots of latency against rate per policy.

Workloads: ` + strings.Join(workload.Names(), ", ") + `
Policies:  ` + strings.Join(policy.Names(), ", ") + `
Profiles:  ` + strings.Join(sim.ProfileNames(), ", "),
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runBench(cmd.Context(), f) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.workload, "workload", "infercept-multi", "workload name")
	fl.StringVar(&f.trace, "trace", "", "replay a trace file in the infercept JSON format instead of a named workload")
	fl.StringVar(&f.executor, "executor", "sim", "executor: sim")
	fl.StringVar(&f.profile, "profile", "a100-40g-gptj-6b", "cost profile name, or a path to a profile .json")
	fl.StringSliceVar(&f.policies, "policies", []string{"fcfs", "infercept"}, "comma-separated policies")
	fl.Float64SliceVar(&f.rates, "rates", []float64{1, 3, 5}, "comma-separated arrival rates (programs per second)")
	fl.Float64Var(&f.duration, "duration", 1800, "arrival window in seconds of engine time")
	fl.Int64Var(&f.seed, "seed", 1, "random seed (arrivals, sampling, prediction noise)")
	fl.StringVar(&f.jsonPath, "json", "", "write the JSON report here")
	fl.StringVar(&f.csvPath, "csv", "", "write a CSV report here")
	fl.StringVar(&f.outDir, "out", "", "write PNG plots into this directory")
	fl.Float64Var(&f.predErr, "prediction-error", 0, "oracle-with-noise predictor error p: prediction = truth + N(0, p·truth)")
	fl.StringVar(&f.predictor, "predictor", "oracle", "where policies' predictions come from: oracle (truth + --prediction-error noise), onnx (the default length model + online tool-duration statistics), history (the program's mean so far + online tool-duration statistics)")
	fl.IntVar(&f.parallel, "parallel", runtime.GOMAXPROCS(0), "runs at once")
	fl.IntVar(&f.checkEvery, "check-every", 0, "check block invariants every N iterations (0: at the end of each run)")
	fl.BoolVar(&f.progress, "progress", false, "show a progress bar even when stderr is not a terminal")
	addPolicyFlags(fl, &f.popts)
	return cmd
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
	fl.Int64Var(&o.PitstopStarvation, "pitstop-starvation", 0, "pitstop: LAMPS starvation counter threshold in iterations (0: off)")
	fl.Float64Var(&o.PitstopBeta, "pitstop-beta", 0, "pitstop: Autellix anti-starvation ratio beta (0: off)")
	fl.Float64Var(&o.ProgramWeight, "program-weight", 0, "pitstop: weight of the program's expected remaining work against the call's memory-over-time (0: default 1)")
	fl.Float64Var(&o.ProgramCVLow, "program-cv-low", 0, "pitstop: below this CV of program service, programs finish in arrival order (0: default 0.5)")
	fl.Float64Var(&o.ProgramCVHigh, "program-cv-high", 0, "pitstop: above this CV of program service, least-served programs first (0: default 1)")
	fl.Float64Var(&o.ProgramIdle, "program-idle", 0, "pitstop: seconds without a call before a program counts as complete (0: default 120)")
	fl.BoolVar(&o.NoProgramQueues, "pitstop-no-queues", false, "pitstop ablation: one queue (no program-level attained service)")
	fl.BoolVar(&o.NoMemoryOverTime, "pitstop-no-mot", false, "pitstop ablation: FCFS inside a queue instead of memory-over-time")
	fl.BoolVar(&o.NoDynamicHandling, "pitstop-no-dynamic", false, "pitstop ablation: keep the handling chosen at the tool call")
}

// benchPlan is a validated bench invocation.
type benchPlan struct {
	w       *workload.Workload
	profile *sim.Profile
}

func planBench(f benchFlags) (*benchPlan, error) {
	if f.executor != "sim" {
		return nil, usagef("unknown executor %q (valid: sim)", f.executor)
	}
	if len(f.policies) == 0 {
		return nil, usagef("no policies given (valid: %s)", strings.Join(policy.Names(), ", "))
	}
	for _, p := range f.policies {
		if _, err := policy.New(p, f.popts); err != nil {
			return nil, usageError{err.Error()}
		}
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
	if f.predErr < 0 {
		return nil, usagef("invalid prediction error %g: must be >= 0", f.predErr)
	}
	switch f.predictor {
	case "oracle", "onnx", "history":
	default:
		return nil, usagef("unknown predictor %q (valid: oracle, onnx, history)", f.predictor)
	}
	prof, err := sim.LoadProfile(f.profile)
	if err != nil {
		return nil, usageError{err.Error()}
	}
	var w *workload.Workload
	if f.trace != "" {
		w, err = workload.LoadFile(f.trace)
	} else {
		w, err = workload.Load(f.workload, f.seed)
	}
	if err != nil {
		return nil, usageError{err.Error()}
	}
	for _, p := range []string{f.jsonPath, f.csvPath} {
		if p == "" {
			continue
		}
		if st, err := os.Stat(filepath.Dir(p)); err != nil || !st.IsDir() {
			return nil, usagef("cannot write %s: directory %s does not exist", p, filepath.Dir(p))
		}
	}
	return &benchPlan{w: w, profile: prof}, nil
}

// engineConfig sizes the engine from a profile.
func engineConfig(p *sim.Profile) engine.Config {
	return engine.Config{
		NumBlocks:         p.NumBlocks(),
		BlockSize:         p.BlockSize,
		HostBlocks:        p.HostBlocks(),
		MaxBatchedTokens:  p.MaxBatchedTokens,
		MaxSeqs:           p.MaxSeqs,
		SwapBlocksPerIter: p.Swap.BlocksPerIter,
		Cost:              p.HandlingCost(),
		HostBlockBytes:    p.BlockBytes(),
	}
}

func runBench(ctx context.Context, f benchFlags) error {
	plan, err := planBench(f)
	if err != nil {
		return err
	}
	if ctx == nil {
		ctx = context.Background()
	}
	st := workload.Stats(plan.w)
	fmt.Printf("workload %s: %d programs, %d calls, %d tool calls; profile %s (%s on %s)\n",
		plan.w.Name, st.Programs, st.Calls, st.ToolCalls, plan.profile.Name, plan.profile.Model, plan.profile.Device)

	rep := &report.Report{Workload: plan.w.Name, Executor: f.executor, Profile: plan.profile.Name}
	type job struct {
		policy string
		rate   float64
	}
	var jobs []job
	for _, r := range f.rates {
		for _, p := range f.policies {
			jobs = append(jobs, job{p, r})
		}
	}
	expected := int64(0)
	for _, r := range f.rates {
		expected += int64(r * f.duration)
	}
	expected *= int64(len(f.policies))
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
	g.SetLimit(max(f.parallel, 1))
	for i, j := range jobs {
		g.Go(func() error {
			pol, _ := policy.New(j.policy, f.popts)
			run, err := bench.Run(gctx, bench.RunConfig{
				Workload: plan.w, Engine: engineConfig(plan.profile), Executor: sim.NewExecutor(plan.profile),
				Policy: pol, Name: j.policy, Rate: j.rate, Duration: f.duration, Seed: f.seed,
				PredictionError: f.predErr, Predictors: newPredictors(lengthModel), Progress: prog, CheckEvery: f.checkEvery,
			})
			if err != nil {
				return fmt.Errorf("%s at rate %g: %w", j.policy, j.rate, err)
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
		return slices.Index(f.policies, a.Policy) - slices.Index(f.policies, b.Policy)
	})
	report.WriteTable(os.Stdout, rep)
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

// lengthPredictor loads the output-length predictor a bench run asks for; nil
// means oracle-with-noise predictions.
func lengthPredictor(name string) (predictor.LengthPredictor, error) {
	switch name {
	case "onnx":
		m, err := predictor.LoadDefault()
		if err != nil {
			return nil, fmt.Errorf("--predictor onnx: %w", err)
		}
		return m, nil
	case "history":
		return predictor.HistoryPredictor{Default: 50}, nil
	}
	return nil, nil
}

// newPredictors gives one run its predictors: the shared length model and
// its own tool-duration statistics, learnt online during the run.
func newPredictors(length predictor.LengthPredictor) *bench.Predictors {
	if length == nil {
		return nil
	}
	return &bench.Predictors{Length: length, Duration: predictor.NewDurationEstimator(predictor.DurationOptions{})}
}
