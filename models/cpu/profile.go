package cpu

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"time"

	"github.com/pitstop-llm/pitstop/engine"
	"github.com/pitstop-llm/pitstop/engine/sim"
	"github.com/pitstop-llm/pitstop/kvswap"
)

// Profile describes this executor as a simulator profile: KV sizes and
// capacities from the model and cfg (the engine config the run uses: batch
// limits, swap budget), iteration cost fitted to iters, swap cost fitted to
// swaps when there are any (else a memmove-speed guess is kept). Pass
// Samples() and SwapSamples() after a run to fit what the run measured, or
// the samples of Calibrate before one.
func (x *Executor) Profile(name string, cfg engine.Config, iters []sim.IterSample, swaps []sim.SwapSample) (*sim.Profile, sim.FitStats, error) {
	c := &x.m.Config
	base := sim.Profile{
		Name:             name,
		Model:            fmt.Sprintf("%s (%s, %d layers, d %d, %d KV heads x %d, %.0fM parameters, float32, weights: %s)", c.Architecture, c.ModelType, c.NumLayers, c.HiddenSize, c.NumKVHeads, c.HeadDim, float64(c.Params())/1e6, x.m.Source),
		Device:           fmt.Sprintf("CPU, %d goroutines, %s kernels on %s/%s", x.fw.mm.Workers(), x.fw.mm.ISA(), runtime.GOOS, runtime.GOARCH),
		KVBytesPerToken:  c.KVBytesPerToken(),
		BlockSize:        x.opt.BlockSize,
		KVCapacityTokens: x.opt.NumBlocks * x.opt.BlockSize,
		HostCapacity:     int64(x.opt.HostBlocks) * int64(x.dev.BlockBytes()),
		MaxBatchedTokens: cfg.MaxBatchedTokens,
		MaxSeqs:          cfg.MaxSeqs,
		Swap:             sim.SwapCost{Bandwidth: 5e9, CopiesPerBlock: 1, BlocksPerIter: cfg.SwapBlocksPerIter},
		Provenance: []string{
			"Measured on the CPU executor (models/cpu): per-block memmove swaps, no overlap with compute.",
		},
	}
	return sim.FitProfile(base, iters, swaps)
}

// Calibrate times a grid of synthetic batches — prefill chunks at several
// contexts, decode batches at several contexts, and mixes of both — on the
// device KV pool, and a few block swaps when there is a host tier, and returns
// the measurements (they are not kept in Samples). Call it before the engine
// allocates any block: it overwrites the pool. It stops after budget (0: no
// limit) and uses contexts up to maxCtx tokens (0: what the pool holds).
func (x *Executor) Calibrate(maxCtx, maxBatched int, budget time.Duration) ([]sim.IterSample, []sim.SwapSample, error) {
	bs := x.opt.BlockSize
	capTokens := x.opt.NumBlocks * bs
	if maxCtx <= 0 || maxCtx > capTokens {
		maxCtx = capTokens
	}
	if maxBatched <= 0 {
		maxBatched = 256
	}
	if maxCtx < 2*bs {
		return nil, nil, errors.New("cpu: calibration needs at least two blocks")
	}
	start := time.Now()
	r := rand.New(rand.NewPCG(1, 2))
	vocab := x.m.Config.VocabSize
	// seq makes a synthetic sequence over the given blocks.
	mk := func(ctx int, first int) item {
		toks := make([]int32, ctx)
		for i := range toks {
			toks[i] = int32(r.IntN(vocab))
		}
		blocks := make([]int32, (ctx+bs-1)/bs)
		for i := range blocks {
			blocks[i] = int32((first + i) % x.opt.NumBlocks)
		}
		return item{id: uint64(first), tokens: toks, blocks: blocks}
	}
	var iters []sim.IterSample
	timeIt := func(items []item) error {
		t0 := time.Now()
		if err := x.fw.run(x, items); err != nil {
			return err
		}
		d := time.Since(t0)
		var s sim.IterSample
		for _, it := range items {
			if it.n == 1 && it.sample && it.start > 0 {
				s.Decodes++
				s.DecodeCtx += float64(it.start + 1)
			} else {
				s.PrefillTokens += float64(it.n)
				s.PrefillAttn += float64(it.n) * float64(it.start+it.n)
			}
		}
		s.Seconds = d.Seconds()
		iters = append(iters, s)
		return nil
	}
	// The grid, cheapest first so that a short budget still covers every
	// kind of batch: prefill chunks (size × starting context), decode
	// batches (batch × context, each sequence in its own blocks when the pool
	// allows: shared blocks time the same), and decodes mixed with a chunk.
	type spec struct{ chunk, at, batch, ctx int }
	const minCalibration = 5
	var grid []spec
	for _, chunk := range []int{1, 16, 64, 256, 1024} {
		for _, at := range []int{0, 256, 1024, 4096} {
			if chunk <= maxBatched && at+chunk <= maxCtx {
				grid = append(grid, spec{chunk: chunk, at: at})
			}
		}
	}
	for _, batch := range []int{1, 4, 16, 64} {
		for _, ctx := range []int{32, 256, 1024} {
			if ctx <= maxCtx && batch <= maxBatched {
				grid = append(grid, spec{batch: batch, ctx: ctx})
				if chunk := min(64, maxBatched-batch); chunk > 0 && ctx+chunk <= maxCtx {
					grid = append(grid, spec{batch: batch, ctx: ctx, chunk: chunk, at: ctx})
				}
			}
		}
	}
	work := func(s spec) int { return s.chunk*(1+s.at/512) + s.batch*(1+s.ctx/512) }
	slices.SortStableFunc(grid, func(a, b spec) int { return work(a) - work(b) })
	for _, g := range grid {
		// The budget is soft: the fit needs minCalibration batches, which a
		// loaded machine may not time within it (they are the cheapest ones).
		if budget > 0 && time.Since(start) > budget && len(iters) >= minCalibration {
			break
		}
		per := (max(g.ctx, 1) + bs - 1) / bs
		var items []item
		for i := range g.batch {
			it := mk(g.ctx, i*per)
			it.start, it.n, it.sample = g.ctx-1, 1, true
			items = append(items, it)
		}
		if g.chunk > 0 {
			it := mk(g.at+g.chunk, g.batch*per)
			it.start, it.n, it.sample = g.at, g.chunk, g.batch == 0
			items = append(items, it)
		}
		if err := timeIt(items); err != nil {
			return nil, nil, err
		}
	}
	var swaps []sim.SwapSample
	if n := min(16, x.host.Available(), x.opt.NumBlocks); n > 0 {
		slots, _ := x.host.Alloc(n)
		moves := make([]kvswap.Move, n)
		for i := range moves {
			moves[i] = kvswap.Move{Device: i, Host: slots[i]}
		}
		for range 3 {
			for _, out := range []bool{true, false} {
				t0 := time.Now()
				if out {
					x.mover.SwapOut(moves)
				} else {
					x.mover.SwapIn(moves)
				}
				swaps = append(swaps, sim.SwapSample{Blocks: n, Bytes: int64(n) * int64(x.dev.BlockBytes()), Seconds: time.Since(t0).Seconds()})
			}
		}
		x.host.Free(slots)
	}
	if len(iters) < minCalibration {
		return nil, nil, fmt.Errorf("cpu: calibration timed %d batches, need %d (the model's context or batch limits leave too few kinds of batch)", len(iters), minCalibration)
	}
	return iters, swaps, nil
}
