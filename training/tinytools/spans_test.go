package tinytools

import (
	"slices"
	"strings"
	"testing"

	"github.com/pitstop-llm/pitstop/models/chat"
	"github.com/pitstop-llm/pitstop/models/tokenizer"
)

// legacyEncodeSpans is how prompts were tokenized when the shipped model was
// trained: the untrusted texts were found by searching the rendered text
// from the previous match. It returns where each text was found (-1: not
// found, or empty).
func legacyEncodeSpans(t *tokenizer.Tokenizer, text string, untrusted []string) ([]int32, []int) {
	var out []int32
	found := make([]int, len(untrusted))
	cur := 0
	for k, u := range untrusted {
		found[k] = -1
		if u == "" {
			continue
		}
		i := strings.Index(text[cur:], u)
		if i < 0 {
			continue
		}
		i += cur
		found[k] = i
		out = append(out, t.Encode(text[cur:i], true)...)
		out = append(out, t.Encode(u, false)...)
		cur = i + len(u)
	}
	return append(out, t.Encode(text[cur:], true)...), found
}

// TestSpanEncodingMatchesTraining checks that the tokenization from the
// templates' spans gives the shipped model the ids it was trained on: for
// every generated training dialogue where the old search found each
// untrusted text at its true place, the ids are identical. Where the search
// matched a text too early (a short tool result such as "5" inside the
// earlier tool call's arguments), the old tokens were wrong and the new
// ones differ; those dialogues are counted.
func TestSpanEncodingMatchesTraining(t *testing.T) {
	tok, err := tokenizer.Load(shippedModelDir(t))
	if err != nil {
		t.Fatal(err)
	}
	ts, err := NewToolset()
	if err != nil {
		t.Fatal(err)
	}
	g := NewGenerator(ts)
	n := 3000
	if testing.Short() {
		n = 300
	}
	same, misaligned, misalignedDiffer := 0, 0, 0
	for i := range n {
		e, err := g.Example(1, StreamTrain, i, -1)
		if err != nil {
			t.Fatal(err)
		}
		for _, full := range []bool{true, false} {
			var r chat.Rendered
			if full {
				r, _, _, err = e.render(ts)
			} else {
				r, err = e.PromptSpans(ts)
			}
			if err != nil {
				t.Fatal(err)
			}
			var untrusted []string
			if s := Variants[e.Variant].System; s != "" {
				untrusted = append(untrusted, s)
			}
			untrusted = append(untrusted, e.User)
			if full {
				untrusted = append(untrusted, e.Results...)
			}
			old, found := legacyEncodeSpans(tok, r.Text, untrusted)
			got, err := r.Encode(tok)
			if err != nil {
				t.Fatal(err)
			}
			var iso []int
			for _, s := range r.Spans {
				if s.Isolated() {
					iso = append(iso, s.Start)
				}
			}
			var want []int
			for k, u := range untrusted {
				if u != "" {
					want = append(want, found[k])
				}
			}
			if !slices.Equal(iso, want) {
				misaligned++
				if !slices.Equal(old, got) {
					misalignedDiffer++
				}
				continue
			}
			if !slices.Equal(old, got) {
				t.Fatalf("dialogue %d (variant %d, full %v): ids differ from the training tokenization\nold %v\nnew %v\ntext %q", i, e.Variant, full, old, got, r.Text)
			}
			same++
		}
	}
	t.Logf("%d encodings (%d dialogues, prompt and whole): %d identical; %d where the old search matched a text too early (%d of them tokenized differently now)",
		2*n, n, same, misaligned, misalignedDiffer)
	if same < 2*n*95/100 {
		t.Errorf("only %d of %d encodings compared equal", same, 2*n)
	}
}
