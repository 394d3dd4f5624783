package tinytools

import (
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/pitstop-llm/pitstop/models/chat"
	"github.com/pitstop-llm/pitstop/models/tokenizer"
)

var (
	testTokOnce sync.Once
	testTok     *tokenizer.Tokenizer
	testTS      *Toolset
)

// smallTokenizer is a tokenizer trained once per test binary on a few
// hundred dialogues.
func smallTokenizer(t *testing.T) (*tokenizer.Tokenizer, *Toolset) {
	t.Helper()
	testTokOnce.Do(func() {
		ts, err := NewToolset()
		if err != nil {
			t.Fatal(err)
		}
		tok, err := TrainTokenizer(ts, 1, 300, 400)
		if err != nil {
			t.Fatal(err)
		}
		testTok, testTS = tok, ts
	})
	if testTok == nil {
		t.Fatal("no tokenizer")
	}
	return testTok, testTS
}

func TestGeneratorDeterministicAndValid(t *testing.T) {
	ts, err := NewToolset()
	if err != nil {
		t.Fatal(err)
	}
	g := NewGenerator(ts)
	kinds := map[string]int{}
	for i := range 800 {
		e, err := g.Example(7, StreamTrain, i, -1)
		if err != nil {
			t.Fatal(err) // a generated call the tool refused
		}
		again, _ := g.Example(7, StreamTrain, i, -1)
		if !reflect.DeepEqual(e, again) {
			t.Fatalf("example %d differs between two generations", i)
		}
		kinds[e.Kind]++
		if len(e.Calls) != len(e.Results) || len(e.Results) != len(e.Keys) {
			t.Fatalf("example %d: %d calls, %d results, %d keys", i, len(e.Calls), len(e.Results), len(e.Keys))
		}
		for j, k := range e.Keys {
			if !strings.Contains(e.Answer, k) {
				t.Fatalf("example %d: answer %q lacks result key %q", i, e.Answer, k)
			}
			if !Variants[e.Variant].has(e.Calls[j].Name) {
				t.Fatalf("example %d calls %s, not offered by variant %d", i, e.Calls[j].Name, e.Variant)
			}
		}
		text, pl, spans, err := e.Render(ts)
		if err != nil {
			t.Fatal(err)
		}
		want := 1
		if len(e.Calls) > 0 {
			want = 2
		}
		if len(spans) != want {
			t.Fatalf("example %d: %d assistant spans, want %d:\n%s", i, len(spans), want, text)
		}
		if len(e.Calls) > 0 {
			// The first turn parses back into exactly the expected calls.
			first := strings.TrimSuffix(text[spans[0].Start:spans[0].End], "<|im_end|>")
			res := chat.Parse(chat.NewQwen25(), first)
			if len(res.ToolCalls) != len(e.Calls) || len(res.Errors) > 0 {
				t.Fatalf("example %d: first turn %q parses into %+v", i, first, res)
			}
			for j, c := range res.ToolCalls {
				if c.Name != e.Calls[j].Name || !sameArgs(c.Arguments, e.Calls[j].Arguments) {
					t.Fatalf("example %d: parsed call %+v, want %+v", i, c, e.Calls[j])
				}
			}
		}
		p, _ := e.Prompt(ts)
		if !strings.HasPrefix(text, p[:pl]) || !strings.HasPrefix(p, text[:pl]) {
			t.Fatalf("example %d: prompt and dialogue do not share the prefix", i)
		}
	}
	for _, k := range []string{KindCalculator, KindCurrentTime, KindUnitConvert, KindMulti, KindNone} {
		if kinds[k] < 40 {
			t.Errorf("only %d %s dialogues in 800", kinds[k], k)
		}
	}
	t.Logf("kinds: %v", kinds)
	other, _ := g.Example(7, StreamEval, 0, -1)
	first, _ := g.Example(7, StreamTrain, 0, -1)
	if reflect.DeepEqual(other, first) {
		t.Error("the held-out stream repeats the training stream")
	}
}

// TestEncodeMarksAssistantTokens checks that the trained positions are
// exactly the assistant's turns and that the token sequence starts with
// the variant's shared prefix.
func TestEncodeMarksAssistantTokens(t *testing.T) {
	tok, ts := smallTokenizer(t)
	d := NewData(tok, ts)
	skipped := 0
	for i := range 150 {
		e, err := d.Gen.Example(3, StreamTrain, i, -1)
		if err != nil {
			t.Fatal(err)
		}
		enc, err := d.Encode(e)
		if err == errPrefixMismatch {
			skipped++
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		text, pl, spans, _ := e.Render(ts)
		var want strings.Builder
		for _, s := range spans {
			want.WriteString(text[s.Start:s.End])
		}
		if got := tok.Decode(enc.Targets); got != want.String() {
			t.Fatalf("example %d: trained tokens decode to %q, want %q", i, got, want.String())
		}
		prefix, _ := d.PrefixTokens(e.Variant)
		if got := tok.Decode(prefix) + tok.Decode(enc.Tokens); got != text {
			t.Fatalf("example %d: tokens decode to %q", i, got)
		}
		_ = pl
	}
	if skipped > 2 {
		t.Errorf("%d of 150 dialogues do not tokenize with their variant's prefix", skipped)
	}
}
