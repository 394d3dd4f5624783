// Package cpu is the engine's CPU executor: a real Llama-family forward pass
// (models/llama weights, float32) over the engine's paged KV cache.
//
// One engine block holds all layers' K and V for BlockSize tokens, float32,
// laid out [layer][K|V][kv head][token][head dim], and lives in a
// kvswap.MemoryDevice, so the engine's swaps move the real bytes between that
// device pool and the kvswap host tier the executor shares with the engine.
// Step carries out the batch's swap-outs, then its swap-ins (per-block
// copies: see kvswap's package doc for why the CPU does not gather), then one
// forward pass over every item — prefill chunks and decodes mixed — writing
// the K/V of the item's new tokens into its blocks and attending over all its
// positions in place, then samples the items that ask for a token as their
// batch item's Sampling says (greedy when zero).
//
// Matrix products go through models/kernel (AVX-512, AVX2 or portable Go,
// chosen at run time; no build tags).
package cpu

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"time"
	"unsafe"

	"github.com/pitstop-llm/pitstop/engine"
	"github.com/pitstop-llm/pitstop/engine/sim"
	"github.com/pitstop-llm/pitstop/kvswap"
	"github.com/pitstop-llm/pitstop/models/llama"
)

// Options sizes the executor.
type Options struct {
	NumBlocks  int // device KV blocks (the engine's NumBlocks)
	BlockSize  int // tokens per block (the engine's BlockSize; 0: 16)
	HostBlocks int // host tier capacity in blocks (0: no swapping)
	// WrapTokens maps token ids outside the vocabulary into it (modulo the
	// vocabulary size) instead of failing the step: for scripted benchmark
	// workloads whose token ids are synthetic. Serving leaves it off.
	WrapTokens bool
	// Workers bounds the goroutines of attention and of the matrix
	// products (0: GOMAXPROCS).
	Workers int
	// OnLogits, when set, is called during Step with each sampled item's
	// logits (valid only during the call; copy what you keep).
	OnLogits func(s *engine.Sequence, pos int, logits []float32)
	// KeepSamples bounds the per-iteration measurements kept for profile
	// fitting (0: 1<<20; negative: none).
	KeepSamples int
}

// Executor runs a model on the CPU; it implements engine.Executor. It is not
// safe for concurrent use: the engine's loop owns it.
type Executor struct {
	m     *llama.Model
	opt   Options
	dev   *kvswap.MemoryDevice
	host  *kvswap.HostTier
	mover *kvswap.Mover
	kv    [][]float32 // float32 view of each device block
	fw    forward
	rng   *rand.Rand
	pcg   rand.PCG
	samp  sampler

	iters []sim.IterSample
	swaps []sim.SwapSample
	// test hooks: around the swaps of a step
	beforeSwap, afterSwap func(b *engine.Batch)
	onLogits              func(it *item, pos int, logits []float32)
}

var _ engine.Executor = (*Executor)(nil)

// New makes an executor for m with a zeroed device KV pool and host tier.
func New(m *llama.Model, opt Options) (*Executor, error) {
	if m == nil {
		return nil, errors.New("cpu: nil model")
	}
	if opt.BlockSize == 0 {
		opt.BlockSize = 16
	}
	if opt.NumBlocks <= 0 || opt.BlockSize <= 0 || opt.HostBlocks < 0 {
		return nil, fmt.Errorf("cpu: need positive NumBlocks and BlockSize and HostBlocks >= 0 (got %d, %d, %d)", opt.NumBlocks, opt.BlockSize, opt.HostBlocks)
	}
	if opt.Workers <= 0 {
		opt.Workers = runtime.GOMAXPROCS(0)
	}
	if opt.KeepSamples == 0 {
		opt.KeepSamples = 1 << 20
	}
	bb := BlockBytes(&m.Config, opt.BlockSize)
	x := &Executor{m: m, opt: opt, dev: kvswap.NewMemoryDevice(opt.NumBlocks, bb)}
	x.host = kvswap.NewHostTier(opt.HostBlocks, bb, true)
	x.mover = kvswap.NewMover(x.dev, x.host, false)
	x.kv = make([][]float32, opt.NumBlocks)
	for i := range x.kv {
		b := x.dev.Block(i)
		x.kv[i] = unsafe.Slice((*float32)(unsafe.Pointer(unsafe.SliceData(b))), len(b)/4)
	}
	x.fw.init(m, opt.BlockSize, opt.Workers)
	x.rng = rand.New(&x.pcg)
	return x, nil
}

// BlockBytes is the size of one KV block: all layers' float32 K and V for
// blockSize tokens.
func BlockBytes(c *llama.Config, blockSize int) int { return c.KVBytesPerToken() * blockSize }

