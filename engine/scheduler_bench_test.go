package engine

import (
	"testing"

	"github.com/pitstop-llm/pitstop/handling"
)

// endless finishes after 512 generated tokens; the benchmark replaces every
// finished call with a new waiting one, keeping 256 running and 10,000
// waiting in steady state.
type endless struct{}

func (endless) Next(s *Sequence, _ int32) Action {
	if s.Generated() >= 511 {
		return Action{Token: 1, Kind: Finish}
	}
	return Action{Token: 1}
}
func (endless) Forecast(*Sequence) Forecast { return Forecast{} }

// BenchmarkSchedulerStep measures one iteration of the engine's own work
// (ordering, batch building, postprocessing) with 256 running and 10,000
// waiting calls; the executor is free.
func BenchmarkSchedulerStep(b *testing.B) {
	cfg := Config{NumBlocks: 1 << 15, BlockSize: 16, MaxBatchedTokens: 512, MaxSeqs: 256}
	prompt := make([]int32, 64)
	for i := range prompt {
		prompt[i] = int32(i + 1)
	}
	var e *Engine
	refill := observerFunc(func(ev *Event) {
		if ev.Kind == EvFinished {
			if _, err := e.SubmitNow(Request{Prompt: prompt, Controller: endless{}, Program: "p"}); err != nil {
				b.Fatal(err)
			}
		}
	})
	e, err := New(cfg, NewVirtualClock(), fixedExecFast{}, testPolicy{kind: handling.Preserve}, refill)
	if err != nil {
		b.Fatal(err)
	}
	for range 256 + 10000 {
		if _, err := e.SubmitNow(Request{Prompt: prompt, Controller: endless{}, Program: "p"}); err != nil {
			b.Fatal(err)
		}
	}
	for e.view.Running < 256 { // admit the first 256 and finish their prefill
		if _, err := e.step(); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	for range b.N {
		if _, err := e.step(); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	if n := len(e.batch.Items); n != 256 {
		b.Fatalf("batch has %d calls, want 256", n)
	}
}
