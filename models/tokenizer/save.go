package tokenizer

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
)

// Save writes the tokenizer as a standard tokenizer.json (the array form of
// merges, vocabulary in id order) that Load and Hugging Face tokenizers read.
func (t *Tokenizer) Save(path string) error {
	data, err := t.MarshalJSON()
	if err != nil {
		return err
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		return fmt.Errorf("tokenizer: save: %w", err)
	}
	return nil
}

// SaveDir writes tokenizer.json and, naming BOS and EOS, a minimal
// tokenizer_config.json into dir, so that Load(dir) restores both.
func (t *Tokenizer) SaveDir(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("tokenizer: save: %w", err)
	}
	if err := t.Save(filepath.Join(dir, "tokenizer.json")); err != nil {
		return err
	}
	cfg := map[string]any{"tokenizer_class": "PreTrainedTokenizerFast", "bos_token": nil, "eos_token": nil}
	if id, ok := t.BOS(); ok {
		cfg["bos_token"] = t.Token(id)
	}
	if id, ok := t.EOS(); ok {
		cfg["eos_token"] = t.Token(id)
	}
	data, err := json.MarshalIndent(cfg, "", "  ")
	if err != nil {
		return fmt.Errorf("tokenizer: save: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "tokenizer_config.json"), append(data, '\n'), 0o644); err != nil {
		return fmt.Errorf("tokenizer: save: %w", err)
	}
	return nil
}

func jsonStr(s string) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	return bytes.TrimRight(buf.Bytes(), "\n")
}

func rawOrNull(r json.RawMessage) []byte {
	if isNull(r) {
		return []byte("null")
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, r); err != nil {
		return []byte("null")
	}
	return buf.Bytes()
}

// MarshalJSON renders the tokenizer.json document.
func (t *Tokenizer) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	version := t.raw.version
	if isNull(version) {
		version = json.RawMessage(`"1.0"`)
	}
	fmt.Fprintf(&b, "{\n  \"version\": %s,\n  \"truncation\": %s,\n  \"padding\": %s,\n  \"added_tokens\": [",
		rawOrNull(version), rawOrNull(t.raw.truncation), rawOrNull(t.raw.padding))
	for i, a := range t.added {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, "\n    {\"id\": %d, \"content\": %s, \"single_word\": %t, \"lstrip\": %t, \"rstrip\": %t, \"normalized\": %t, \"special\": %t}",
			a.ID, jsonStr(a.Content), a.SingleWord, a.LStrip, a.RStrip, a.Normalized, a.Special)
	}
	if len(t.added) > 0 {
		b.WriteString("\n  ")
	}
	fmt.Fprintf(&b, "],\n  \"normalizer\": %s,\n  \"pre_tokenizer\": %s,\n  \"post_processor\": %s,\n  \"decoder\": %s,\n",
		rawOrNull(t.raw.normalizer), rawOrNull(t.raw.preTokenizer), rawOrNull(t.raw.postProcess), rawOrNull(t.raw.decoder))
	unk := []byte("null")
	if t.unkID >= 0 {
		unk = jsonStr(t.tokens[t.unkID])
	}
	fmt.Fprintf(&b, "  \"model\": {\n    \"type\": \"BPE\",\n    \"dropout\": %s,\n    \"unk_token\": %s,\n    \"continuing_subword_prefix\": %s,\n    \"end_of_word_suffix\": %s,\n    \"fuse_unk\": %t,\n    \"byte_fallback\": %t,\n    \"ignore_merges\": %t,\n    \"vocab\": {",
		rawOrNull(t.raw.dropout), unk, rawOrNull(t.raw.contPrefix), rawOrNull(t.raw.eowSuff), t.fuseUnk, t.raw.byteFallback, t.ignoreMerges)
	type entry struct {
		tok string
		id  int32
	}
	entries := make([]entry, 0, len(t.vocab))
	for tok, id := range t.vocab {
		entries = append(entries, entry{tok, id})
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].id < entries[j].id })
	for i, e := range entries {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, "\n      %s: %d", jsonStr(e.tok), e.id)
	}
	b.WriteString("\n    },\n    \"merges\": [")
	for i, m := range t.mergeList {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, "\n      [%s, %s]", jsonStr(t.tokens[m[0]]), jsonStr(t.tokens[m[1]]))
	}
	b.WriteString("\n    ]\n  }\n}\n")
	return b.Bytes(), nil
}
