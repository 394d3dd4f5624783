package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
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
// limits, and where to write the cost profile fitted from the run.
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
	fitProfile string
}

// addCPUFlags registers the flags of --executor cpu.
func addCPUFlags(fl *pflag.FlagSet, f *cpuFlags) {
	fl.StringVar(&f.model, "model", "llama-5m", "cpu executor: a Hugging Face model directory (config.json + safetensors; Llama, Qwen2, Mistral), or a built-in shape with dummy weights: "+llama.BuiltinHelp())
	fl.StringVar(&f.loadFormat, "load-format", "auto", "cpu executor: auto (safetensors), safetensors, or dummy (random weights from config.json)")
	fl.Uint64Var(&f.seed, "model-seed", 1, "cpu executor: seed of dummy weights")
	fl.IntVar(&f.kvBlocks, "kv-blocks", 256, "cpu executor: device KV blocks")
	fl.IntVar(&f.hostBlocks, "host-blocks", 1024, "cpu executor: host-tier KV blocks (0: no swapping)")
	fl.IntVar(&f.blockSize, "block-size", 16, "cpu executor: tokens per KV block")
	fl.IntVar(&f.maxBatched, "max-batched-tokens", 256, "cpu executor: token budget per iteration (chunked prefill)")
	fl.IntVar(&f.maxSeqs, "max-seqs", 32, "cpu executor: sequences per iteration")
	fl.IntVar(&f.swapBlocks, "swap-blocks-per-iter", 0, "cpu executor: swap budget per iteration in blocks (0: unlimited)")
	fl.DurationVar(&f.calibrate, "calibrate", 20*time.Second, "cpu executor: time budget of the start-up calibration that prices handling decisions")
	fl.StringVar(&f.fitProfile, "fit-profile", "", "cpu executor: write the cost profile fitted from the runs' measured iterations to this .json (replay it with --executor sim --profile FILE)")
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
}

// loadCPUBench validates the flags, loads the model and calibrates.
func loadCPUBench(f cpuFlags) (*cpuBench, error) {
	switch {
	case f.kvBlocks <= 0 || f.blockSize <= 0:
		return nil, usagef("--kv-blocks and --block-size must be positive")
	case f.hostBlocks < 0 || f.swapBlocks < 0:
		return nil, usagef("--host-blocks and --swap-blocks-per-iter must not be negative")
	case f.maxBatched <= 0 || f.maxSeqs <= 0:
		return nil, usagef("--max-batched-tokens and --max-seqs must be positive")
	}
	var m *llama.Model
	if c, ok := llama.Builtin(f.model); ok {
		m = llama.NewDummy(c, f.seed)
		m.Source = "dummy " + f.model
	} else {
		var err error
		m, err = llama.Load(f.model, llama.LoadOptions{LoadFormat: f.loadFormat, Seed: f.seed})
		if err != nil {
			return nil, usageError{err.Error()}
		}
	}
	cb := &cpuBench{f: f, model: m}
	x, err := cb.executor()
	if err != nil {
		return nil, err
	}
	iters, swaps, err := x.Calibrate(0, f.maxBatched, f.calibrate)
	if err != nil {
		return nil, err
	}
	cb.calib, _, err = x.Profile("cpu-calibrated", cb.engineConfig(), iters, swaps)
	if err != nil {
		return nil, fmt.Errorf("cpu calibration: %w", err)
	}
	return cb, nil
}

func (cb *cpuBench) executor() (*cpu.Executor, error) {
	return cpu.New(cb.model, cpu.Options{NumBlocks: cb.f.kvBlocks, BlockSize: cb.f.blockSize, HostBlocks: cb.f.hostBlocks, WrapTokens: true})
}

func (cb *cpuBench) engineConfig() engine.Config {
	return engine.Config{MaxBatchedTokens: cb.f.maxBatched, MaxSeqs: cb.f.maxSeqs, SwapBlocksPerIter: cb.f.swapBlocks}
}

// profile is the calibrated profile: what the report names, and whose
// handling cost model the runs use.
func (cb *cpuBench) profile() *sim.Profile { return cb.calib }

// run is bench.Run on a fresh executor; rc's Engine and Executor are set here.
func (cb *cpuBench) run(ctx context.Context, rc bench.RunConfig) (report.Run, error) {
	x, err := cb.executor()
	if err != nil {
		return report.Run{}, err
	}
	cfg := x.EngineConfig(cb.engineConfig())
	cfg.Cost = cb.calib.HandlingCost()
	rc.Engine, rc.Executor = cfg, x
	run, err := bench.Run(ctx, rc)
	if err != nil {
		return run, err
	}
	cb.mu.Lock()
	cb.iters = append(cb.iters, x.Samples()...)
	cb.swaps = append(cb.swaps, x.SwapSamples()...)
	cb.mu.Unlock()
	return run, nil
}

// writeFitted fits a profile to every run's measured iterations and writes
// it to --fit-profile (nothing when the flag is empty).
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
	return nil
}
