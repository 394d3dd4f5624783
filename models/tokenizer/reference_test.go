package tokenizer_test

import (
	"compress/gzip"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/pitstop-llm/pitstop/models/chat"
	"github.com/pitstop-llm/pitstop/models/chat/hfref"
	"github.com/pitstop-llm/pitstop/models/tokenizer"
)

// referenceTexts are texts whose tokens are compared: prose in several
// scripts, code, numbers, runs of spaces and newlines, emoji, contractions,
// special tokens written in the text, prompts rendered with the model's
// chat template, and random mixes of all of these.
func referenceTexts(t *testing.T, template, bos, eos string) []string {
	texts := []string{
		"Hello, world! What's the weather in Paris today?",
		"naïve café — Zürich, São Paulo, Kraków; 東京の天気は？ 北京今天天气怎么样？ Привет, мир! مرحبا بالعالم",
		"func main() {\n\tfmt.Println(\"hi\")\n}\n\n\n    x := 12345678 + 3.14159e-10\n",
		"I'm sure they'll say we've DONE it, you'd THINK it's fine, isn't it?",
		"   leading and trailing   \n\n\n\t\ttabs\r\nwindows\r\n",
		"emoji 👩‍💻🚀🇫🇷 and symbols ©®™ ∑∫√ ≤≥ ←→",
		"<|im_start|>user\nhi<|im_end|>\n<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\nhi<|eot_id|>",
		"<s>[INST]hi[/INST]</s>[TOOL_CALLS][{\"name\": \"f\"}][AVAILABLE_TOOLS] [/AVAILABLE_TOOLS]",
		"path/to/file.go: a/b//c https://example.com/x?y=1 ALLCaps CamelCaseWord mixedUPPERlower",
		"<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>",
		"1 22 333 4444 55555 666666 1234567890 3,000,000.50 2026-11-26",
		"<|system|>You are a bot.<|tool|>  [{\"name\": \"f\"}]\n<|/tool|>\t<|end|>\n\n<|user|>  hi <|end|><|assistant|>\n<|tool_call|> [{\"name\": \"f\"}]  <|/tool_call|>\r\n<|tool_response|>x<|tag|> <|endofprompt|>",
	}
	if template != "" {
		src, err := os.ReadFile(filepath.Join("..", "chat", "testdata", "templates", template))
		if err != nil {
			t.Fatal(err)
		}
		j, err := chat.NewJinja(string(src), chat.JinjaOptions{Vars: map[string]any{"date_string": "26 Nov 2026"}, EOS: eos, BOS: bos})
		if err != nil {
			t.Fatal(err)
		}
		msgs := []chat.Message{
			{Role: chat.RoleSystem, Content: "You are a bot."},
			{Role: chat.RoleUser, Content: "Weather in Paris?"},
			{Role: chat.RoleAssistant, ToolCalls: []chat.ToolCall{{ID: "c1", Name: "get_weather", Arguments: `{"city": "Paris"}`}}},
			{Role: chat.RoleTool, ToolCallID: "c1", Name: "get_weather", Content: "18°C, clear"},
		}
		tools := []chat.Tool{{Name: "get_weather", Description: "Get the weather", Parameters: []byte(`{"type":"object","properties":{"city":{"type":"string","description":"City"}},"required":["city"]}`)}}
		p, err := j.Render(msgs, tools, true)
		if err != nil {
			t.Fatal(err)
		}
		texts = append(texts, p)
	}
	pieces := []string{"a", "the", " ", "  ", "\n", "\n\n", "\t", "'s", "'LL", "123", "4567", "é", "ß", "中文", "🙂", "<|im_end|>", "<|eot_id|>", "[INST]", "x_y", "/", "Ab", "CD", "(", "))", ".", "...", "\u00a0", "\u3000", "Ω", "ǅ", "٣",
		"ʰ", "e\u0301", "İ", "ΣΑΣ", "ﬁ", "नमस्ते", "한국어", "ไทย", "\u200d", "\r", "'", "DON'T",
		"<|tool_call|>", "<|end|>", "<|user|>", "▁", "<0x41>", "<unk>"}
	r := rand.New(rand.NewPCG(17, 26))
	for range 200 {
		var b strings.Builder
		for range 1 + r.IntN(12) {
			b.WriteString(pieces[r.IntN(len(pieces))])
		}
		texts = append(texts, b.String())
	}
	return texts
}

