package tokenizer

import (
	"slices"
	"testing"
)

func TestEncodeSpans(t *testing.T) {
	tok, err := TrainWithOptions([]string{"<|im_start|>user\nhello world<|im_end|>\n", "hello there, world"},
		TrainOptions{VocabSize: 300, Specials: []string{"<|im_start|>", "<|im_end|>"}, Pattern: PatternQwen2})
	if err != nil {
		t.Fatal(err)
	}
	start, _ := tok.TokenID("<|im_start|>")
	end, _ := tok.TokenID("<|im_end|>")
	text := "<|im_start|>user\nhi <|im_end|> there<|im_end|>\n"
	content := Span{Start: len("<|im_start|>user\n"), End: len("<|im_start|>user\nhi <|im_end|> there")}

	// No spans: Encode with special tokens.
	got, err := tok.EncodeSpans(text, nil)
	if err != nil || !slices.Equal(got, tok.Encode(text, true)) {
		t.Fatalf("no spans: %v %v", got, err)
	}
	// A cut span: markup, the content as plain text, markup.
	got, _ = tok.EncodeSpans(text, []Span{{Start: content.Start, End: content.End, Cut: true}})
	want := append(append(tok.Encode(text[:content.Start], true), tok.Encode(text[content.Start:content.End], false)...), tok.Encode(text[content.End:], true)...)
	if !slices.Equal(got, want) {
		t.Fatalf("cut span: got %v want %v", got, want)
	}
	// A guard span: the same specials as the cut span, no cut.
	guard, _ := tok.EncodeSpans(text, []Span{content})
	if tok.Decode(guard) != text {
		t.Fatalf("guard span decodes to %q", tok.Decode(guard))
	}
	n := 0
	for _, id := range guard {
		if id == start || id == end {
			n++
		}
	}
	if n != 2 {
		t.Fatalf("guard span: %d special tokens, want 2 (the markup's): %v", n, guard)
	}
	// A guard over text with no special-token string changes nothing.
	plain := "<|im_start|>user\nhello world<|im_end|>\n"
	g2, _ := tok.EncodeSpans(plain, []Span{{Start: 17, End: 28}})
	if !slices.Equal(g2, tok.Encode(plain, true)) {
		t.Fatalf("guard over plain text: %v want %v", g2, tok.Encode(plain, true))
	}
	// Bad spans are errors.
	for _, bad := range [][]Span{{{Start: 3, End: 2}}, {{Start: 0, End: len(text) + 1}}, {{Start: 5, End: 9}, {Start: 8, End: 10}}, {{Start: -1, End: 2}}} {
		if _, err := tok.EncodeSpans(text, bad); err == nil {
			t.Errorf("spans %v: no error", bad)
		}
	}
}
