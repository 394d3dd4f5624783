package tokenizer

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// SentencePiece-style BPE (Llama 2, Mistral 7B v0.1-v0.3 and their kin) in
// tokenizer.json form: the vocabulary is written in plain characters with
// "▁" (U+2581) for a space, BPE starts from characters rather than bytes,
// and a character the vocabulary lacks falls back to its UTF-8 bytes as the
// tokens "<0x00>".."<0xFF>" (byte_fallback). Spaces become "▁" either by a
// normalizer (Prepend "▁" then Replace " " -> "▁", the "legacy" files) or
// by a Metaspace pre-tokenizer (prepend_scheme always, first or never).

// metaspace is the replacement character SentencePiece writes for a space.
const metaspace = "\u2581"

// segPos says where a run of plain text starts in the text being encoded,
// which decides whether a "▁" is prepended to it: Hugging Face normalizes
// and pre-tokenizes each run between added tokens on its own.
type segPos uint8

const (
	atTextStart segPos = iota // the start of the whole text
	afterAdded                // right after an added token
	midText                   // inside a run (a span tokenized apart)
)

// metaspaceStep is the Metaspace pre-tokenizer: spaces become the
// replacement; with split, every replacement starts a new piece (the
// MergedWithNext split of Hugging Face). Its prepend is applied by
// encodePlain, which knows where the run starts.
type metaspaceStep struct {
	replacement string
	prepend     string // "always", "first" or "never"
	splitAll    bool
}

func (m metaspaceStep) split(pieces []string) []string {
	var out []string
	for _, p := range pieces {
		p = strings.ReplaceAll(p, " ", m.replacement)
		if !m.splitAll {
			out = append(out, p)
			continue
		}
		start := 0
		for i := 1; i < len(p); i++ {
			if strings.HasPrefix(p[i:], m.replacement) {
				out = append(out, p[start:i])
				start = i
				i += len(m.replacement) - 1
			}
		}
		if start < len(p) {
			out = append(out, p[start:])
		}
	}
	return out
}

// prependFor reports whether a run starting at pos gets the replacement
// prepended.
func (m metaspaceStep) prependFor(pos segPos) bool {
	switch m.prepend {
	case "always":
		return pos != midText
	case "first":
		return pos == atTextStart
	}
	return false
}

// pieceBytes is the text a SentencePiece vocabulary entry stands for:
// "<0xAB>" is the byte 0xAB, "▁" a space, anything else itself.
func pieceBytes(tok string) []byte {
	if b, ok := byteFallbackToken(tok); ok {
		return []byte{b}
	}
	return []byte(strings.ReplaceAll(tok, metaspace, " "))
}

// byteFallbackToken parses "<0xAB>".
func byteFallbackToken(tok string) (byte, bool) {
	if len(tok) != 6 || tok[:3] != "<0x" || tok[5] != '>' {
		return 0, false
	}
	var b byte
	for _, c := range tok[3:5] {
		var v byte
		switch {
		case c >= '0' && c <= '9':
			v = byte(c - '0')
		case c >= 'A' && c <= 'F':
			v = byte(c-'A') + 10
		default:
			return 0, false
		}
		b = b<<4 | v
	}
	return b, true
}

// initPieces sets up the SentencePiece tables once the vocabulary is built:
// the bytes each token decodes to and the byte-fallback tokens.
func (t *Tokenizer) initPieces() error {
	t.pieces = true
	clear(t.rawVocab)
	for tok, id := range t.vocab {
		b := pieceBytes(tok)
		t.tokBytes[id] = b
		if _, isByte := byteFallbackToken(tok); !isByte {
			t.rawVocab[string(b)] = id
		}
	}
	for i := range t.byteID {
		t.byteID[i] = -1
		if id, ok := t.vocab[fmt.Sprintf("<0x%02X>", i)]; ok {
			t.byteID[i] = id
		}
	}
	if t.raw.byteFallback {
		for i, id := range t.byteID {
			if id < 0 {
				return fmt.Errorf("malformed tokenizer.json: byte_fallback is set but the vocab lacks <0x%02X>", i)
			}
		}
	}
	for _, a := range t.added {
		t.tokBytes[a.ID] = []byte(a.Content)
	}
	return nil
}

// mergePieces is BPE over the characters of a normalized piece (in "▁"
// form). A character the vocabulary lacks becomes its byte tokens with
// byte_fallback, else the unknown token (fused when fuse_unk), else is
// dropped, as Hugging Face's BPE does.
func (t *Tokenizer) mergePieces(piece string) []int32 {
	ids := make([]int32, 0, len(piece))
	for i, r := range piece {
		w := utf8.RuneLen(r)
		if r == utf8.RuneError {
			_, w = utf8.DecodeRuneInString(piece[i:])
		}
		ch := piece[i : i+w]
		if id, ok := t.vocab[ch]; ok {
			ids = append(ids, id)
			continue
		}
		if t.raw.byteFallback {
			for j := 0; j < len(ch); j++ {
				ids = append(ids, t.byteID[ch[j]])
			}
			continue
		}
		if t.unkID < 0 || (t.fuseUnk && len(ids) > 0 && ids[len(ids)-1] == t.unkID) {
			continue
		}
		ids = append(ids, t.unkID)
	}
	return t.applyMerges(ids)
}
