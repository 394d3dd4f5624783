package cpu

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/pitstop-llm/pitstop/engine"
	"github.com/pitstop-llm/pitstop/handling"
	"github.com/pitstop-llm/pitstop/models/safetensors"
)

// echo keeps the sampled token and finishes after n of them.
type echo struct {
	n    int
	toks []int32
}

func (c *echo) Next(_ *engine.Sequence, sampled int32) engine.Action {
	c.toks = append(c.toks, sampled)
	if len(c.toks) == c.n {
		return engine.Action{Token: sampled, Kind: engine.Finish}
	}
	return engine.Action{Token: sampled}
}

func (c *echo) Forecast(*engine.Sequence) engine.Forecast { return engine.Forecast{} }

// TestStepSamplesAsTheBatchSays: the executor draws each call's tokens with
// the sampling its request gave the engine, which reaches it in the batch:
// greedy is the argmax of the logits, and a temperature's draws depend on
// the seed alone (two calls with one seed and one prompt draw alike).
func TestStepSamplesAsTheBatchSays(t *testing.T) {
	m := tinyModel(t, "qwen2", safetensors.F32, 1)
	greedyOK := true
	x, err := New(m, Options{NumBlocks: 64, BlockSize: 4, OnLogits: func(s *engine.Sequence, pos int, logits []float32) {
		if s.Sampling().Temperature == 0 && pos < s.NumTokens() {
			greedyOK = greedyOK && s.Tokens()[pos] == argmax(logits)
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	e, err := engine.New(x.EngineConfig(engine.Config{MaxBatchedTokens: 64, MaxSeqs: 8}), engine.NewVirtualClock(), x, testPolicy{kind: handling.Preserve})
	if err != nil {
		t.Fatal(err)
	}
	prompt := []int32{3, 14, 15, 9, 26, 5}
	samplings := []engine.Sampling{{}, {Temperature: 4, Seed: 7}, {Temperature: 4, Seed: 7}, {Temperature: 4, Seed: 8}}
	calls := make([]*echo, len(samplings))
	for i, sp := range samplings {
		calls[i] = &echo{n: 24}
		if _, err := e.SubmitNow(engine.Request{Name: fmt.Sprint("c", i), Prompt: prompt, Sampling: sp, Controller: calls[i]}); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	greedy, seven, sevenAgain, eight := calls[0].toks, calls[1].toks, calls[2].toks, calls[3].toks
	if !greedyOK {
		t.Error("a greedy call's token is not the argmax of its logits")
	}
	if !slices.Equal(seven, sevenAgain) {
		t.Errorf("one seed, one prompt, different draws:\n%v\n%v", seven, sevenAgain)
	}
	if slices.Equal(seven, greedy) || slices.Equal(seven, eight) {
		t.Errorf("temperature 4 drew the greedy tokens or another seed's: greedy %v, seed 7 %v, seed 8 %v", greedy, seven, eight)
	}
}
