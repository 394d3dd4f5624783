// Package tokenizer loads Hugging Face tokenizer.json files for byte-level
// BPE models (GPT-2, Llama 3, Qwen2 and their kin) and SentencePiece-style
// BPE models with byte fallback (Llama 2, Mistral 7B), encodes and decodes text,
// decodes token streams incrementally, and trains small byte-level BPE
// vocabularies that it saves in the same format.
//
// Pre-tokenizer patterns: the three standard patterns (GPT-2, Llama 3,
// Qwen2) run as hand-written scanners, checked against a regexp engine with
// lookahead (github.com/dlclark/regexp2) by the tests; any other Split
// pattern runs on regexp2 itself.
//
// Encode never adds BOS or EOS: chat templates write them as text, and a
// caller that wants them prepends BOS() itself.
package tokenizer

import (
	"encoding/json"
	"strings"
	"unicode/utf8"
)

// Tokenizer is a loaded byte-level BPE tokenizer. It is safe for concurrent
// use; a Decoder is not.
type Tokenizer struct {
	vocab    map[string]int32 // byte-level token string -> id
	rawVocab map[string]int32 // raw bytes of a model token -> id
	tokens   []string         // id -> token string as in the file ("" for a hole)
	tokBytes [][]byte         // id -> the bytes the token decodes to
	size     int

	merges    map[uint64]merge
	mergeList [][2]int32 // rank -> pair, for Save
	byteID    [256]int32 // raw byte -> id of its byte-level symbol, -1 if absent

	ignoreMerges bool
	unkID        int32
	fuseUnk      bool

	added        []AddedToken
	addedByID    map[int32]int
	withSpecial  *addedMatcher
	plainSpecial *addedMatcher // non-special added tokens only

	norm  normalizer
	steps []preStep

	// pieces marks a SentencePiece-style vocabulary ("▁" for a space,
	// character-level BPE, byte fallback) rather than a byte-level one;
	// meta is its Metaspace pre-tokenizer, if it has one.
	pieces bool
	meta   *metaspaceStep

	bos, eos int32
	eosIDs   []int32

	raw   rawSections
	cache bpeCache
}

// rawSections keeps the parts of tokenizer.json this package reads but does
// not change, so Save writes them back as they were.
type rawSections struct {
	version, truncation, padding           json.RawMessage
	normalizer, preTokenizer, postProcess  json.RawMessage
	decoder                                json.RawMessage
	dropout, unkToken, contPrefix, eowSuff json.RawMessage
	byteFallback                           bool
}

// VocabSize is one more than the largest token id (model vocabulary and
// added tokens together): the size of the model's embedding rows it needs.
func (t *Tokenizer) VocabSize() int { return t.size }

// TokenID returns the id of a token given as it is written in the vocabulary
// (byte-level form such as "Ġthe", or an added token's content).
func (t *Tokenizer) TokenID(s string) (int32, bool) {
	for _, a := range t.added {
		if a.Content == s {
			return a.ID, true
		}
	}
	id, ok := t.vocab[s]
	return id, ok
}

// Token returns the vocabulary string of id ("" if id is unknown).
func (t *Tokenizer) Token(id int32) string {
	if i, ok := t.addedByID[id]; ok {
		return t.added[i].Content
	}
	if id < 0 || int(id) >= len(t.tokens) {
		return ""
	}
	return t.tokens[id]
}

// TokenBytes returns the raw bytes token id decodes to (nil if unknown).
// The slice is shared: do not modify it.
func (t *Tokenizer) TokenBytes(id int32) []byte {
	if id < 0 || int(id) >= len(t.tokBytes) {
		return nil
	}
	return t.tokBytes[id]
}

// IsSpecial reports whether id is an added token flagged special.
func (t *Tokenizer) IsSpecial(id int32) bool {
	i, ok := t.addedByID[id]
	return ok && t.added[i].Special
}

// AddedTokens returns the added tokens in file order.
func (t *Tokenizer) AddedTokens() []AddedToken { return append([]AddedToken(nil), t.added...) }

// BOS returns the beginning-of-sequence token from tokenizer_config.json
// (or SetSpecialTokens); ok is false when none is known.
func (t *Tokenizer) BOS() (id int32, ok bool) { return t.bos, t.bos >= 0 }

