package llama

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/pitstop-llm/pitstop/models/gguf"
)

// GGUF carries a BPE tokenizer as llama.cpp's converter writes it:
// tokenizer.ggml.tokens (by id), token_type (1 normal, 3 control, 4 user
// defined), merges ("a b"), the BOS and EOS ids, and "pre", the name of
// the pre-tokenizer's split pattern. These two functions convert between
// that and a Hugging Face tokenizer.json, which models/tokenizer reads.

// ggufPre are the split patterns of the pre-tokenizers by llama.cpp name.
var ggufPre = map[string]string{
	"gpt-2":     `'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+`,
	"llama-bpe": `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`,
	"qwen2":     `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`,
}

type hfTokenizer struct {
	AddedTokens []struct {
		ID      int32  `json:"id"`
		Content string `json:"content"`
		Special bool   `json:"special"`
	} `json:"added_tokens"`
	PreTokenizer json.RawMessage `json:"pre_tokenizer"`
	Model        struct {
		Type   string           `json:"type"`
		Vocab  map[string]int32 `json:"vocab"`
		Merges json.RawMessage  `json:"merges"`
	} `json:"model"`
}

// TokenizerMetadata converts a byte-level BPE tokenizer.json to GGUF
// metadata, with the chat template and the EOS and BOS ids (negative:
// none).
func TokenizerMetadata(tokenizerJSON []byte, chatTemplate string, eos, bos int32) ([]gguf.KV, error) {
	var t hfTokenizer
	if err := json.Unmarshal(tokenizerJSON, &t); err != nil {
		return nil, fmt.Errorf("tokenizer.json: %w", err)
	}
	if t.Model.Type != "BPE" {
		return nil, fmt.Errorf("tokenizer.json: model %q: only BPE tokenizers are written to GGUF", t.Model.Type)
	}
	pre := ""
	for name, pat := range ggufPre {
		if strings.Contains(string(t.PreTokenizer), strings.Trim(mustJSON(pat), `"`)) {
			pre = name
		}
	}
	if pre == "" {
		return nil, fmt.Errorf("tokenizer.json: the pre-tokenizer's split pattern is none llama.cpp names (gpt-2, llama-bpe, qwen2)")
	}
	n := int32(0)
	for _, id := range t.Model.Vocab {
		n = max(n, id+1)
	}
	for _, a := range t.AddedTokens {
		n = max(n, a.ID+1)
	}
	tokens := make([]string, n)
	types := make([]int32, n)
	for s, id := range t.Model.Vocab {
		tokens[id], types[id] = s, 1
	}
	for _, a := range t.AddedTokens {
		tokens[a.ID], types[a.ID] = a.Content, 4
		if a.Special {
			types[a.ID] = 3
		}
	}
	for i, ty := range types {
		if ty == 0 {
			tokens[i], types[i] = fmt.Sprintf("[PAD%d]", i), 5 // unused id
		}
	}
	var merges []string
	var pairs [][2]string
	if err := json.Unmarshal(t.Model.Merges, &merges); err != nil {
		merges = nil // Unmarshal fills what it can before failing
		if err := json.Unmarshal(t.Model.Merges, &pairs); err != nil {
			return nil, fmt.Errorf("tokenizer.json: merges: %w", err)
		}
		for _, p := range pairs {
			merges = append(merges, p[0]+" "+p[1])
		}
	}
	kv := []gguf.KV{
		{Key: "tokenizer.ggml.model", Value: "gpt2"},
		{Key: "tokenizer.ggml.pre", Value: pre},
		{Key: "tokenizer.ggml.tokens", Value: tokens},
		{Key: "tokenizer.ggml.token_type", Value: types},
		{Key: "tokenizer.ggml.merges", Value: merges},
	}
	if eos >= 0 {
		kv = append(kv, gguf.KV{Key: "tokenizer.ggml.eos_token_id", Value: uint32(eos)})
	}
	if bos >= 0 {
		kv = append(kv, gguf.KV{Key: "tokenizer.ggml.bos_token_id", Value: uint32(bos)})
	}
	if chatTemplate != "" {
		kv = append(kv, gguf.KV{Key: "tokenizer.chat_template", Value: chatTemplate})
	}
	return kv, nil
}

func mustJSON(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// TokenizerJSON rebuilds a Hugging Face tokenizer.json from a GGUF file's
// tokenizer (byte-level BPE: tokenizer.ggml.model "gpt2").
func TokenizerJSON(f *gguf.File) ([]byte, error) {
	if m := f.String("tokenizer.ggml.model"); m != "gpt2" {
		return nil, fmt.Errorf("tokenizer.ggml.model %q: pitstop reads byte-level BPE (gpt2) tokenizers from GGUF", m)
	}
	v, _ := f.Get("tokenizer.ggml.tokens")
	tokens, ok := v.([]string)
	if !ok || len(tokens) == 0 {
		return nil, fmt.Errorf("tokenizer.ggml.tokens is missing or not a list of strings")
	}
	v, _ = f.Get("tokenizer.ggml.token_type")
	types, _ := v.([]int32)
	if types != nil && len(types) != len(tokens) {
		return nil, fmt.Errorf("tokenizer.ggml.token_type has %d entries for %d tokens", len(types), len(tokens))
	}
	v, _ = f.Get("tokenizer.ggml.merges")
	merges, _ := v.([]string)
	pre := f.String("tokenizer.ggml.pre")
	pat, ok := ggufPre[pre]
	if !ok {
		names := make([]string, 0, len(ggufPre))
		for n := range ggufPre {
			names = append(names, n)
		}
		sort.Strings(names)
		return nil, fmt.Errorf("tokenizer.ggml.pre %q: unknown pre-tokenizer (pitstop knows %s)", pre, strings.Join(names, ", "))
	}
	vocab := map[string]int{}
	type added struct {
		ID         int    `json:"id"`
		Content    string `json:"content"`
		SingleWord bool   `json:"single_word"`
		Lstrip     bool   `json:"lstrip"`
		Rstrip     bool   `json:"rstrip"`
		Normalized bool   `json:"normalized"`
		Special    bool   `json:"special"`
	}
	var adds []added
	for i, s := range tokens {
		ty := int32(1)
		if types != nil {
			ty = types[i]
		}
		switch ty {
		case 3, 4:
			adds = append(adds, added{ID: i, Content: s, Special: ty == 3})
			vocab[s] = i
		case 5: // unused
		default:
			vocab[s] = i
		}
	}
	byteLevel := map[string]any{"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true, "use_regex": false}
	out := map[string]any{
		"version":      "1.0",
		"added_tokens": adds,
		"normalizer":   nil,
		"pre_tokenizer": map[string]any{"type": "Sequence", "pretokenizers": []any{
			map[string]any{"type": "Split", "pattern": map[string]string{"Regex": pat}, "behavior": "Isolated", "invert": false},
			byteLevel,
		}},
		"post_processor": byteLevel,
		"decoder":        byteLevel,
		"model":          map[string]any{"type": "BPE", "vocab": vocab, "merges": merges, "ignore_merges": pre == "llama-bpe"},
	}
	return json.Marshal(out)
}
