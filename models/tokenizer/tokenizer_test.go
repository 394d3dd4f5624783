package tokenizer

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
)

// handMerges is a tiny merge list over the 256 byte symbols (ids = byte
// values). Ranks: 0 "Ġ t", 1 "h e", 2 "Ġt he", 3 "l l", 4 "e ll", 5 "h ell",
// 6 "hell o".
var handMerges = [][2]string{{"Ġ", "t"}, {"h", "e"}, {"Ġt", "he"}, {"l", "l"}, {"e", "ll"}, {"h", "ell"}, {"hell", "o"}}

// handTokenizerJSON builds a real-format tokenizer.json: 256 byte symbols,
// the merges above (ids 256..262), "<|endoftext|>" (263, special) and
// "<tool_call>" (264, not special).
func handTokenizerJSON(t testing.TB, stringMerges, ignoreMerges bool) []byte {
	t.Helper()
	vocab := map[string]int{}
	for b := 0; b < 256; b++ {
		vocab[string(byteToRune[b])] = b
	}
	var merges []any
	for i, m := range handMerges {
		vocab[m[0]+m[1]] = 256 + i
		if stringMerges {
			merges = append(merges, m[0]+" "+m[1])
		} else {
			merges = append(merges, []string{m[0], m[1]})
		}
	}
	vocab["<|endoftext|>"] = 263
	doc := map[string]any{
		"version":    "1.0",
		"truncation": nil,
		"padding":    nil,
		"added_tokens": []any{
			map[string]any{"id": 263, "content": "<|endoftext|>", "single_word": false, "lstrip": false, "rstrip": false, "normalized": false, "special": true},
			map[string]any{"id": 264, "content": "<tool_call>", "single_word": false, "lstrip": false, "rstrip": false, "normalized": false, "special": false},
		},
		"normalizer":     nil,
		"pre_tokenizer":  map[string]any{"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true, "use_regex": true},
		"post_processor": nil,
		"decoder":        map[string]any{"type": "ByteLevel", "add_prefix_space": true, "trim_offsets": true, "use_regex": true},
		"model": map[string]any{
			"type": "BPE", "dropout": nil, "unk_token": nil, "continuing_subword_prefix": nil,
			"end_of_word_suffix": nil, "fuse_unk": false, "byte_fallback": false,
			"ignore_merges": ignoreMerges, "vocab": vocab, "merges": merges,
		},
	}
	data, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func handTokenizer(t testing.TB) *Tokenizer {
	t.Helper()
	tok, err := Parse(handTokenizerJSON(t, false, false))
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func ids(v ...int32) []int32 { return v }

func TestEncodeByHand(t *testing.T) {
	for _, stringMerges := range []bool{false, true} {
		tok, err := Parse(handTokenizerJSON(t, stringMerges, false))
		if err != nil {
			t.Fatal(err)
		}
		cases := []struct {
			in   string
			want []int32
		}{
			// "hello": he (rank 1), then ll (3); "e ll" never applies since e
			// was merged first, so: he, ll, o.
			{"hello", ids(257, 259, 'o')},
			// " the": Ġt (0), he (1), Ġthe (2).
			{"hello the", ids(257, 259, 'o', 258)},
			// "yell": ll (3), then ell (4).
			{"yell", ids('y', 260)},
			// "shell": he, then ll: s, he, ll.
			{"shell", ids('s', 257, 259)},
			{"tell", ids('t', 260)},
			{"", nil},
			{"é", ids(0xc3, 0xa9)},
		}
		for _, c := range cases {
			got := tok.Encode(c.in, true)
			if len(got) == 0 && len(c.want) == 0 {
				continue
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("stringMerges=%v Encode(%q) = %v, want %v", stringMerges, c.in, got, c.want)
			}
		}
	}
}

func TestIgnoreMerges(t *testing.T) {
	tok, err := Parse(handTokenizerJSON(t, false, true))
	if err != nil {
		t.Fatal(err)
	}
	// "hello" is itself in the vocab (262): with ignore_merges it is taken whole.
	if got := tok.Encode("hello", false); !reflect.DeepEqual(got, ids(262)) {
		t.Fatalf("ignore_merges Encode(hello) = %v, want [262]", got)
	}
}

func TestSpecialTokens(t *testing.T) {
	tok := handTokenizer(t)
	text := "hi<|endoftext|><tool_call>"
	with := tok.Encode(text, true)
	if want := ids('h', 'i', 263, 264); !reflect.DeepEqual(with, want) {
		t.Fatalf("allowSpecial Encode = %v, want %v", with, want)
	}
	without := tok.Encode(text, false)
	for _, id := range without {
		if id == 263 {
			t.Fatalf("special token matched with allowSpecial=false: %v", without)
		}
	}
	if without[len(without)-1] != 264 {
		t.Fatalf("non-special added token must always match: %v", without)
	}
	for _, e := range [][]int32{with, without} {
		if got := tok.Decode(e); got != text {
			t.Fatalf("Decode = %q, want %q", got, text)
		}
	}
	if got := tok.DecodeSkipSpecial(with); got != "hi<tool_call>" {
		t.Fatalf("DecodeSkipSpecial = %q", got)
	}
	if id, ok := tok.TokenID("<|endoftext|>"); !ok || id != 263 || !tok.IsSpecial(263) || tok.IsSpecial(264) {
		t.Fatalf("TokenID/IsSpecial wrong: %d %v", id, ok)
	}
	if id, ok := tok.TokenID("Ġthe"); !ok || id != 258 {
		t.Fatalf("TokenID(Ġthe) = %d, %v", id, ok)
	}
	if tok.VocabSize() != 265 {
		t.Fatalf("VocabSize = %d, want 265", tok.VocabSize())
	}
	if _, ok := tok.EOS(); ok {
		t.Fatal("EOS known without a tokenizer_config.json")
	}
}

func TestAddedTokenStripAndSingleWord(t *testing.T) {
	toks := []AddedToken{
		{ID: 1, Content: "<mask>", LStrip: true, RStrip: true},
		{ID: 2, Content: "cat", SingleWord: true},
		{ID: 3, Content: "<mask>long"},
	}
	m := newAddedMatcher(toks, true)
	got := m.split("a  <mask>  b concat cat <mask>longer")
	want := []segment{{"a", -1}, {"<mask>", 1}, {"b con", -1}, {"cat", -1}, {" ", -1}, {"cat", 2}, {" ", -1}, {"<mask>long", 3}, {"er", -1}}
	// Merge adjacent plain runs for comparison.
	var norm []segment
	for _, s := range got {
		if n := len(norm); n > 0 && s.id < 0 && norm[n-1].id < 0 {
			norm[n-1].text += s.text
			continue
		}
		norm = append(norm, s)
	}
	var wantNorm []segment
	for _, s := range want {
		if n := len(wantNorm); n > 0 && s.id < 0 && wantNorm[n-1].id < 0 {
			wantNorm[n-1].text += s.text
			continue
		}
		wantNorm = append(wantNorm, s)
	}
	if !reflect.DeepEqual(norm, wantNorm) {
		t.Fatalf("split = %q\nwant    %q", norm, wantNorm)
	}
}

func TestStreamingDecoder(t *testing.T) {
	tok := handTokenizer(t)
	text := "hé 😀 the<|endoftext|>€"
	enc := tok.Encode(text, true)
	d := tok.NewDecoder(false)
	var sb strings.Builder
	for _, id := range enc {
		piece := d.Add(id)
		if !isValidUTF8(piece) {
			t.Fatalf("Add emitted partial UTF-8 %q", piece)
		}
		sb.WriteString(piece)
	}
	sb.WriteString(d.Flush())
	if sb.String() != text {
		t.Fatalf("streamed %q, want %q", sb.String(), text)
	}
	// "😀" is 4 bytes = 4 byte tokens: nothing comes out until the last.
	d = tok.NewDecoder(true)
	emoji := tok.Encode("😀", false)
	for i, id := range emoji {
		out := d.Add(id)
		if (i < len(emoji)-1) != (out == "") {
			t.Fatalf("token %d of emoji gave %q", i, out)
		}
	}
	if out := d.Add(263); out != "" {
		t.Fatalf("skipSpecial decoder emitted %q", out)
	}
	// A cut-short character comes out as U+FFFD on Flush; an impossible byte at once.
	d.Add(0xe2)
	if out := d.Flush(); out != "\uFFFD" {
		t.Fatalf("Flush = %q", out)
	}
	if out := d.Add(0xff); out != "\uFFFD" {
		t.Fatalf("invalid byte = %q", out)
	}
}

func isValidUTF8(s string) bool { return strings.ToValidUTF8(s, "\x00") == s }

func TestLoadErrors(t *testing.T) {
	good := handTokenizerJSON(t, true, false)
	var doc map[string]any
	if err := json.Unmarshal(good, &doc); err != nil {
		t.Fatal(err)
	}
	mutate := func(f func(doc, model map[string]any)) []byte {
		var d map[string]any
		_ = json.Unmarshal(good, &d)
		f(d, d["model"].(map[string]any))
		b, _ := json.Marshal(d)
		return b
	}
	cases := []struct {
		name  string
		data  []byte
		want  string
		unsup bool
	}{
		{"malformed", []byte(`{"model": {"type": "BPE", "vocab": {`), "malformed tokenizer.json", false},
		{"no model", []byte(`{"version": "1.0"}`), "no model section", false},
		{"wordpiece", mutate(func(_, m map[string]any) { m["type"] = "WordPiece" }), `model type "WordPiece"`, true},
		{"unknown merge token", mutate(func(_, m map[string]any) {
			m["merges"] = append(m["merges"].([]any), "Ġthe zzz")
		}), `references token "zzz", which is not in the vocab`, false},
		{"merge result missing", mutate(func(_, m map[string]any) {
			m["merges"] = append(m["merges"].([]any), "a b")
		}), `makes "ab", which is not in the vocab`, false},
		{"bad merge string", mutate(func(_, m map[string]any) {
			m["merges"] = append(m["merges"].([]any), "a b c")
		}), "want two tokens", false},
		{"duplicate id", mutate(func(_, m map[string]any) {
			m["vocab"].(map[string]any)["dup"] = 5
		}), "vocab id 5 is given to both", false},
		// Without a ByteLevel step the vocabulary is read as SentencePiece
		// style, which a ByteLevel decoder contradicts.
		{"metaspace with a byte-level decoder", mutate(func(d, _ map[string]any) {
			d["pre_tokenizer"] = map[string]any{"type": "Metaspace"}
		}), `decoder type "ByteLevel" is not supported for a SentencePiece-style vocabulary`, true},
		{"no byte level", mutate(func(d, _ map[string]any) {
			d["pre_tokenizer"] = map[string]any{"type": "Digits", "individual_digits": true}
		}), `decoder type "ByteLevel" is not supported for a SentencePiece-style vocabulary`, true},
		{"byte fallback with byte level", mutate(func(_, m map[string]any) { m["byte_fallback"] = true }), "byte_fallback with a ByteLevel pre-tokenizer", true},
		{"metaspace second", mutate(func(d, _ map[string]any) {
			d["decoder"] = nil
			d["pre_tokenizer"] = map[string]any{"type": "Sequence", "pretokenizers": []any{
				map[string]any{"type": "Digits"}, map[string]any{"type": "Metaspace"},
			}}
		}), "Metaspace after another step", true},
		{"metaspace scheme", mutate(func(d, _ map[string]any) {
			d["decoder"] = nil
			d["pre_tokenizer"] = map[string]any{"type": "Metaspace", "prepend_scheme": "sometimes"}
		}), `prepend_scheme "sometimes"`, true},
		{"replace regex", mutate(func(d, _ map[string]any) {
			d["normalizer"] = map[string]any{"type": "Replace", "pattern": map[string]any{"Regex": " +"}, "content": "_"}
		}), "only a String pattern", true},
		{"bad regex", mutate(func(d, _ map[string]any) {
			d["pre_tokenizer"] = map[string]any{"type": "Sequence", "pretokenizers": []any{
				map[string]any{"type": "Split", "pattern": map[string]any{"Regex": "(unclosed"}, "behavior": "Isolated"},
				map[string]any{"type": "ByteLevel", "use_regex": false},
			}}
		}), "compile pattern", true},
	}
	for _, c := range cases {
		_, err := Parse(c.data)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want it to mention %q", c.name, err, c.want)
			continue
		}
		if errors.Is(err, ErrUnsupported) != c.unsup {
			t.Errorf("%s: errors.Is(ErrUnsupported) = %v", c.name, !c.unsup)
		}
	}
}

func TestLoadDirWithConfigs(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "tokenizer.json"), handTokenizerJSON(t, false, false), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := `{"bos_token": null, "eos_token": {"content": "<|endoftext|>", "special": true}}`
	if err := os.WriteFile(filepath.Join(dir, "tokenizer_config.json"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "generation_config.json"), []byte(`{"eos_token_id": [263, 264]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	tok, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if id, ok := tok.EOS(); !ok || id != 263 {
		t.Fatalf("EOS = %d %v", id, ok)
	}
	if _, ok := tok.BOS(); ok {
		t.Fatal("BOS should be unset")
	}
	if got := tok.EOSIDs(); !reflect.DeepEqual(got, ids(263, 264)) {
		t.Fatalf("EOSIDs = %v", got)
	}
	if err := os.WriteFile(filepath.Join(dir, "tokenizer_config.json"), []byte(`{"eos_token": "<nope>"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(filepath.Join(dir, "tokenizer.json")); err == nil || !strings.Contains(err.Error(), `eos token "<nope>" is not in the vocabulary`) {
		t.Fatalf("bad eos: err = %v", err)
	}
}

var trainCorpus = []string{
	"The quick brown fox jumps over the lazy dog. The dog sleeps.",
	"<|im_start|>user\nWhat's the weather in Paris?<|im_end|>\n<|im_start|>assistant\n",
	"<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>",
	"Numbers: 12345 67890 3.14159, dates 2024-07-26.",
	"Unicode: héllo wörld, 日本語のテキスト, emoji 😀🎉.",
	"def f(x):\n    return x * 2\n\n\nprint(f(21))\n",
}

var (
	trainedOnce sync.Once
	trained     *Tokenizer
	trainedErr  error
)

func trainedTokenizer(t testing.TB) *Tokenizer {
	t.Helper()
	trainedOnce.Do(func() {
		var corpus []string
		for i := 0; i < 20; i++ {
			corpus = append(corpus, trainCorpus...)
		}
		trained, trainedErr = Train(corpus, 400, []string{"<|endoftext|>", "<|im_start|>", "<|im_end|>"})
	})
	if trainedErr != nil {
		t.Fatal(trainedErr)
	}
	return trained
}

func TestTrainSaveLoad(t *testing.T) {
	tok := trainedTokenizer(t)
	if tok.VocabSize() > 400 || tok.VocabSize() <= 259 {
		t.Fatalf("VocabSize = %d, want in (259, 400]", tok.VocabSize())
	}
	for i, s := range []string{"<|endoftext|>", "<|im_start|>", "<|im_end|>"} {
		if id, ok := tok.TokenID(s); !ok || id != int32(i) || !tok.IsSpecial(id) {
			t.Fatalf("special %q: id %d ok %v", s, id, ok)
		}
	}
	// Frequent words are single tokens after training.
	if got := tok.Encode(" the", false); len(got) != 1 {
		t.Fatalf("Encode(\" the\") = %v, want one token", got)
	}
	if err := tok.SetSpecialTokens("", "<|endoftext|>"); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := tok.SaveDir(dir); err != nil {
		t.Fatal(err)
	}
	back, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if id, ok := back.EOS(); !ok || id != 0 {
		t.Fatalf("EOS after SaveDir/Load = %d %v", id, ok)
	}
	if back.VocabSize() != tok.VocabSize() {
		t.Fatalf("VocabSize %d after reload, was %d", back.VocabSize(), tok.VocabSize())
	}
	for _, s := range append(trainCorpus, "unseen text: Zebra 999 ??", "") {
		a, b := tok.Encode(s, true), back.Encode(s, true)
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("encodings differ after reload for %q:\n%v\n%v", s, a, b)
		}
		if got := back.Decode(b); got != s {
			t.Fatalf("round trip %q -> %q", s, got)
		}
	}
	// Saving the reloaded tokenizer again gives the same file.
	first, _ := tok.MarshalJSON()
	second, _ := back.MarshalJSON()
	if string(first) != string(second) {
		t.Fatal("Save is not stable across a reload")
	}
}

func TestTrainErrors(t *testing.T) {
	if _, err := Train([]string{"x"}, 100, nil); err == nil {
		t.Fatal("vocab below 256 accepted")
	}
	if _, err := Train([]string{"x"}, 300, []string{"<a>", "<a>"}); err == nil {
		t.Fatal("duplicate special accepted")
	}
}

func TestNormalizerNFC(t *testing.T) {
	data := handTokenizerJSON(t, false, false)
	var d map[string]any
	_ = json.Unmarshal(data, &d)
	d["normalizer"] = map[string]any{"type": "NFC"}
	data, _ = json.Marshal(d)
	tok, err := Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	// "e" + combining acute composes to U+00E9 (two bytes c3 a9).
	if got := tok.Encode("e\u0301", false); !reflect.DeepEqual(got, ids(0xc3, 0xa9)) {
		t.Fatalf("NFC Encode = %v", got)
	}
}

func TestSplitBehaviors(t *testing.T) {
	m := literalMatcher{"-"}
	for _, c := range []struct {
		behavior string
		invert   bool
		want     []string
	}{
		{"Isolated", false, []string{"a", "-", "b", "-", "-", "c"}},
		{"Removed", false, []string{"a", "b", "c"}},
		{"MergedWithPrevious", false, []string{"a-", "b-", "-", "c"}},
		{"MergedWithNext", false, []string{"a", "-b", "-", "-c"}},
		{"Contiguous", false, []string{"a", "-", "b", "--", "c"}},
		{"Removed", true, []string{"-", "-", "-"}},
	} {
		got := splitStep{m: m, behavior: c.behavior, invert: c.invert}.splitOne("a-b--c")
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s invert=%v: %q, want %q", c.behavior, c.invert, got, c.want)
		}
	}
}

func roundTripCheck(t *testing.T, tok *Tokenizer, s string) {
	for _, allow := range []bool{false, true} {
		enc := tok.Encode(s, allow)
		if got := tok.Decode(enc); got != s {
			t.Fatalf("allowSpecial=%v: Decode(Encode(%q)) = %q (ids %v)", allow, s, got, enc)
		}
	}
	// The streaming decoder agrees with Decode on valid text.
	if isValidUTF8(s) {
		d := tok.NewDecoder(false)
		var sb strings.Builder
		for _, id := range tok.Encode(s, true) {
			sb.WriteString(d.Add(id))
		}
		sb.WriteString(d.Flush())
		if sb.String() != s {
			t.Fatalf("streamed %q, want %q", sb.String(), s)
		}
	}
}

func FuzzRoundTrip(f *testing.F) {
	for _, s := range append(append([]string{}, trainCorpus...), patternSeeds...) {
		f.Add(s)
	}
	f.Add("<|endoftext|><|im_end|><tool_call>")
	f.Add("\x00\x01\x7f\x80\xff")
	hand := handTokenizer(f)
	tr := trainedTokenizer(f)
	f.Fuzz(func(t *testing.T, s string) {
		roundTripCheck(t, hand, s)
		roundTripCheck(t, tr, s)
	})
}

func ExampleTokenizer_Encode() {
	tok, _ := Train([]string{"hello hello hello world"}, 270, []string{"<eos>"})
	enc := tok.Encode("hello hello<eos>", true)
	fmt.Println(len(enc), tok.Decode(enc))
	// Output: 3 hello hello<eos>
}