// EOS returns the end-of-sequence token from tokenizer_config.json (or
// SetSpecialTokens); ok is false when none is known.
func (t *Tokenizer) EOS() (id int32, ok bool) { return t.eos, t.eos >= 0 }

// EOSIDs returns every token that ends generation: EOS plus the
// eos_token_id list of generation_config.json when one was loaded.
func (t *Tokenizer) EOSIDs() []int32 { return append([]int32(nil), t.eosIDs...) }

// Encode turns text into token ids. With allowSpecial, special tokens written
// in the text (such as "<|im_start|>") become their ids; without it they are
// encoded as ordinary text, which is what user-supplied content needs.
// Non-special added tokens are always matched, as Hugging Face does.
func (t *Tokenizer) Encode(text string, allowSpecial bool) []int32 {
	m := t.plainSpecial
	if allowSpecial {
		m = t.withSpecial
	}
	out, _ := t.appendEncode(text, m, atTextStart, make([]int32, 0, len(text)/3+1))
	return out
}

// encodePlain encodes a run of text holding no added token; pos is where
// the run starts, for the SentencePiece "▁" prepends.
func (t *Tokenizer) encodePlain(text string, pos segPos, out []int32) []int32 {
	if t.norm != nil {
		text = t.norm(text, pos != midText)
	}
	if text == "" {
		return out
	}
	if t.meta != nil && t.meta.prependFor(pos) && !strings.HasPrefix(text, " ") && !strings.HasPrefix(text, t.meta.replacement) {
		text = t.meta.replacement + text
	}
	pieces := []string{text}
	for _, st := range t.steps {
		pieces = st.split(pieces)
	}
	for _, p := range pieces {
		out = t.bpe(p, out)
	}
	return out
}

// Decode turns ids back into text. Special tokens are included; ids that
// are not in the vocabulary are skipped. The result is the exact bytes the
// tokens stand for, which may be invalid UTF-8 if ids is cut inside a
// character.
func (t *Tokenizer) Decode(ids []int32) string { return t.decode(ids, false) }

// DecodeSkipSpecial is Decode without the special tokens.
func (t *Tokenizer) DecodeSkipSpecial(ids []int32) string { return t.decode(ids, true) }

func (t *Tokenizer) decode(ids []int32, skipSpecial bool) string {
	var sb strings.Builder
	for _, id := range ids {
		if skipSpecial && t.IsSpecial(id) {
			continue
		}
		sb.Write(t.TokenBytes(id))
	}
	return sb.String()
}

// Decoder turns a stream of tokens into text incrementally, never emitting
// part of a UTF-8 character: bytes of an incomplete character wait for the
// next token. Bytes that can never form a valid character come out as
// U+FFFD. A Decoder is not safe for concurrent use.
type Decoder struct {
	t           *Tokenizer
	skipSpecial bool
	pending     []byte
}

// NewDecoder returns a streaming decoder; skipSpecial drops special tokens.
func (t *Tokenizer) NewDecoder(skipSpecial bool) *Decoder {
	return &Decoder{t: t, skipSpecial: skipSpecial}
}

// Add feeds one token and returns the text it completes (possibly "").
func (d *Decoder) Add(id int32) string {
	if d.skipSpecial && d.t.IsSpecial(id) {
		return ""
	}
	d.pending = append(d.pending, d.t.TokenBytes(id)...)
	return d.drain(false)
}

// Flush returns whatever is still held back (an incomplete character comes
// out as U+FFFD) and resets the decoder.
func (d *Decoder) Flush() string { return d.drain(true) }

// Reset drops any held-back bytes.
func (d *Decoder) Reset() { d.pending = d.pending[:0] }

func (d *Decoder) drain(final bool) string {
	p := d.pending
	var sb strings.Builder
	i := 0
	for i < len(p) {
		if p[i] < utf8.RuneSelf {
			sb.WriteByte(p[i])
			i++
			continue
		}
		r, w := utf8.DecodeRune(p[i:])
		if r != utf8.RuneError || w > 1 {
			sb.Write(p[i : i+w])
			i += w
			continue
		}
		// Invalid here: either a character cut short at the end (wait for
		// more unless final) or bytes that can never be valid.
		if !final && !utf8.FullRune(p[i:]) {
			break
		}
		sb.WriteRune(utf8.RuneError)
		i++
		if final {
			continue
		}
	}
	n := copy(d.pending, p[i:])
	d.pending = d.pending[:n]
	return sb.String()
}
