package tinytools

import (
	"bytes"
	"strings"
	"testing"

	"github.com/pitstop-llm/pitstop/models/llama"
)

// TestEvaluatePipeline runs the evaluation loop end to end on an untrained
// tiny model: prompts, decoding, parsing, the reference replay, the report.
func TestEvaluatePipeline(t *testing.T) {
	tok, _ := smallTokenizer(t)
	cfg := Config{Vocab: (tok.VocabSize() + 15) &^ 15, Dim: 32, Layers: 1, Heads: 2, KVHeads: 1, FF: 48, MaxPos: 2048, RopeTheta: 10000, NormEps: 1e-5}
	w, err := NewWeights(cfg)
	if err != nil {
		t.Fatal(err)
	}
	w.Init(2)
	dir := t.TempDir()
	if err := SaveModel(dir, w, tok, nil); err != nil {
		t.Fatal(err)
	}
	if err := SaveTokenizer(tok, dir); err != nil {
		t.Fatal(err)
	}
	lm, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	ref, err := llama.Load(dir, llama.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	lm.Reference = ref.Reference
	rep, err := lm.Evaluate(EvalOptions{N: 3, Seed: 1, MaxNew: 8, RefN: 1, Variant: 0})
	if err != nil {
		t.Fatal(err)
	}
	if rep.N != 3 || rep.NeedTool+rep.NoTool != 3 || len(rep.Transcripts) != 3 {
		t.Fatalf("report counts %+v", rep)
	}
	if rep.RefChecked != 1 || rep.RefAgree != 1 || rep.RefMaxDiff > 1e-4 {
		t.Errorf("reference replay: %d checked, %d agree, max diff %g", rep.RefChecked, rep.RefAgree, rep.RefMaxDiff)
	}
	var out bytes.Buffer
	rep.Print(&out)
	if !strings.Contains(out.String(), "well-formed tool call with the right tool") {
		t.Errorf("report:\n%s", out.String())
	}
}