// TestTokenizerMatchesHuggingFace encodes the same texts with pitstop's
// tokenizer and @huggingface/tokenizers (the tokenizers of
// @huggingface/transformers 4.x) on the real tokenizer.json files of Qwen3
// and Llama 3.1, Qwen2.5, Llama 3.2, Mistral NeMo (Tekken, the tokenizer of
// Ministral too) and o200k: the ids must be identical. Mistral 7B (v0.1 and
// v0.3), SmolLM and Phi-4-mini have tests of their own below and in
// mistral_test.go.
func TestTokenizerMatchesHuggingFace(t *testing.T) {
	for _, c := range []struct{ model, template, bos, eos string }{
		{"qwen3", "qwen3.jinja", "", "<|im_end|>"},
		{"qwen2.5", "qwen2.5.jinja", "", "<|im_end|>"},
		{"llama3.1", "llama3.1-json.jinja", "<|begin_of_text|>", "<|eot_id|>"},
		{"llama3.2", "llama3.2.jinja", "<|begin_of_text|>", "<|eot_id|>"},
		{"mistral-nemo", "ministral3.jinja", "<s>", "</s>"},
		// o200k (GPT-4o's file) is the vocabulary, merges and split
		// pattern Phi-4-mini builds on, without Phi's added tokens.
		{"o200k", "phi4-mini.jinja", "", "<|endoftext|>"},
	} {
		dir := hfref.TokenizerDir(t, c.model)
		tok, err := tokenizer.Load(dir)
		if err != nil {
			t.Fatalf("%s: %v", c.model, err)
		}
		texts := referenceTexts(t, c.template, c.bos, c.eos)
		var got []struct {
			IDs [][]int32 `json:"ids"`
		}
		hfref.Run(t, []map[string]any{{"op": "encode", "tokenizer": filepath.Join(dir, "tokenizer.json"),
			"config": filepath.Join(dir, "tokenizer_config.json"), "texts": texts}}, &got)
		same := 0
		for i, text := range texts {
			ours := tok.Encode(text, true)
			if !slices.Equal(ours, got[0].IDs[i]) {
				t.Errorf("%s: %q:\npitstop %v\nhf      %v", c.model, text, ours, got[0].IDs[i])
				continue
			}
			same++
		}
		t.Logf("%s: %d of %d texts tokenized identically (vocabulary %d)", c.model, same, len(texts), tok.VocabSize())
	}
}

// TestMetaspaceMatchesHuggingFace checks the Metaspace pre-tokenizer, the
// form newer SentencePiece-style files take (the "▁" prepend as a
// pre-tokenizer with prepend_scheme "first" or "always" instead of the
// Prepend/Replace normalizer), against @huggingface/tokenizers: Mistral 7B's
// vocabulary and merges with its normalizer swapped for the pre-tokenizer,
// written to a temporary directory. Split stays false: @huggingface/
// tokenizers 0.2.0 ignores it, where the Rust library splits words.
func TestMetaspaceMatchesHuggingFace(t *testing.T) {
	data := readGzip(t, filepath.Join("testdata", "mistral", "tokenizer.json.gz"))
	texts := referenceTexts(t, "mistral-v0.3-tools.jinja", "<s>", "</s>")
	for _, scheme := range []string{"first", "always"} {
		var doc map[string]any
		if err := json.Unmarshal(data, &doc); err != nil {
			t.Fatal(err)
		}
		doc["normalizer"] = nil
		doc["pre_tokenizer"] = map[string]any{"type": "Metaspace", "replacement": "▁", "prepend_scheme": scheme, "split": false}
		doc["decoder"] = map[string]any{"type": "Metaspace", "replacement": "▁", "prepend_scheme": scheme, "split": false}
		out, err := json.Marshal(doc)
		if err != nil {
			t.Fatal(err)
		}
		variant := filepath.Join(t.TempDir(), "tokenizer.json")
		if err := os.WriteFile(variant, out, 0o644); err != nil {
			t.Fatal(err)
		}
		tok, err := tokenizer.Load(variant)
		if err != nil {
			t.Fatalf("metaspace %s: %v", scheme, err)
		}
		var got []struct {
			IDs [][]int32 `json:"ids"`
		}
		hfref.Run(t, []map[string]any{{"op": "encode", "tokenizer": variant, "texts": texts}}, &got)
		same := 0
		for i, text := range texts {
			ours := tok.Encode(text, true)
			if !slices.Equal(ours, got[0].IDs[i]) {
				t.Errorf("metaspace %s: %q:\npitstop %v\nhf      %v", scheme, text, ours, got[0].IDs[i])
				continue
			}
			same++
		}
		t.Logf("mistral-7b with Metaspace (prepend_scheme %s): %d of %d texts tokenized identically", scheme, same, len(texts))
	}
}

