package tokenizer

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// ErrUnsupported marks a tokenizer.json this package does not handle: a
// model other than BPE, or a non-byte-level pipeline.
var ErrUnsupported = errors.New("unsupported tokenizer")

type fileJSON struct {
	Version       json.RawMessage `json:"version"`
	Truncation    json.RawMessage `json:"truncation"`
	Padding       json.RawMessage `json:"padding"`
	AddedTokens   []AddedToken    `json:"added_tokens"`
	Normalizer    json.RawMessage `json:"normalizer"`
	PreTokenizer  json.RawMessage `json:"pre_tokenizer"`
	PostProcessor json.RawMessage `json:"post_processor"`
	Decoder       json.RawMessage `json:"decoder"`
	Model         json.RawMessage `json:"model"`
}

type modelJSON struct {
	Type                    string           `json:"type"`
	Dropout                 json.RawMessage  `json:"dropout"`
	UnkToken                json.RawMessage  `json:"unk_token"`
	ContinuingSubwordPrefix json.RawMessage  `json:"continuing_subword_prefix"`
	EndOfWordSuffix         json.RawMessage  `json:"end_of_word_suffix"`
	FuseUnk                 bool             `json:"fuse_unk"`
	ByteFallback            bool             `json:"byte_fallback"`
	IgnoreMerges            bool             `json:"ignore_merges"`
	Vocab                   map[string]int64 `json:"vocab"`
	Merges                  json.RawMessage  `json:"merges"`
}

// Load reads a tokenizer. path is a tokenizer.json file or a directory
// holding one; tokenizer_config.json (bos_token, eos_token) and
// generation_config.json (eos_token_id) beside it are read when present.
func Load(path string) (*Tokenizer, error) {
	file := path
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		file = filepath.Join(path, "tokenizer.json")
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("tokenizer: %w", err)
	}
	t, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("tokenizer %s: %w", file, err)
	}
	dir := filepath.Dir(file)
	if cfg, err := os.ReadFile(filepath.Join(dir, "tokenizer_config.json")); err == nil {
		if err := t.applyTokenizerConfig(cfg); err != nil {
			return nil, fmt.Errorf("tokenizer %s: tokenizer_config.json: %w", dir, err)
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("tokenizer: %w", err)
	}
	if gen, err := os.ReadFile(filepath.Join(dir, "generation_config.json")); err == nil {
		if err := t.applyGenerationConfig(gen); err != nil {
			return nil, fmt.Errorf("tokenizer %s: generation_config.json: %w", dir, err)
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("tokenizer: %w", err)
	}
	return t, nil
}

// Parse builds a tokenizer from the contents of a tokenizer.json.
func Parse(data []byte) (*Tokenizer, error) {
	var f fileJSON
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("malformed tokenizer.json: %w", err)
	}
	if isNull(f.Model) {
		return nil, fmt.Errorf("malformed tokenizer.json: no model section")
	}
	var m modelJSON
	if err := json.Unmarshal(f.Model, &m); err != nil {
		return nil, fmt.Errorf("malformed tokenizer.json: model: %w", err)
	}
	if m.Type == "" && m.Vocab != nil && m.Merges != nil {
		m.Type = "BPE"
	}
	if m.Type != "BPE" {
		return nil, fmt.Errorf("%w: model type %q (only BPE)", ErrUnsupported, m.Type)
	}
	for name, raw := range map[string]json.RawMessage{"continuing_subword_prefix": m.ContinuingSubwordPrefix, "end_of_word_suffix": m.EndOfWordSuffix} {
		var s string
		if !isNull(raw) && (json.Unmarshal(raw, &s) != nil || s != "") {
			return nil, fmt.Errorf("%w: model %s %s", ErrUnsupported, name, raw)
		}
	}
	pre, err := parsePreTokenizer(f.PreTokenizer)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUnsupported, err)
	}
	if pre.byteLevel && m.ByteFallback {
		return nil, fmt.Errorf("%w: byte_fallback with a ByteLevel pre-tokenizer", ErrUnsupported)
	}
	norm, err := parseNormalizer(f.Normalizer)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUnsupported, err)
	}
	if err := checkDecoder(f.Decoder, !pre.byteLevel); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUnsupported, err)
	}
	merges, err := parseMerges(m.Merges)
	if err != nil {
		return nil, err
	}
	vocab := make(map[string]int32, len(m.Vocab))
	for tok, id := range m.Vocab {
		if id < 0 || id >= 1<<31-1 {
			return nil, fmt.Errorf("malformed tokenizer.json: vocab token %q has id %d", tok, id)
		}
		vocab[tok] = int32(id)
	}
	unk := ""
	if !isNull(m.UnkToken) {
		if err := json.Unmarshal(m.UnkToken, &unk); err != nil {
			return nil, fmt.Errorf("malformed tokenizer.json: model unk_token: %w", err)
		}
	}
	t, err := build(vocab, merges, f.AddedTokens, unk)
	if err != nil {
		return nil, err
	}
	t.ignoreMerges = m.IgnoreMerges
	t.fuseUnk = m.FuseUnk
	t.norm = norm
	t.steps = pre.steps
	t.meta = pre.meta
	t.raw = rawSections{
		version: f.Version, truncation: f.Truncation, padding: f.Padding,
		normalizer: f.Normalizer, preTokenizer: f.PreTokenizer, postProcess: f.PostProcessor,
		decoder: f.Decoder, dropout: m.Dropout, unkToken: m.UnkToken,
		contPrefix: m.ContinuingSubwordPrefix, eowSuff: m.EndOfWordSuffix,
		byteFallback: m.ByteFallback,
	}
	if !pre.byteLevel {
		// No ByteLevel step: a SentencePiece-style vocabulary.
		if err := t.initPieces(); err != nil {
			return nil, err
		}
	}
	return t, nil
}

