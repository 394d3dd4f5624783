package runtime

import (
	"fmt"
	"time"

	"github.com/pitstop-llm/pitstop/engine"
	"github.com/pitstop-llm/pitstop/engine/sim"
	"github.com/pitstop-llm/pitstop/models/cpu"
)

// CPUOptions size the CPU executor a WeightsModel is served on. Zero
// values take the defaults below.
type CPUOptions struct {
	KVTokens          int           // device KV capacity in tokens (default DefaultCPUKVTokens, at most the model's context × MaxSeqs)
	HostKVTokens      int           // host tier in tokens for swapped KV (default 4 × KVTokens; negative: none, swaps become discards)
	BlockSize         int           // tokens per KV block (default 16)
	MaxBatchedTokens  int           // token budget of one iteration, chunked prefill (default 256)
	MaxSeqs           int           // sequences in one iteration (default 32)
	SwapBlocksPerIter int           // swap budget per iteration in blocks (0: unlimited)
	Workers           int           // goroutines of attention (0: GOMAXPROCS)
	Calibrate         time.Duration // budget of the start-up calibration that prices the handling decisions (default 2s; negative: none, a fixed guess)
}

// DefaultCPUKVTokens is the default device KV capacity of the CPU
// executor, in tokens.
const DefaultCPUKVTokens = 16384

// CPUBackend is a CPU executor (models/cpu) for a WeightsModel, with the
// engine configuration and the cost profile to serve it under: Apply puts
// them in a runtime Config. Its host tier is the engine's: swaps move the
// KV's real bytes to host memory and back.
type CPUBackend struct {
	Executor *cpu.Executor
	Engine   engine.Config
	// Profile describes the executor; its cost model, fitted to the
	// calibration's measured iterations and swaps, prices the handling
	// decisions (Engine.Cost).
	Profile *sim.Profile
	model   *WeightsModel
}

// NewCPUBackend makes the CPU executor for m and calibrates its cost
// model. Sampling follows each request's temperature, top_p and seed, which
// reach the executor in the engine's batch (engine.Request.Sampling):
// greedy by default.
func NewCPUBackend(m *WeightsModel, opt CPUOptions) (*CPUBackend, error) {
	if opt.BlockSize == 0 {
		opt.BlockSize = 16
	}
	if opt.MaxBatchedTokens == 0 {
		opt.MaxBatchedTokens = 256
	}
	if opt.MaxSeqs == 0 {
		opt.MaxSeqs = 32
	}
	if opt.KVTokens == 0 {
		opt.KVTokens = DefaultCPUKVTokens
		if mc := m.MaxContext(); mc > 0 {
			opt.KVTokens = min(opt.KVTokens, mc*opt.MaxSeqs)
		}
	}
	if opt.HostKVTokens == 0 {
		opt.HostKVTokens = 4 * opt.KVTokens
	}
	if opt.Calibrate == 0 {
		opt.Calibrate = 2 * time.Second
	}
	switch {
	case opt.BlockSize < 0 || opt.KVTokens < 0 || opt.MaxBatchedTokens < 0 || opt.MaxSeqs < 0:
		return nil, fmt.Errorf("cpu backend: block size, KV tokens, max batched tokens and max seqs must be positive")
	case opt.SwapBlocksPerIter < 0:
		return nil, fmt.Errorf("cpu backend: swap blocks per iteration must not be negative")
	}
	blocks := (opt.KVTokens + opt.BlockSize - 1) / opt.BlockSize
	if blocks < 2 {
		return nil, fmt.Errorf("cpu backend: %d KV tokens is less than two blocks of %d", opt.KVTokens, opt.BlockSize)
	}
	host := 0
	if opt.HostKVTokens > 0 {
		host = (opt.HostKVTokens + opt.BlockSize - 1) / opt.BlockSize
	}
	x, err := cpu.New(m.Weights(), cpu.Options{NumBlocks: blocks, BlockSize: opt.BlockSize, HostBlocks: host,
		Workers: opt.Workers, KeepSamples: -1})
	if err != nil {
		return nil, err
	}
	base := engine.Config{MaxBatchedTokens: opt.MaxBatchedTokens, MaxSeqs: opt.MaxSeqs, SwapBlocksPerIter: opt.SwapBlocksPerIter}
	b := &CPUBackend{Executor: x, model: m}
	if opt.Calibrate > 0 {
		maxCtx := blocks * opt.BlockSize
		if mc := m.MaxContext(); mc > 0 {
			maxCtx = min(maxCtx, mc)
		}
		iters, swaps, err := x.Calibrate(maxCtx, opt.MaxBatchedTokens, opt.Calibrate)
		if err != nil {
			return nil, fmt.Errorf("cpu backend: %w", err)
		}
		if b.Profile, _, err = x.Profile("cpu-"+m.Name(), base, iters, swaps); err != nil {
			return nil, fmt.Errorf("cpu backend: calibration: %w", err)
		}
	} else {
		// No calibration: a cost model of the right shape whose prices are
		// a guess (1 ms per iteration, 20 µs per token).
		fake := []sim.IterSample{
			{PrefillTokens: 1, Seconds: 0.00102}, {PrefillTokens: 64, Seconds: 0.00228}, {PrefillTokens: 256, Seconds: 0.00612},
			{Decodes: 1, DecodeCtx: 64, Seconds: 0.00102}, {Decodes: 8, DecodeCtx: 512, Seconds: 0.00116}, {Decodes: 32, DecodeCtx: 2048, Seconds: 0.00164},
		}
		if b.Profile, _, err = x.Profile("cpu-"+m.Name()+"-uncalibrated", base, fake, nil); err != nil {
			return nil, fmt.Errorf("cpu backend: %w", err)
		}
	}
	base.Cost = b.Profile.HandlingCost()
	b.Engine = x.EngineConfig(base)
	return b, nil
}

// Apply returns cfg set to serve the backend's model on it: Model,
// Executor, Engine, Profile and, unless set, MaxContextTokens.
func (b *CPUBackend) Apply(cfg Config) Config {
	cfg.Model = b.model
	cfg.Executor = b.Executor
	ecfg := b.Engine
	cfg.Engine = &ecfg
	cfg.Profile = b.Profile
	if cfg.MaxContextTokens <= 0 {
		cfg.MaxContextTokens = b.model.MaxContext()
	}
	return cfg
}
