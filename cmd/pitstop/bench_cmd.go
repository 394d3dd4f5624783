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
	"golang.org/x/sync/errgroup"

	"github.com/pitstop-llm/pitstop/bench"
	"github.com/pitstop-llm/pitstop/bench/report"
	"github.com/pitstop-llm/pitstop/bench/workload"
	"github.com/pitstop-llm/pitstop/engine"
	"github.com/pitstop-llm/pitstop/engine/policy"
	"github.com/pitstop-llm/pitstop/engine/sim"
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
	parallel, checkEvery               int
	progress                           bool
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
	fl.IntVar(&f.parallel, "parallel", runtime.GOMAXPROCS(0), "runs at once")
	fl.IntVar(&f.checkEvery, "check-every", 0, "check block invariants every N iterations (0: at the end of each run)")
	fl.BoolVar(&f.progress, "progress", false, "show a progress bar even when stderr is not a terminal")
	return cmd
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
		if _, err := policy.New(p, policy.Options{}); err != nil {
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
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(max(f.parallel, 1))
	for i, j := range jobs {
		g.Go(func() error {
			pol, _ := policy.New(j.policy, policy.Options{})
			run, err := bench.Run(gctx, bench.RunConfig{
				Workload: plan.w, Engine: engineConfig(plan.profile), Executor: sim.NewExecutor(plan.profile),
				Policy: pol, Name: j.policy, Rate: j.rate, Duration: f.duration, Seed: f.seed,
				PredictionError: f.predErr, Progress: prog, CheckEvery: f.checkEvery,
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
