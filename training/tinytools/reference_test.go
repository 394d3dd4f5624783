package tinytools

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/pitstop-llm/pitstop/models/builtin"
	"github.com/pitstop-llm/pitstop/models/chat"
	"github.com/pitstop-llm/pitstop/models/llama"
)

// maxDiff returns the largest absolute difference between two logit
// matrices (rows of vocab values).
func maxDiff(t *testing.T, got []float32, want [][]float32, vocab int) float64 {
	t.Helper()
	if len(got) != len(want)*vocab {
		t.Fatalf("%d logits, want %d rows of %d", len(got), len(want), vocab)
	}
	var worst float64
	for p, row := range want {
		for j, v := range row {
			worst = max(worst, math.Abs(float64(got[p*vocab+j])-float64(v)))
		}
	}
	return worst
}

// TestMatchesLlamaReference saves a random model, loads it with
// models/llama (the Hugging Face reading of config.json and safetensors)
// and compares that package's reference forward with this package's, all
// tokens at once and one token at a time through the KV cache.
func TestMatchesLlamaReference(t *testing.T) {
	cfg := Config{Vocab: 48, Dim: 64, Layers: 2, Heads: 4, KVHeads: 2, FF: 96, MaxPos: 128, RopeTheta: 10000, NormEps: 1e-5}
	w, err := NewWeights(cfg)
	if err != nil {
		t.Fatal(err)
	}
	w.Init(5)
	r := rand.New(rand.NewPCG(5, 6))
	for i := range w.Flat { // larger than the init, so that every part matters
		w.Flat[i] += float32(r.NormFloat64() * 0.05)
	}
	dir := t.TempDir()
	if err := SaveModel(dir, w, nil, nil); err != nil {
		t.Fatal(err)
	}
	ref, err := llama.Load(dir, llama.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	toks := make([]int32, 40)
	for i := range toks {
		toks[i] = int32(r.IntN(cfg.Vocab))
	}
	want, err := ref.Reference(toks)
	if err != nil {
		t.Fatal(err)
	}
	back, err := LoadModelDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	m := NewModel(back)
	all, err := m.NewSession().Feed(toks, true)
	if err != nil {
		t.Fatal(err)
	}
	if d := maxDiff(t, all, want, cfg.Vocab); d > 1e-4 {
		t.Errorf("whole-prompt logits differ from models/llama's reference by %g", d)
	}
	s := m.NewSession()
	var steps []float32
	for _, tok := range toks {
		l, err := s.Feed([]int32{tok}, false)
		if err != nil {
			t.Fatal(err)
		}
		steps = append(steps, l...)
	}
	if d := maxDiff(t, steps, want, cfg.Vocab); d > 1e-4 {
		t.Errorf("token-by-token logits differ from models/llama's reference by %g", d)
	}
}

// TestShippedModelMatchesLlamaReference runs a real prompt through the
// shipped model with this package's forward and with models/llama's.
func TestShippedModelMatchesLlamaReference(t *testing.T) {
	dir := shippedModelDir(t)
	lm, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	ref, err := llama.Load(dir, llama.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := ref.Config.CheckTokenizer(lm.Tok.VocabSize()); err != nil {
		t.Fatal(err)
	}
	e, err := lm.Data.Gen.Example(1, StreamEval, 3, 0)
	if err != nil {
		t.Fatal(err)
	}
	prompt, err := e.PromptSpans(lm.Data.TS)
	if err != nil {
		t.Fatal(err)
	}
	toks, err := prompt.Encode(lm.Tok)
	if err != nil {
		t.Fatal(err)
	}
	toks = toks[:min(len(toks), 256)] // the float64 reference is slow
	want, err := ref.Reference(toks)
	if err != nil {
		t.Fatal(err)
	}
	got, err := lm.Model.NewSession().Feed(toks, true)
	if err != nil {
		t.Fatal(err)
	}
	d := maxDiff(t, got, want, ref.Config.VocabSize)
	t.Logf("%d-token prompt: largest logit difference %g", len(toks), d)
	if d > 1e-4 {
		t.Errorf("logits differ from models/llama's reference by %g", d)
	}
}

// TestShippedModelUsesCalculator plays one question through the tool loop
// with the shipped model: it must call the calculator with the expression
// and answer with the result.
func TestShippedModelUsesCalculator(t *testing.T) {
	dir := shippedModelDir(t)
	lm, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	e := Example{Variant: 0, Kind: KindCalculator, User: "What is 23 * 47?",
		Calls: []chat.ToolCall{{Name: "calculator", Arguments: `{"expression": "23 * 47"}`}}}
	tr, err := lm.Run(e, 120)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("first turn %q, tool results %q, final %q", tr.First, tr.Results, tr.Final)
	if !tr.ExactArgs || !strings.Contains(tr.Final, "1081") {
		t.Errorf("the model did not call the calculator with 23 * 47 and answer 1081")
	}
}

// shippedModelDir is the directory of the shipped tiny model
// (models/builtin, embedded in the binary).
func shippedModelDir(t *testing.T) string {
	t.Helper()
	dir, err := builtin.Dir(builtin.TinyTools)
	if err != nil {
		t.Fatal(err)
	}
	return dir
}