// parseMerges accepts both forms: ["a b", ...] and [["a", "b"], ...].
func parseMerges(raw json.RawMessage) ([][2]string, error) {
	if isNull(raw) {
		return nil, nil
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, fmt.Errorf("malformed tokenizer.json: merges: %w", err)
	}
	out := make([][2]string, len(items))
	for i, it := range items {
		it = bytes.TrimSpace(it)
		if len(it) > 0 && it[0] == '"' {
			var s string
			if err := json.Unmarshal(it, &s); err != nil {
				return nil, fmt.Errorf("malformed tokenizer.json: merge %d: %w", i, err)
			}
			parts := strings.Split(s, " ")
			if len(parts) != 2 {
				return nil, fmt.Errorf("malformed tokenizer.json: merge %d %q: want two tokens separated by one space", i, s)
			}
			out[i] = [2]string{parts[0], parts[1]}
			continue
		}
		var pair []string
		if err := json.Unmarshal(it, &pair); err != nil || len(pair) != 2 {
			return nil, fmt.Errorf("malformed tokenizer.json: merge %d %s: want a string \"a b\" or a pair [\"a\", \"b\"]", i, it)
		}
		out[i] = [2]string{pair[0], pair[1]}
	}
	return out, nil
}

// build assembles the lookup tables shared by Parse and Train.
func build(vocab map[string]int32, merges [][2]string, added []AddedToken, unk string) (*Tokenizer, error) {
	t := &Tokenizer{
		vocab:     vocab,
		rawVocab:  make(map[string]int32, len(vocab)),
		merges:    make(map[uint64]merge, len(merges)),
		mergeList: make([][2]int32, 0, len(merges)),
		addedByID: map[int32]int{},
		unkID:     -1,
		bos:       -1,
		eos:       -1,
	}
	size := 0
	for _, id := range vocab {
		size = max(size, int(id)+1)
	}
	for _, a := range added {
		if a.ID < 0 {
			return nil, fmt.Errorf("malformed tokenizer.json: added token %q has id %d", a.Content, a.ID)
		}
		size = max(size, int(a.ID)+1)
	}
	t.size = size
	t.tokens = make([]string, size)
	t.tokBytes = make([][]byte, size)
	seen := make([]bool, size)
	for tok, id := range vocab {
		if seen[id] {
			a, b := min(t.tokens[id], tok), max(t.tokens[id], tok)
			return nil, fmt.Errorf("malformed tokenizer.json: vocab id %d is given to both %q and %q", id, a, b)
		}
		seen[id] = true
		t.tokens[id] = tok
		b := byteLevelDecode(tok)
		t.tokBytes[id] = b
		t.rawVocab[string(b)] = id
	}
	for i := range t.byteID {
		t.byteID[i] = -1
		if id, ok := vocab[string(byteToRune[i])]; ok {
			t.byteID[i] = id
		}
	}
	for rank, p := range merges {
		a, ok1 := vocab[p[0]]
		b, ok2 := vocab[p[1]]
		if !ok1 || !ok2 {
			missing := p[0]
			if ok1 {
				missing = p[1]
			}
			return nil, fmt.Errorf("malformed tokenizer.json: merge %d (%q %q) references token %q, which is not in the vocab", rank, p[0], p[1], missing)
		}
		c, ok := vocab[p[0]+p[1]]
		if !ok {
			return nil, fmt.Errorf("malformed tokenizer.json: merge %d (%q %q) makes %q, which is not in the vocab", rank, p[0], p[1], p[0]+p[1])
		}
		k := pairKey(a, b)
		if _, dup := t.merges[k]; dup {
			continue // a repeated merge keeps its first (best) rank
		}
		t.merges[k] = merge{rank: int32(rank), id: c}
		t.mergeList = append(t.mergeList, [2]int32{a, b})
	}
	if unk != "" {
		id, ok := vocab[unk]
		if !ok {
			return nil, fmt.Errorf("malformed tokenizer.json: unk_token %q is not in the vocab", unk)
		}
		t.unkID = id
	}
	t.added = append([]AddedToken(nil), added...)
	for i, a := range t.added {
		if _, dup := t.addedByID[a.ID]; dup {
			return nil, fmt.Errorf("malformed tokenizer.json: added token id %d appears twice", a.ID)
		}
		t.addedByID[a.ID] = i
		t.tokBytes[a.ID] = []byte(a.Content)
		if t.tokens[a.ID] == "" {
			t.tokens[a.ID] = a.Content
		}
	}
	t.withSpecial = newAddedMatcher(t.added, true)
	t.plainSpecial = newAddedMatcher(t.added, false)
	return t, nil
}

