package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/spf13/pflag"

	"github.com/pitstop-llm/pitstop/bench"
	"github.com/pitstop-llm/pitstop/bench/report"
	"github.com/pitstop-llm/pitstop/engine"
	"github.com/pitstop-llm/pitstop/engine/sim"
	"github.com/pitstop-llm/pitstop/models/cpu"
	"github.com/pitstop-llm/pitstop/models/llama"
)

// cpuFlags are the options of --executor cpu: the model, its KV pools, batch
// limits, the clock, and where to write the cost profile fitted from the run.
type cpuFlags struct {
	model      string // HF model directory, or a built-in shape (dummy weights)
	loadFormat string // auto | safetensors | dummy
	seed       uint64 // dummy weights
	kvBlocks   int
	hostBlocks int
	blockSize  int
	maxBatched int
	maxSeqs    int
	swapBlocks int
	calibrate  time.Duration
	clock      string // real | measured
	fitProfile string
}

// addCPUFlags registers the flags of --executor cpu and returns their names
// (bench rejects them with another executor).
func addCPUFlags(fl *pflag.FlagSet, f *cpuFlags) []string {
	cf := pflag.NewFlagSet("cpu", pflag.ContinueOnError)
	cf.StringVar(&f.model, "model", "llama-5m", "cpu executor: a Hugging Face model directory (config.json + safetensors; Llama, Qwen2, Mistral), or a built-in shape with dummy weights: "+llama.BuiltinHelp())
	cf.StringVar(&f.loadFormat, "load-format", "auto", "cpu executor: auto (safetensors), safetensors, or dummy (random weights from config.json)")
	cf.Uint64Var(&f.seed, "model-seed", 1, "cpu executor: seed of dummy weights")
	cf.IntVar(&f.kvBlocks, "kv-blocks", 256, "cpu executor: device KV blocks (small values force memory pressure)")
	cf.IntVar(&f.hostBlocks, "host-blocks", 1024, "cpu executor: host-tier KV blocks (0: no swapping)")
	cf.IntVar(&f.blockSize, "block-size", 16, "cpu executor: tokens per KV block")
	cf.IntVar(&f.maxBatched, "max-batched-tokens", 256, "cpu executor: token budget per iteration (chunked prefill)")
	cf.IntVar(&f.maxSeqs, "max-seqs", 32, "cpu executor: sequences per iteration")
	cf.IntVar(&f.swapBlocks, "swap-blocks-per-iter", 0, "cpu executor: swap budget per iteration in blocks (0: unlimited)")
	cf.DurationVar(&f.calibrate, "calibrate", 20*time.Second, "cpu executor: time budget of the start-up calibration that prices handling decisions (0: the whole grid)")
	cf.StringVar(&f.clock, "clock", "real", "cpu executor: real (wall clock: tools, arrivals and scheduling overhead take real time) or measured (engine time advances by each iteration's measured time; idle gaps are skipped, so runs take only their compute time)")
	cf.StringVar(&f.fitProfile, "fit-profile", "", "cpu executor: write the cost profile fitted to the runs' measured iterations to this .json (replay it with --executor sim --profile FILE and the same workload flags)")
	var names []string
	cf.VisitAll(func(x *pflag.Flag) { names = append(names, x.Name) })
	fl.AddFlagSet(cf)
	return names
}

// validate checks the flags that need no model.
func (f *cpuFlags) validate() error {
	switch {
	case f.kvBlocks <= 0 || f.blockSize <= 0:
		return usagef("--kv-blocks and --block-size must be positive (got %d, %d)", f.kvBlocks, f.blockSize)
	case f.kvBlocks < 2:
		return usagef("--kv-blocks %d: the executor's calibration needs at least 2 blocks", f.kvBlocks)
	case f.hostBlocks < 0 || f.swapBlocks < 0:
		return usagef("--host-blocks and --swap-blocks-per-iter must not be negative (got %d, %d)", f.hostBlocks, f.swapBlocks)
	case f.maxBatched <= 0 || f.maxSeqs <= 0:
		return usagef("--max-batched-tokens and --max-seqs must be positive (got %d, %d)", f.maxBatched, f.maxSeqs)
	case f.calibrate < 0:
		return usagef("--calibrate %v: must not be negative", f.calibrate)
	}
	switch f.clock {
	case "real", "measured":
	default:
		return usagef("unknown clock %q (valid: real, measured)", f.clock)
	}
	if f.fitProfile != "" {
		if st, err := os.Stat(filepath.Dir(f.fitProfile)); err != nil || !st.IsDir() {
			return usagef("cannot write %s: directory %s does not exist", f.fitProfile, filepath.Dir(f.fitProfile))
		}
	}
	return nil
}

// cpuBench is a loaded model for bench runs on the CPU executor: one fresh
// executor per run, runs one at a time (their timings must not overlap), the
// measured iterations of every run pooled for the fitted profile.
type cpuBench struct {
	f     cpuFlags
	model *llama.Model
	calib *sim.Profile // from the start-up calibration: sizes, and the cost model of handling decisions

	mu    sync.Mutex
	iters []sim.IterSample
	swaps []sim.SwapSample
	runs  []cpuRun
}

// cpuRun is where one run's iterations lie in cpuBench.iters.
type cpuRun struct {
	policy     string
	rate       float64
	start, end int
}

