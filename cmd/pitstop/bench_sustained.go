package main

import (
	"context"
	"fmt"
	"math"
	"os"
	"strings"

	"github.com/spf13/pflag"

	"github.com/pitstop-llm/pitstop/bench"
	"github.com/pitstop-llm/pitstop/bench/report"
	"github.com/pitstop-llm/pitstop/engine/sim"
)

// sustainedFlags are the flags of `pitstop bench --sustained`.
type sustainedFlags struct {
	on                           bool
	seeds                        int
	start, resolution, maxRate   float64
	warmup, drain, minThroughput float64
	z                            float64
	p99                          float64
	from                         string // redraw this saved report's plots instead of searching
}

// sustainedRule is the help text's statement of the rule (bench.SustainedRule).
const sustainedRule = `a run sustains its rate when (1) of the programs that arrived after --sustained-warmup, those finished by --duration are at least --sustained-min-throughput of those due by then, less --sustained-z standard deviations of a steady state's done count (a program that arrived at a is due with probability p = F(duration - a), F the run's distribution of program latency; the done count of a steady state is a sum of Bernoulli(p), variance the sum of p(1-p)), (2) every program finishes by --duration + --sustained-drain + its own tool-and-think path (runs still unfinished then are stopped and fail), and (3) when --sustained-p99 > 0, the p99 call e2e is at most that`

func addSustainedFlags(fl *pflag.FlagSet, s *sustainedFlags) {
	fl.BoolVar(&s.on, "sustained", false, "instead of the --rates, find per policy the highest arrival rate it sustains, by bisection over --sustained-seeds seeds (seed, seed+1, ...), --parallel searches at a time; "+sustainedRule)
	fl.IntVar(&s.seeds, "sustained-seeds", 3, "--sustained: seeds per policy")
	fl.Float64Var(&s.start, "sustained-start", 1, "--sustained: first rate tried (programs/s); the search doubles or halves from it, then bisects")
	fl.Float64Var(&s.resolution, "sustained-resolution", 0.05, "--sustained: the search stops when the sustained and the lowest unsustained rate are this close (programs/s)")
	fl.Float64Var(&s.maxRate, "sustained-max", 64, "--sustained: highest rate tried (programs/s)")
	fl.Float64Var(&s.warmup, "sustained-warmup", 300, "--sustained: seconds at the window's start left out of the throughput test")
	fl.Float64Var(&s.drain, "sustained-drain", 600, "--sustained: seconds after the window by which every program must be done (plus its tool-and-think path)")
	fl.Float64Var(&s.minThroughput, "sustained-min-throughput", 0.98, "--sustained: fraction of the programs due (arrived after the warm-up) that must be done by the window's end")
	fl.Float64Var(&s.z, "sustained-z", bench.DefaultZ, "--sustained: the throughput test fails a run only when its done count is more than this many standard deviations (of a steady state's, from the programs straddling the window's end) below --sustained-min-throughput of the due count; one-sided, 2.576 = 0.5 % per trial, about 5 % over a search's ten trials; 0: the bare ratio")
	fl.Float64Var(&s.p99, "sustained-p99", 0, "--sustained: p99 call e2e target in seconds (0: none)")
	fl.StringVar(&s.from, "sustained-from", "", "--sustained: run nothing; redraw the plots of this saved --sustained --json report into --out (the sustained rate per series, and latency against rate per series from the searches' trials)")
}

// sustainedOnly are the flags that mean nothing without --sustained.
var sustainedOnly = []string{"sustained-seeds", "sustained-start", "sustained-resolution", "sustained-max",
	"sustained-warmup", "sustained-drain", "sustained-min-throughput", "sustained-z", "sustained-p99", "sustained-from"}

func (s *sustainedFlags) validate(f *benchFlags, changed func(string) bool) error {
	if !s.on {
		for _, n := range sustainedOnly {
			if changed(n) {
				return usagef("--%s is a flag of --sustained", n)
			}
		}
		return nil
	}
	switch {
	case f.executor != "sim":
		return usagef("--sustained runs dozens of trials per policy: it needs --executor sim, not %s", f.executor)
	case f.csvPath != "":
		return usagef("--csv writes runs at fixed rates; --sustained writes --json and --out")
	case changed("rates"):
		return usagef("--sustained searches the rate itself: leave out --rates")
	case changed("stop-after"):
		return usagef("--sustained stops each trial by its own rule (--sustained-drain): leave out --stop-after")
	case s.seeds < 1:
		return usagef("invalid --sustained-seeds %d: must be at least 1", s.seeds)
	case !(s.resolution > 0) || math.IsInf(s.resolution, 0):
		return usagef("invalid --sustained-resolution %g: must be a positive rate", s.resolution)
	case !(s.start > 0) || !(s.maxRate >= s.start) || math.IsInf(s.maxRate, 0):
		return usagef("invalid --sustained-start %g / --sustained-max %g: need 0 < start <= max", s.start, s.maxRate)
	case !(s.warmup >= 0) || !(s.warmup < f.duration):
		return usagef("invalid --sustained-warmup %g: must be >= 0 seconds, below --duration %g", s.warmup, f.duration)
	case !(s.drain >= 0) || math.IsInf(s.drain, 0):
		return usagef("invalid --sustained-drain %g: must be >= 0 seconds", s.drain)
	case !(s.minThroughput > 0 && s.minThroughput <= 1):
		return usagef("invalid --sustained-min-throughput %g: must be in (0, 1]", s.minThroughput)
	case !(s.z >= 0) || math.IsInf(s.z, 0):
		return usagef("invalid --sustained-z %g: must be >= 0 standard deviations (0: the bare ratio)", s.z)
	case !(s.p99 >= 0) || math.IsInf(s.p99, 0):
		return usagef("invalid --sustained-p99 %g: must be >= 0 seconds (0: none)", s.p99)
	}
	return nil
}