// specialTokenJSON is a token in tokenizer_config.json: a string, or an
// object with "content", or null.
func specialTokenContent(raw json.RawMessage) (string, error) {
	if isNull(raw) {
		return "", nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s, nil
	}
	var obj struct {
		Content string `json:"content"`
	}
	if err := json.Unmarshal(raw, &obj); err != nil {
		return "", fmt.Errorf("token %s: want a string or {\"content\": ...}", raw)
	}
	return obj.Content, nil
}

func (t *Tokenizer) applyTokenizerConfig(data []byte) error {
	var cfg struct {
		BOS json.RawMessage `json:"bos_token"`
		EOS json.RawMessage `json:"eos_token"`
	}
	if err := json.Unmarshal(data, &cfg); err != nil {
		return fmt.Errorf("malformed: %w", err)
	}
	bos, err := specialTokenContent(cfg.BOS)
	if err != nil {
		return fmt.Errorf("bos_token: %w", err)
	}
	eos, err := specialTokenContent(cfg.EOS)
	if err != nil {
		return fmt.Errorf("eos_token: %w", err)
	}
	return t.SetSpecialTokens(bos, eos)
}

func (t *Tokenizer) applyGenerationConfig(data []byte) error {
	var cfg struct {
		EOS json.RawMessage `json:"eos_token_id"`
	}
	if err := json.Unmarshal(data, &cfg); err != nil {
		return fmt.Errorf("malformed: %w", err)
	}
	if isNull(cfg.EOS) {
		return nil
	}
	var ids []int32
	var one int32
	if err := json.Unmarshal(cfg.EOS, &one); err == nil {
		ids = []int32{one}
	} else if err := json.Unmarshal(cfg.EOS, &ids); err != nil {
		return fmt.Errorf("eos_token_id %s: want an id or a list of ids", cfg.EOS)
	}
	for _, id := range ids {
		if id < 0 || int(id) >= t.size {
			return fmt.Errorf("eos_token_id %d is outside the vocabulary (size %d)", id, t.size)
		}
		t.addEOS(id)
	}
	return nil
}

func (t *Tokenizer) addEOS(id int32) {
	for _, e := range t.eosIDs {
		if e == id {
			return
		}
	}
	t.eosIDs = append(t.eosIDs, id)
}

// SetSpecialTokens names the BOS and EOS tokens ("" leaves one unset). Each
// must be a token of the vocabulary or an added token.
func (t *Tokenizer) SetSpecialTokens(bos, eos string) error {
	if bos != "" {
		id, ok := t.TokenID(bos)
		if !ok {
			return fmt.Errorf("bos token %q is not in the vocabulary", bos)
		}
		t.bos = id
	}
	if eos != "" {
		id, ok := t.TokenID(eos)
		if !ok {
			return fmt.Errorf("eos token %q is not in the vocabulary", eos)
		}
		t.eos = id
		t.addEOS(id)
	}
	return nil
}
