package cpu

import (
	"context"
	"fmt"
	"hash/fnv"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/pitstop-llm/pitstop/engine"
	"github.com/pitstop-llm/pitstop/handling"
	"github.com/pitstop-llm/pitstop/models/safetensors"
)

// testPolicy is FCFS with a fixed handling of paused calls (engine_test.go's).
type testPolicy struct {
	engine.BasePolicy
	kind   handling.Kind
	traits engine.Traits
}

func (p testPolicy) Traits() engine.Traits { return p.traits }

func (p testPolicy) Priority(*engine.View, *engine.Sequence) engine.Priority {
	return engine.Priority{}
}
func (p testPolicy) Handle(*engine.View, *engine.Sequence) handling.Kind { return p.kind }

// script forces a fixed token stream (so every run has the same contexts) and
// pauses after each segment of decode tokens.
type script struct {
	decode []int
	seg, n int
	next   int32
}

func (c *script) Next(_ *engine.Sequence, _ int32) engine.Action {
	c.n++
	c.next = (c.next*7 + 3) % 60
	if c.n < c.decode[c.seg] {
		return engine.Action{Token: c.next}
	}
	if c.seg == len(c.decode)-1 {
		return engine.Action{Token: c.next, Kind: engine.Finish}
	}
	return engine.Action{Token: c.next, Kind: engine.Pause, Tool: engine.ToolCall{Name: "t", Expected: 1}}
}

func (c *script) Forecast(*engine.Sequence) engine.Forecast { return engine.Forecast{} }

// tools resumes paused calls after a fixed tool time with 3 result tokens.
type tools struct {
	e       *engine.Engine
	scr     map[engine.SeqID]*script
	err     error
	rescued int
}

func (r *tools) Observe(ev *engine.Event) {
	switch ev.Kind {
	case engine.EvPaused:
		id := ev.Seq.ID()
		r.e.At(ev.Time+50*time.Millisecond, func() {
			r.scr[id].seg++
			r.scr[id].n = 0
			if err := r.e.Resume(id, []int32{61, 62, 63}); err != nil {
				r.e.Stop(err)
			}
		})
	case engine.EvIteration:
		r.rescued += ev.Iter.Rescued
		if err := r.e.Check(); err != nil {
			r.e.Stop(err)
		}
	}
}

// fixedTime reports a fixed iteration time so that every run schedules alike.
type fixedTime struct{ *Executor }

func (f fixedTime) Step(b *engine.Batch) (time.Duration, error) {
	_, err := f.Executor.Step(b)
	return 10 * time.Millisecond, err
}

type runOut struct {
	logits map[string][]float32 // "call/position" -> logits
	x      *Executor
	// swap checks
	outChecked, inChecked int
	prefill               float64
	// prefix-cache runs: discarded calls' tails taken back, contexts rescued
	tails   engine.TailStats
	rescued int
}

func hashBytes(b []byte) uint64 {
	h := fnv.New64a()
	h.Write(b)
	return h.Sum64()
}

// runCalls runs three tool-calling calls on a tiny model under a handling.
func runCalls(t *testing.T, kind handling.Kind) runOut {
	t.Helper()
	return runCallsOn(t, kind, 40, engine.Traits{})
}

// runCallsOn is runCalls on a device pool of numBlocks blocks, with traits.
func runCallsOn(t *testing.T, kind handling.Kind, numBlocks int, traits engine.Traits) runOut {
	t.Helper()
	m := tinyModel(t, "qwen2", safetensors.F32, 1)
	out := runOut{logits: map[string][]float32{}}
	x, err := New(m, Options{NumBlocks: numBlocks, BlockSize: 4, HostBlocks: 40,
		OnLogits: func(s *engine.Sequence, pos int, logits []float32) {
			out.logits[fmt.Sprintf("%s/%d", s.Name(), pos)] = slices.Clone(logits)
		}})
	if err != nil {
		t.Fatal(err)
	}
	out.x = x
	// Checksums of every swapped block: device bytes before a swap-out must
	// equal the host slot's after it, and again when the slot is swapped in,
	// and the device block's bytes after the swap-in.
	stored := map[int]uint64{} // host slot -> hash at swap-out
	wantIn := map[int]uint64{} // device block -> hash expected after swap-in
	x.beforeSwap = func(b *engine.Batch) {
		for _, mv := range b.SwapOut {
			stored[mv.Host] = hashBytes(x.dev.Block(mv.Device))
		}
		for _, mv := range b.SwapIn {
			h, ok := stored[mv.Host]
			if !ok || hashBytes(x.host.Slot(mv.Host)) != h {
				t.Errorf("host slot %d changed while swapped out", mv.Host)
			}
			wantIn[mv.Device] = h
		}
	}
	x.afterSwap = func(b *engine.Batch) {
		for _, mv := range b.SwapOut {
			if hashBytes(x.host.Slot(mv.Host)) != stored[mv.Host] {
				t.Errorf("swap-out of block %d to slot %d: bytes differ", mv.Device, mv.Host)
			}
			out.outChecked++
		}
		for _, mv := range b.SwapIn {
			if hashBytes(x.dev.Block(mv.Device)) != wantIn[mv.Device] {
				t.Errorf("swap-in of slot %d to block %d: bytes differ", mv.Host, mv.Device)
			}
			out.inChecked++
		}
	}
	cfg := x.EngineConfig(engine.Config{MaxBatchedTokens: 12, MaxSeqs: 4})
	r := &tools{scr: map[engine.SeqID]*script{}}
	e, err := engine.New(cfg, engine.NewVirtualClock(), fixedTime{x}, testPolicy{kind: kind, traits: traits}, r)
	if err != nil {
		t.Fatal(err)
	}
	r.e = e
	for i := range 3 {
		prompt := make([]int32, 9+4*i)
		for j := range prompt {
			prompt[j] = int32((i*13 + j*5) % 60)
		}
		sc := &script{decode: []int{5 + i, 4, 3}, next: int32(i)}
		s, err := e.SubmitNow(engine.Request{Name: fmt.Sprintf("c%d", i), Prompt: prompt, Controller: sc})
		if err != nil {
			t.Fatal(err)
		}
		r.scr[s.ID()] = sc
	}
	if err := e.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := e.Leaked(); n != 0 || e.Live() != 0 {
		t.Fatalf("%v: %d blocks leaked, %d calls unfinished", kind, n, e.Live())
	}
	for _, s := range x.Samples() {
		out.prefill += s.PrefillTokens
	}
	out.tails, out.rescued = e.Blocks().Tails(), r.rescued
	return out
}