// runSustained runs the sustained-rate search of a validated plan and
// writes its table, JSON (--json) and plot (--out).
func runSustained(ctx context.Context, f benchFlags, plan *benchPlan) error {
	s := f.sustained
	seeds := make([]int64, s.seeds)
	for i := range seeds {
		seeds[i] = f.seed + int64(i)
	}
	lengthModel, err := lengthPredictor(f.predictor)
	if err != nil {
		return err
	}
	sloTTFT, sloTPOT := f.slo()
	var series []string
	var profile string
	if plan.replicas != nil {
		series, profile = clusterSeries(f.policies, f.balancers), describeReplicas(plan.replicas)
	} else {
		series, profile = f.policies, plan.profile.Name
	}
	search := &bench.SustainedSearch{
		Rule: bench.SustainedRule{Window: f.duration, Warmup: s.warmup, Drain: s.drain,
			MinThroughput: s.minThroughput, Z: s.z, P99E2E: s.p99},
		Policies: series, Seeds: seeds,
		Start: s.start, Resolution: s.resolution, MaxRate: s.maxRate, Parallel: f.parallel,
		NewRun: func(name string, rate float64, seed int64) (bench.RunConfig, error) {
			name, _, _ = strings.Cut(name, "/") // a cluster series is policy/balancer
			pol, err := newBenchPolicy(name, f)
			if err != nil {
				return bench.RunConfig{}, err
			}
			rc := bench.RunConfig{Workload: plan.w, Policy: pol, Name: name, PredictionError: f.predErr,
				Predictors: splitPredictions(newPredictors(lengthModel, learnsOnline(f.predictor)), f.predictor), CheckEvery: f.checkEvery, SLOTTFT: sloTTFT, SLOTPOT: sloTPOT}
			if plan.replicas == nil { // replicas bring their own (runClusterJob)
				rc.Engine, rc.Executor = f.simEngine(plan.profile), sim.NewExecutor(plan.profile)
			}
			return rc, nil
		},
		Log: os.Stderr,
	}
	if plan.replicas != nil {
		search.RunTrial = func(ctx context.Context, name string, rc bench.RunConfig) (report.Run, error) {
			_, bal, _ := strings.Cut(name, "/")
			return runClusterJob(ctx, rc, plan.replicas, bal, f)
		}
	}
	fmt.Printf("sustained-rate search: %s on %s, %d series x %d seeds, %d at a time\n",
		plan.w.Name, profile, len(series), len(seeds), max(f.parallel, 1))
	res, err := search.Run(ctx)
	if err != nil {
		return err
	}
	rep := &bench.SustainedReport{Workload: plan.w.Name, Executor: f.executor, Profile: profile, Replicas: len(plan.replicas),
		WindowS: f.duration, WarmupS: s.warmup, DrainS: s.drain, MinThroughput: s.minThroughput, ThroughputZ: s.z, P99E2ES: s.p99,
		Resolution: s.resolution, MaxRate: s.maxRate, Policies: res}
	if f.trace == "" {
		rep.PoolSeed = &f.seed
	}
	bench.SustainedRows(os.Stdout, rep)
	if f.jsonPath != "" {
		if err := bench.WriteSustainedJSON(f.jsonPath, rep); err != nil {
			return err
		}
	}
	if f.outDir != "" {
		if err := plotSustained(f.outDir, rep); err != nil {
			return err
		}
	}
	leaks := 0
	for _, p := range res {
		for _, sd := range p.Seeds {
			for _, t := range sd.Trials {
				leaks += t.Run.LeakedBlocks
			}
		}
	}
	if leaks > 0 {
		return fmt.Errorf("%d KV blocks leaked across trials", leaks)
	}
	return nil
}

// plotSustained draws a sustained report's plots into dir: the sustained
// rate per series, and latency against rate per series (e.g. per balancer)
// from the searches' trials, as <workload>-sustained-<metric>.png.
func plotSustained(dir string, rep *bench.SustainedReport) error {
	path, err := bench.PlotSustained(dir, rep)
	if err != nil {
		return err
	}
	fmt.Printf("plot: %s\n", path)
	trials := bench.SustainedTrialsReport(rep)
	trials.Workload += "-sustained"
	paths, err := report.Plot(dir, trials)
	for _, p := range paths {
		fmt.Printf("plot: %s\n", p)
	}
	return err
}

// replotSustained redraws the plots of the report saved at f.sustained.from;
// it runs nothing, so the other flags do not matter.
func replotSustained(f benchFlags) error {
	if f.outDir == "" {
		return usagef("--sustained-from redraws plots: it needs --out DIR")
	}
	rep, err := bench.ReadSustainedJSON(f.sustained.from)
	if err != nil {
		return err
	}
	return plotSustained(f.outDir, rep)
}