// TestPhi4MiniAddedTokensMatchHuggingFace checks Phi-4-mini's added tokens
// (its tokenizer_config.json's added_tokens_decoder, shipped in testdata:
// <|assistant|>, <|end|>, <|user|>, <|system|> and <|tag|> special, the tool
// markers <|tool|>, <|/tool|>, <|tool_call|>, <|/tool_call|> and
// <|tool_response|> not special, all with rstrip) on the o200k file its
// vocabulary comes from, against @huggingface/tokenizers. Phi-4-mini's own
// tokenizer.json was not found in a reachable repository (see NOTICE).
func TestPhi4MiniAddedTokensMatchHuggingFace(t *testing.T) {
	dir := hfref.TokenizerDir(t, "o200k")
	data, err := os.ReadFile(filepath.Join(dir, "tokenizer.json"))
	if err != nil {
		t.Fatal(err)
	}
	cfg := readGzip(t, filepath.Join("testdata", "phi-4-mini", "tokenizer_config.json.gz"))
	var doc map[string]any
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	var tc struct {
		Added map[string]map[string]any `json:"added_tokens_decoder"`
	}
	if err := json.Unmarshal(cfg, &tc); err != nil {
		t.Fatal(err)
	}
	have := map[float64]bool{}
	added := doc["added_tokens"].([]any)
	for _, a := range added {
		have[a.(map[string]any)["id"].(float64)] = true
	}
	var extra []map[string]any
	for id, a := range tc.Added {
		a = maps.Clone(a)
		n, err := strconv.Atoi(id)
		if err != nil {
			t.Fatal(err)
		}
		if have[float64(n)] {
			continue
		}
		a["id"] = n
		extra = append(extra, a)
	}
	slices.SortFunc(extra, func(a, b map[string]any) int { return a["id"].(int) - b["id"].(int) })
	if len(extra) != 10 {
		t.Fatalf("%d added tokens beyond o200k's, want Phi-4-mini's 10", len(extra))
	}
	for _, a := range extra {
		added = append(added, a)
	}
	doc["added_tokens"] = added
	out, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	for name, b := range map[string][]byte{"tokenizer.json": out, "tokenizer_config.json": cfg} {
		if err := os.WriteFile(filepath.Join(tmp, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tok, err := tokenizer.Load(tmp)
	if err != nil {
		t.Fatal(err)
	}
	if id, ok := tok.TokenID("<|tool_call|>"); !ok || id != 200025 || tok.IsSpecial(id) {
		t.Fatalf("<|tool_call|> = %d, %v, special %v; want 200025, not special", id, ok, tok.IsSpecial(id))
	}
	texts := referenceTexts(t, "phi4-mini.jinja", "", "<|endoftext|>")
	var got []struct {
		IDs [][]int32 `json:"ids"`
	}
	hfref.Run(t, []map[string]any{{"op": "encode", "tokenizer": filepath.Join(tmp, "tokenizer.json"),
		"config": filepath.Join(tmp, "tokenizer_config.json"), "texts": texts}}, &got)
	same := 0
	for i, text := range texts {
		ours := tok.Encode(text, true)
		if !slices.Equal(ours, got[0].IDs[i]) {
			t.Errorf("phi-4-mini: %q:\npitstop %v\nhf      %v", text, ours, got[0].IDs[i])
			continue
		}
		same++
	}
	t.Logf("phi-4-mini (o200k with its added tokens): %d of %d texts tokenized identically (vocabulary %d)", same, len(texts), tok.VocabSize())
}

// matchHuggingFace encodes texts with tok and with @huggingface/tokenizers
// on the tokenizer.json at path (config: its tokenizer_config.json, or "")
// and reports every text whose ids differ; it returns how many are equal.
func matchHuggingFace(t *testing.T, name string, tok *tokenizer.Tokenizer, path, config string, texts []string) int {
	t.Helper()
	req := map[string]any{"op": "encode", "tokenizer": path, "texts": texts}
	if config != "" {
		req["config"] = config
	}
	var got []struct {
		IDs [][]int32 `json:"ids"`
	}
	hfref.Run(t, []map[string]any{req}, &got)
	same := 0
	for i, text := range texts {
		ours := tok.Encode(text, true)
		if !slices.Equal(ours, got[0].IDs[i]) {
			t.Errorf("%s: %q:\npitstop %v\nhf      %v", name, text, ours, got[0].IDs[i])
			continue
		}
		same++
	}
	return same
}

// readGzip returns the contents of a gzip-compressed file.
func readGzip(t *testing.T, path string) []byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	b, err := io.ReadAll(zr)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return b
}

// smollmCheckHash is llama.cpp's pre-tokenizer hash for
// HuggingFaceTB/SmolLM-135M (convert_hf_to_gguf.py, res = "smollm"): the
// sha256 of Python's str() of the ids of llamacppCheckText.
const smollmCheckHash = "855059429035d75a914d1eda9f10a876752e281a054a7a3d421ef0533e5b6249"

// llamacppCheckText is chktxt of llama.cpp's convert_hf_to_gguf.py, the text
// whose token ids identify a pre-tokenizer.
const llamacppCheckText = "\n \n\n \n\n\n \t \t\t \t\n  \n   \n    \n     \n🚀 (normal) 😶\u200d🌫\ufe0f (multiple emojis concatenated) ✅ 🦙🦙 3 33 333 3333 33333 333333 3333333 33333333 3.3 3..3 3...3 កាន់តែពិសេសអាច😁 ?我想在apple工作1314151天～ ------======= нещо на Български ''''''```````\"\"\"\"......!!!!!!?????? I've been 'told he's there, 'RE you sure? 'M not sure I'll make it, 'D you like some tea? We'Ve a'lL"

// pythonListHash is sha256 of ids as Python's str() writes the list.
func pythonListHash(ids []int32) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = strconv.Itoa(int(id))
	}
	return fmt.Sprintf("%x", sha256.Sum256([]byte("["+strings.Join(s, ", ")+"]")))
}