// TestSwapAndRecomputeLoseNothing runs the same calls with their KV
// preserved, swapped to the host tier and back, and discarded and
// recomputed: swapped KV comes back byte for byte and gives bit-identical
// logits; recomputed KV gives logits within 1e-4.
func TestSwapAndRecomputeLoseNothing(t *testing.T) {
	pre := runCalls(t, handling.Preserve)
	swp := runCalls(t, handling.Swap)
	dis := runCalls(t, handling.Discard)
	if len(pre.logits) != 12+13+14 { // every sampled token of the three calls
		t.Fatalf("preserve run sampled %d positions, want 39", len(pre.logits))
	}
	st := swp.x.MoverStats()
	if st.OutBlocks == 0 || st.InBlocks == 0 || swp.outChecked != int(st.OutBlocks) || swp.inChecked != int(st.InBlocks) {
		t.Fatalf("swap run: mover %+v, checksums of %d out and %d in", st, swp.outChecked, swp.inChecked)
	}
	if dis.prefill <= pre.prefill {
		t.Fatalf("discard run prefilled %g tokens, preserve %g: nothing was recomputed", dis.prefill, pre.prefill)
	}
	for _, run := range []struct {
		name string
		out  runOut
	}{{"swap", swp}, {"discard", dis}} {
		if len(run.out.logits) != len(pre.logits) {
			t.Fatalf("%s: %d sampled positions, preserve %d", run.name, len(run.out.logits), len(pre.logits))
		}
		worst := 0.0
		for k, want := range pre.logits {
			got, ok := run.out.logits[k]
			if !ok {
				t.Fatalf("%s: no logits at %s", run.name, k)
			}
			d := maxDiff(got, want)
			worst = max(worst, d)
			if run.name == "swap" && !slices.Equal(got, want) {
				t.Errorf("swap: logits at %s differ from preserve's by %g, want bit-identical", k, d)
			}
			if d > 1e-4 || math.IsNaN(d) {
				t.Errorf("%s: logits at %s differ from preserve's by %g", run.name, k, d)
			}
		}
		t.Logf("%s: %d positions, worst difference from preserve %.2g", run.name, len(pre.logits), worst)
	}
	t.Logf("swap: %d blocks out, %d in, checksums equal", st.OutBlocks, st.InBlocks)
}

// TestCachedDiscardLosesNothing: with the prefix cache, a discarded call's
// partial last block is taken back as it was left, and a context the cache
// is about to evict is rescued by a swap-out in the iteration that evicts
// it, before the block is written again: every logit is the preserve run's,
// within recomputation's tolerance.
func TestCachedDiscardLosesNothing(t *testing.T) {
	pre := runCalls(t, handling.Preserve)
	for _, blocks := range []int{40, 16} {
		run := runCallsOn(t, handling.Discard, blocks, engine.Traits{PrefixCache: true})
		t.Logf("%d blocks: tails %+v, %d rescued, %d blocks swapped out", blocks, run.tails, run.rescued, run.x.MoverStats().OutBlocks)
		if run.tails.Reused == 0 {
			t.Errorf("%d blocks: no discarded call took its tail back (%+v)", blocks, run.tails)
		}
		if blocks == 16 && (run.rescued == 0 || run.outChecked == 0) {
			t.Errorf("%d blocks: %d contexts rescued, %d swap-outs checked; want some", blocks, run.rescued, run.outChecked)
		}
		if len(run.logits) != len(pre.logits) {
			t.Fatalf("%d blocks: %d sampled positions, preserve %d", blocks, len(run.logits), len(pre.logits))
		}
		for k, want := range pre.logits {
			got, ok := run.logits[k]
			if !ok {
				t.Fatalf("%d blocks: no logits at %s", blocks, k)
			}
			if d := maxDiff(got, want); d > 1e-4 || math.IsNaN(d) {
				t.Errorf("%d blocks: logits at %s differ from preserve's by %g", blocks, k, d)
			}
		}
	}
}
