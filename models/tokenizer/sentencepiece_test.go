package tokenizer

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// spTokenizerJSON is a small SentencePiece-style tokenizer.json: <unk>, <s>
// and </s>, the 256 byte tokens, a few characters and merges toward
// "▁hello" and "▁world". pre is the pre_tokenizer, norm the normalizer.
func spTokenizerJSON(t *testing.T, norm, pre any) []byte {
	t.Helper()
	vocab := map[string]int{"<unk>": 0, "<s>": 1, "</s>": 2}
	for b := range 256 {
		vocab[fmt.Sprintf("<0x%02X>", b)] = 3 + b
	}
	next := 3 + 256
	for _, tok := range []string{"▁", "h", "e", "l", "o", "w", "r", "d", "i", "▁h", "▁he", "ll", "▁hell", "▁hello", "▁w", "or", "▁wor", "ld", "▁world", "▁▁"} {
		vocab[tok] = next
		next++
	}
	merges := []string{"▁ h", "▁h e", "l l", "▁he ll", "▁hell o", "▁ w", "o r", "▁w or", "l d", "▁wor ld", "▁ ▁"}
	added := []map[string]any{
		{"id": 0, "content": "<unk>", "special": true},
		{"id": 1, "content": "<s>", "special": true},
		{"id": 2, "content": "</s>", "special": true},
	}
	doc := map[string]any{
		"version": "1.0", "added_tokens": added, "normalizer": norm, "pre_tokenizer": pre,
		"decoder": map[string]any{"type": "Sequence", "decoders": []any{
			map[string]any{"type": "Replace", "pattern": map[string]any{"String": "▁"}, "content": " "},
			map[string]any{"type": "ByteFallback"}, map[string]any{"type": "Fuse"},
			map[string]any{"type": "Strip", "content": " ", "start": 1, "stop": 0},
		}},
		"model": map[string]any{"type": "BPE", "unk_token": "<unk>", "fuse_unk": true, "byte_fallback": true, "vocab": vocab, "merges": merges},
	}
	b, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// legacyNorm is the normalizer of Llama 2's and Mistral 7B's files.
var legacyNorm = map[string]any{"type": "Sequence", "normalizers": []any{
	map[string]any{"type": "Prepend", "prepend": "▁"},
	map[string]any{"type": "Replace", "pattern": map[string]any{"String": " "}, "content": "▁"},
}}

func spTokens(t *testing.T, tok *Tokenizer, ids []int32) []string {
	t.Helper()
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = tok.Token(id)
	}
	return out
}

func TestSentencePieceEncode(t *testing.T) {
	legacy, err := Parse(spTokenizerJSON(t, legacyNorm, nil))
	if err != nil {
		t.Fatal(err)
	}
	first, err := Parse(spTokenizerJSON(t, nil, map[string]any{"type": "Metaspace", "replacement": "▁", "prepend_scheme": "first", "split": false}))
	if err != nil {
		t.Fatal(err)
	}
	always, err := Parse(spTokenizerJSON(t, nil, map[string]any{"type": "Metaspace", "replacement": "▁", "prepend_scheme": "always", "split": true}))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		tok   *Tokenizer
		text  string
		want  []string
		plain bool // special tokens as text
	}{
		{"prepend and merges", legacy, "hello world", []string{"▁hello", "▁world"}, false},
		{"space run", legacy, "hello  world", []string{"▁hello", "▁", "▁world"}, false},
		{"leading space keeps the prepend", legacy, " hello", []string{"▁", "▁hello"}, false},
		// A character outside the vocabulary falls back to its UTF-8 bytes.
		{"byte fallback", legacy, "hé", []string{"▁h", "<0xC3>", "<0xA9>"}, false},
		{"emoji bytes", legacy, "😀", []string{"▁", "<0xF0>", "<0x9F>", "<0x98>", "<0x80>"}, false},
		// Each run after an added token is normalized on its own: it gets
		// the prepend too (the legacy files' behaviour).
		{"legacy prepend after an added token", legacy, "hello<s>world", []string{"▁hello", "<s>", "▁world"}, false},
		{"special token as text", legacy, "<s>", []string{"▁", "<0x3C>", "<0x73>", "<0x3E>"}, true},
		{"first: only at the text's start", first, "hello<s>world", []string{"▁hello", "<s>", "w", "or", "ld"}, false},
		{"first: none after a leading added token", first, "<s>hello", []string{"<s>", "h", "e", "ll", "o"}, false},
		{"first: a leading space is the prepend", first, " hello", []string{"▁hello"}, false},
		{"always: after an added token", always, "hello<s>world", []string{"▁hello", "<s>", "▁world"}, false},
		{"always with split: no merge across words", always, "hello world", []string{"▁hello", "▁world"}, false},
	} {
		got := spTokens(t, c.tok, c.tok.Encode(c.text, !c.plain))
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: %q -> %q, want %q", c.name, c.text, got, c.want)
		}
	}
}