// Model is the executor's model.
func (x *Executor) Model() *llama.Model { return x.m }

// Device is the device KV pool.
func (x *Executor) Device() *kvswap.MemoryDevice { return x.dev }

// Host is the host tier; the engine must share it (engine.Config.Host).
func (x *Executor) Host() *kvswap.HostTier { return x.host }

// BlockBytes is the size of one KV block.
func (x *Executor) BlockBytes() int { return x.dev.BlockBytes() }

// EngineConfig returns cfg with the KV sizes of this executor filled in:
// NumBlocks, BlockSize, HostBlocks, Host and HostBlockBytes.
func (x *Executor) EngineConfig(cfg engine.Config) engine.Config {
	cfg.NumBlocks = x.opt.NumBlocks
	cfg.BlockSize = x.opt.BlockSize
	cfg.HostBlocks = x.opt.HostBlocks
	cfg.Host = x.host
	cfg.HostBlockBytes = x.dev.BlockBytes()
	return cfg
}

// MoverStats are the swap totals so far.
func (x *Executor) MoverStats() kvswap.MoverStats { return x.mover.Stats() }

// Samples are the measured iterations so far (forward and sampling time,
// without swaps), for sim.FitIterCost.
func (x *Executor) Samples() []sim.IterSample { return x.iters }

// SwapSamples are the measured swaps so far, for sim.FitSwapCost.
func (x *Executor) SwapSamples() []sim.SwapSample { return x.swaps }

// ResetSamples forgets the measurements (e.g. after a warm-up).
func (x *Executor) ResetSamples() { x.iters, x.swaps = x.iters[:0], x.swaps[:0] }

// Step runs one iteration: swap-outs, swap-ins, the forward pass and sampling.
// It returns the measured wall time of all of it.
func (x *Executor) Step(b *engine.Batch) (time.Duration, error) {
	t0 := time.Now()
	if x.beforeSwap != nil {
		x.beforeSwap(b)
	}
	if err := x.checkMoves(b); err != nil {
		return 0, err
	}
	x.mover.SwapOut(b.SwapOut)
	x.mover.SwapIn(b.SwapIn)
	if x.afterSwap != nil {
		x.afterSwap(b)
	}
	t1 := time.Now()
	if n := len(b.SwapOut) + len(b.SwapIn); n > 0 && x.keep(len(x.swaps)) {
		x.swaps = append(x.swaps, sim.SwapSample{Blocks: n, Bytes: int64(n) * int64(x.dev.BlockBytes()), Seconds: t1.Sub(t0).Seconds()})
	}
	if len(b.Items) > 0 {
		items, err := x.fw.items(b)
		if err != nil {
			return 0, err
		}
		if err := x.fw.run(x, items); err != nil {
			return 0, err
		}
		for i := range items {
			if items[i].sample {
				b.Items[i].Token = items[i].token
			}
		}
		if x.keep(len(x.iters)) {
			x.iters = append(x.iters, iterSample(b, time.Since(t1)))
		}
	}
	return time.Since(t0), nil
}

func (x *Executor) keep(n int) bool { return x.opt.KeepSamples > 0 && n < x.opt.KeepSamples }

// checkMoves rejects moves outside the pools before any byte moves.
func (x *Executor) checkMoves(b *engine.Batch) error {
	for _, moves := range [][]kvswap.Move{b.SwapOut, b.SwapIn} {
		for _, mv := range moves {
			if mv.Device < 0 || mv.Device >= x.opt.NumBlocks {
				return fmt.Errorf("cpu: swap of device block %d, the pool has %d", mv.Device, x.opt.NumBlocks)
			}
			if mv.Host < 0 || mv.Host >= x.host.Capacity() || !x.host.Allocated(mv.Host) {
				return fmt.Errorf("cpu: swap with host slot %d, not allocated in the host tier (capacity %d): is the engine sharing the executor's host tier?", mv.Host, x.host.Capacity())
			}
		}
	}
	return nil
}

// iterSample classifies the batch as the simulator's cost model does.
func iterSample(b *engine.Batch, d time.Duration) sim.IterSample {
	var s sim.IterSample
	for i := range b.Items {
		it := &b.Items[i]
		if it.Len == 1 && it.Sample && it.Start > 0 {
			s.Decodes++
			s.DecodeCtx += float64(it.Start + 1)
		} else {
			s.PrefillTokens += float64(it.Len)
			s.PrefillAttn += float64(it.Len) * float64(it.Start+it.Len)
		}
	}
	s.Seconds = d.Seconds()
	return s
}
