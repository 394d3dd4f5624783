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

// feedConversation decodes with a fresh Session and no prompt prefix: a
// stand-in for a served decoder.
type feedConversation struct {
	lm    *LoadedModel
	s     *Session
	turns *int
}

func (c *feedConversation) Turn(tokens []int32, maxNew int) ([]int32, error) {
	*c.turns++
	logits, err := c.s.Feed(tokens, false)
	if err != nil {
		return nil, err
	}
	return c.s.Generate(logits, c.lm.stop, maxNew)
}

func (c *feedConversation) Close() {}

// TestEvaluateServed checks that a model evaluated through another decoder
// (NewServed) plays the same dialogues, turn by turn, as through its own
// forward pass with the cached prompt prefix.
func TestEvaluateServed(t *testing.T) {
	tok, _ := smallTokenizer(t)
	cfg := Config{Vocab: (tok.VocabSize() + 15) &^ 15, Dim: 32, Layers: 1, Heads: 2, KVHeads: 1, FF: 48, MaxPos: 2048, RopeTheta: 10000, NormEps: 1e-5}
	w, err := NewWeights(cfg)
	if err != nil {
		t.Fatal(err)
	}
	w.Init(3)
	own := NewModel(w)
	lm := &LoadedModel{Model: own, Tok: tok, stop: map[int32]bool{}}
	turns := 0
	served, err := NewServed("stand-in", tok, func() (Conversation, error) {
		return &feedConversation{lm: lm, s: own.NewSession(), turns: &turns}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	lm.Data, lm.stop = served.Data, served.stop
	opt := EvalOptions{N: 4, Seed: 1, MaxNew: 8, Variant: 0, Workers: 1}
	want, err := lm.Evaluate(opt)
	if err != nil {
		t.Fatal(err)
	}
	got, err := served.Evaluate(opt)
	if err != nil {
		t.Fatal(err)
	}
	if turns < 4 {
		t.Fatalf("the served decoder played %d turns, want at least one per dialogue", turns)
	}
	for i := range want.Transcripts {
		a, b := want.Transcripts[i], got.Transcripts[i]
		if a.First != b.First || a.Final != b.Final || len(a.tokens) != len(b.tokens) {
			t.Errorf("dialogue %d: own forward %q/%q, served %q/%q", i, a.First, a.Final, b.First, b.Final)
		}
	}
}