// smolLMTokenizer writes the shipped SmolLM tokenizer.json (testdata, see
// NOTICE) to a temporary directory and loads it.
func smolLMTokenizer(t *testing.T) (*tokenizer.Tokenizer, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "tokenizer.json")
	if err := os.WriteFile(path, readGzip(t, filepath.Join("testdata", "smollm", "tokenizer.json.gz")), 0o644); err != nil {
		t.Fatal(err)
	}
	tok, err := tokenizer.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return tok, path
}

// TestSmolLMCheckHash: the shipped SmolLM tokenizer gives the ids llama.cpp
// recorded for HuggingFaceTB/SmolLM-135M on its check text (produced there
// by Hugging Face's Python tokenizers), which vouches for the file. Needs no
// node.
func TestSmolLMCheckHash(t *testing.T) {
	tok, _ := smolLMTokenizer(t)
	if got := pythonListHash(tok.Encode(llamacppCheckText, true)); got != smollmCheckHash {
		t.Fatalf("check hash %s, want llama.cpp's %s for SmolLM-135M", got, smollmCheckHash)
	}
}

// TestSmolLMMatchesHuggingFace: SmolLM's tokenizer (the one SmolLM2 uses:
// byte-level BPE after a Digits split, 17 added tokens) against
// @huggingface/tokenizers, on the texts of the other families with the
// SmolLM2 chat template's prompt.
func TestSmolLMMatchesHuggingFace(t *testing.T) {
	tok, path := smolLMTokenizer(t)
	texts := referenceTexts(t, "smollm2.jinja", "", "<|im_end|>")
	same := matchHuggingFace(t, "smollm", tok, path, "", texts)
	t.Logf("smollm: %d of %d texts tokenized identically (vocabulary %d)", same, len(texts), tok.VocabSize())
}

// TestLlamaCppCheckHashes is a second reference for the fetched files:
// llama.cpp's pre-tokenizer hashes (convert_hf_to_gguf.py), made by Hugging
// Face's Python tokenizers with the model's own post-processing (a BOS
// first where it adds one), on its check text.
func TestLlamaCppCheckHashes(t *testing.T) {
	for _, c := range []struct {
		model, llamacpp, hash string
		bos                   bool
	}{
		{"llama3.1", "llama-bpe (Meta-Llama-3-8B)", "0ef9807a4087ebef797fc749390439009c3b9eda9ad1a097abbe738f486c01e5", true},
		{"qwen2.5", "qwen2 (Qwen1.5-7B)", "e636dc30a262dcc0d8c323492e32ae2b70728f4df7dfe9737d9f920a282b8aea", false},
		{"mistral-nemo", "tekken (Mistral-Nemo-Base-2407)", "63b97e4253352e6f357cc59ea5b583e3a680eaeaf2632188c2b952de2588485e", true},
	} {
		tok, err := tokenizer.Load(hfref.TokenizerDir(t, c.model))
		if err != nil {
			t.Fatal(err)
		}
		ids := tok.Encode(llamacppCheckText, true)
		if c.bos {
			bos, ok := tok.BOS()
			if !ok {
				t.Fatalf("%s: no BOS", c.model)
			}
			ids = append([]int32{bos}, ids...)
		}
		if got := pythonListHash(ids); got != c.hash {
			t.Errorf("%s: check hash %s, want llama.cpp's %s for %s", c.model, got, c.hash, c.llamacpp)
		}
	}
}