// loadCPUBench validates the flags and loads the model (a bad model is a
// usage error, reported before any run); calibrate before running.
func loadCPUBench(f cpuFlags) (*cpuBench, error) {
	if err := f.validate(); err != nil {
		return nil, err
	}
	var m *llama.Model
	if c, ok := llama.Builtin(f.model); ok {
		m = llama.NewDummy(c, f.seed)
		m.Source = "dummy " + f.model
	} else {
		if st, err := os.Stat(f.model); err != nil || !st.IsDir() {
			return nil, usagef("--model %q: neither a built-in shape (%s) nor a model directory", f.model, llama.BuiltinHelp())
		}
		var err error
		m, err = llama.Load(f.model, llama.LoadOptions{LoadFormat: f.loadFormat, Seed: f.seed})
		if err != nil {
			return nil, usageError{err.Error()}
		}
	}
	return &cpuBench{f: f, model: m}, nil
}

// calibrate times a grid of batches on a scratch executor (also a warm-up)
// and keeps the profile fitted to them: the handling decisions' cost model.
func (cb *cpuBench) calibrate() error {
	x, err := cb.executor()
	if err != nil {
		return err
	}
	iters, swaps, err := x.Calibrate(0, cb.f.maxBatched, cb.f.calibrate)
	if err != nil {
		return err
	}
	cb.calib, _, err = x.Profile("cpu-calibrated", cb.engineConfig(), iters, swaps)
	if err != nil {
		return fmt.Errorf("cpu calibration: %w", err)
	}
	return nil
}

// describe is one line about the model and its KV pools.
func (cb *cpuBench) describe() string {
	c := &cb.model.Config
	return fmt.Sprintf("model %s (%s, %.3gM parameters, %d layers, d %d), %d KV blocks of %d tokens (%d host), %s kernels, clock %s",
		cb.f.model, cb.model.Source, float64(c.Params())/1e6, c.NumLayers, c.HiddenSize, cb.f.kvBlocks, cb.f.blockSize, cb.f.hostBlocks, cpu.KernelISA(), cb.f.clock)
}

func (cb *cpuBench) executor() (*cpu.Executor, error) {
	return cpu.New(cb.model, cpu.Options{NumBlocks: cb.f.kvBlocks, BlockSize: cb.f.blockSize, HostBlocks: cb.f.hostBlocks, WrapTokens: true})
}

func (cb *cpuBench) engineConfig() engine.Config {
	return engine.Config{MaxBatchedTokens: cb.f.maxBatched, MaxSeqs: cb.f.maxSeqs, SwapBlocksPerIter: cb.f.swapBlocks}
}

// run is bench.Run on a fresh executor and, with --clock real, a fresh wall
// clock; rc's Engine, Executor and Clock are set here.
func (cb *cpuBench) run(ctx context.Context, rc bench.RunConfig) (report.Run, error) {
	x, err := cb.executor()
	if err != nil {
		return report.Run{}, err
	}
	cfg := x.EngineConfig(cb.engineConfig())
	cfg.Cost = cb.calib.HandlingCost()
	rc.Engine, rc.Executor, rc.Clock = cfg, x, nil
	if cb.f.clock == "real" {
		rc.Clock = engine.NewRealClock()
	}
	run, err := bench.Run(ctx, rc)
	if err != nil {
		return run, err
	}
	cb.mu.Lock()
	cb.runs = append(cb.runs, cpuRun{policy: rc.Name, rate: rc.Rate, start: len(cb.iters), end: len(cb.iters) + len(x.Samples())})
	cb.iters = append(cb.iters, x.Samples()...)
	cb.swaps = append(cb.swaps, x.SwapSamples()...)
	cb.mu.Unlock()
	return run, nil
}

// writeFitted fits a profile to every run's measured iterations and writes
// it to --fit-profile (nothing when the flag is empty). It prints how well
// the pooled fit explains each run: a run whose measured busy time is well
// above what the fit predicts for its batches ran on a slower machine than
// the others did (other load on the CPU), which a replay cannot know.
func (cb *cpuBench) writeFitted() error {
	if cb.f.fitProfile == "" {
		return nil
	}
	x, err := cb.executor()
	if err != nil {
		return err
	}
	cb.mu.Lock()
	defer cb.mu.Unlock()
	p, st, err := x.Profile("cpu-fitted", cb.engineConfig(), cb.iters, cb.swaps)
	if err != nil {
		return fmt.Errorf("fitting a profile to the cpu runs: %w", err)
	}
	data, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(cb.f.fitProfile, append(data, '\n'), 0o644); err != nil {
		return err
	}
	fmt.Printf("fitted profile %s: %d iterations, R² %.3f, mean |error| per iteration %.1f%%, total busy time error %+.2f%%\n",
		cb.f.fitProfile, st.Samples, st.R2, 100*st.MeanAbsPctErr, 100*st.TotalErr)
	for _, r := range cb.runs {
		var meas, pred float64
		for _, s := range cb.iters[r.start:r.end] {
			meas += s.Seconds
			pred += p.Iter.Predict(s)
		}
		ratio := 0.0
		if pred > 0 {
			ratio = meas / pred
		}
		fmt.Printf("  %s at rate %g: %d iterations, busy %.1f s measured, %.1f s as fitted (measured/fitted %.2f)\n",
			r.policy, r.rate, r.end-r.start, meas, pred, ratio)
	}
	return nil
}