func TestSentencePieceDecode(t *testing.T) {
	tok, err := Parse(spTokenizerJSON(t, legacyNorm, nil))
	if err != nil {
		t.Fatal(err)
	}
	text := "hello wörld 😀 <s>"
	ids := tok.Encode(text, false)
	// The prepended "▁" decodes as a space: the text follows it exactly.
	if got := tok.Decode(ids); got != " "+text {
		t.Fatalf("Decode = %q, want %q", got, " "+text)
	}
	d := tok.NewDecoder(false)
	var sb strings.Builder
	for _, id := range ids {
		sb.WriteString(d.Add(id))
	}
	sb.WriteString(d.Flush())
	if sb.String() != " "+text {
		t.Fatalf("streaming decode = %q, want %q", sb.String(), " "+text)
	}
}

// TestSentencePieceSpans checks that EncodeSpans prepends "▁" only where a
// whole-text encoding would (the text's start, after an added token), never
// at a span's edge inside template text, and that a user's "</s>" stays text.
func TestSentencePieceSpans(t *testing.T) {
	tok, err := Parse(spTokenizerJSON(t, legacyNorm, nil))
	if err != nil {
		t.Fatal(err)
	}
	text := "<s>hello </s>world</s>"
	start := strings.Index(text, "world")
	user := "world</s>"
	ids, err := tok.EncodeSpans(text, []Span{{Start: start, End: start + len(user), Cut: true}})
	if err != nil {
		t.Fatal(err)
	}
	got := spTokens(t, tok, ids)
	want := []string{"<s>", "▁hello", "▁", "</s>", "▁world", "<0x3C>", "<0x2F>", "<0x73>", "<0x3E>"}
	if !slices.Equal(got, want) {
		t.Fatalf("EncodeSpans = %q, want %q", got, want)
	}
	// A span that starts inside template text gets no "▁" of its own.
	text = "hello world"
	ids, err = tok.EncodeSpans(text, []Span{{Start: 6, End: 11, Cut: true}})
	if err != nil {
		t.Fatal(err)
	}
	if got := tok.Decode(ids); got != " "+text {
		t.Fatalf("EncodeSpans mid-text decodes to %q, want %q", got, " "+text)
	}
}

func TestSentencePieceSaveLoad(t *testing.T) {
	tok, err := Parse(spTokenizerJSON(t, legacyNorm, nil))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "tokenizer.json")
	if err := tok.Save(path); err != nil {
		t.Fatal(err)
	}
	back, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, text := range []string{"hello wörld", "😀<s>hi", "  x  "} {
		if a, b := tok.Encode(text, true), back.Encode(text, true); !slices.Equal(a, b) {
			t.Errorf("%q: saved and loaded %v, original %v", text, b, a)
		}
	}
}

func TestSentencePieceMissingByteToken(t *testing.T) {
	var doc map[string]any
	if err := json.Unmarshal(spTokenizerJSON(t, legacyNorm, nil), &doc); err != nil {
		t.Fatal(err)
	}
	delete(doc["model"].(map[string]any)["vocab"].(map[string]any), "<0x41>")
	b, _ := json.Marshal(doc)
	if _, err := Parse(b); err == nil || !strings.Contains(err.Error(), "lacks <0x41>") {
		t.Fatalf("err = %v, want it to name the missing byte token", err)
	}
}
