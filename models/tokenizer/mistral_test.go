package tokenizer_test

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/pitstop-llm/pitstop/models/tokenizer"
)

// Mistral 7B's tokenizers, shipped in testdata (sources in NOTICE):
//   - tokenizer.json.gz: Mistral 7B v0.1/v0.2's Hugging Face tokenizer.json
//     (SentencePiece-style BPE, byte fallback, the Prepend/Replace "▁"
//     normalizer; 32,000 tokens);
//   - tokenizer.model.v3.gz: mistral-common's SentencePiece model of the v3
//     tokenizer, Mistral 7B v0.3's: the same 31,997 ordinary tokens after
//     771 control tokens ([INST], [TOOL_CALLS], [AVAILABLE_TOOLS], ...);
//   - samples_v3.json.gz: mistral-common's tokenized chat samples for v3,
//     ids made by the sentencepiece library itself.

// spPiece is one entry of a SentencePiece ModelProto.
type spPiece struct {
	piece string
	score float32
	typ   int // 1 normal, 2 unknown, 3 control, 4 user defined, 6 byte
}

// protoFields walks the fields of a protobuf message: number, wire type,
// and the value (varint, or the bytes of a fixed or length-delimited one).
func protoFields(b []byte, f func(num, wire int, v uint64, data []byte) error) error {
	for len(b) > 0 {
		key, n := binary.Uvarint(b)
		if n <= 0 {
			return fmt.Errorf("bad field key")
		}
		b = b[n:]
		num, wire := int(key>>3), int(key&7)
		var v uint64
		var data []byte
		switch wire {
		case 0:
			v, n = binary.Uvarint(b)
			if n <= 0 {
				return fmt.Errorf("bad varint in field %d", num)
			}
			b = b[n:]
		case 1, 5:
			size := 8
			if wire == 5 {
				size = 4
			}
			if len(b) < size {
				return fmt.Errorf("field %d cut short", num)
			}
			data, b = b[:size], b[size:]
		case 2:
			l, n := binary.Uvarint(b)
			if n <= 0 || uint64(len(b)-n) < l {
				return fmt.Errorf("field %d cut short", num)
			}
			data, b = b[n:n+int(l)], b[n+int(l):]
		default:
			return fmt.Errorf("field %d: wire type %d", num, wire)
		}
		if err := f(num, wire, v, data); err != nil {
			return err
		}
	}
	return nil
}

// sentencePieces reads the pieces (ModelProto field 1) of a SentencePiece
// model file.
func sentencePieces(model []byte) ([]spPiece, error) {
	var out []spPiece
	err := protoFields(model, func(num, wire int, _ uint64, data []byte) error {
		if num != 1 || wire != 2 {
			return nil
		}
		p := spPiece{typ: 1}
		err := protoFields(data, func(num, wire int, v uint64, data []byte) error {
			switch {
			case num == 1 && wire == 2:
				p.piece = string(data)
			case num == 2 && wire == 5:
				p.score = math.Float32frombits(binary.LittleEndian.Uint32(data))
			case num == 3 && wire == 0:
				p.typ = int(v)
			}
			return nil
		})
		out = append(out, p)
		return err
	})
	return out, err
}

// mistralV1JSON is the shipped Mistral 7B v0.1 tokenizer.json.
func mistralV1JSON(t *testing.T) []byte {
	return readGzip(t, filepath.Join("testdata", "mistral", "tokenizer.json.gz"))
}

// mistralV3 builds Mistral 7B v0.3's tokenizer.json the way Hugging Face's
// converter does, from mistral-common's v3 SentencePiece model: its pieces
// as the vocabulary, its unknown, control and user-defined pieces as
// special added tokens, and the merges and pipeline of the v0.1 file (the
// ordinary pieces and their scores are v0.1's, which the test checks). It
// returns the tokenizer and the path of the file written.
func mistralV3(t *testing.T) (*tokenizer.Tokenizer, string) {
	t.Helper()
	pieces, err := sentencePieces(readGzip(t, filepath.Join("testdata", "mistral", "tokenizer.model.v3.gz")))
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(mistralV1JSON(t), &doc); err != nil {
		t.Fatal(err)
	}
	model := doc["model"].(map[string]any)
	v1 := model["vocab"].(map[string]any)
	if len(pieces) != 32768 || len(v1) != 32000 {
		t.Fatalf("%d v3 pieces and %d v0.1 tokens, want 32768 and 32000", len(pieces), len(v1))
	}
	// v3 = v0.1's <unk>, <s>, </s>, then 768 control tokens, then v0.1's
	// other 31,997 tokens in order.
	for tok, id := range v1 {
		n := int(id.(float64))
		if n >= 3 {
			n += 768
		}
		if pieces[n].piece != tok {
			t.Fatalf("v0.1 token %q (id %v) is %q at v3 id %d", tok, id, pieces[n].piece, n)
		}
	}
	vocab := map[string]int{}
	var added []map[string]any
	for id, p := range pieces {
		vocab[p.piece] = id
		if p.typ == 2 || p.typ == 3 || p.typ == 4 {
			added = append(added, map[string]any{"id": id, "content": p.piece, "single_word": false,
				"lstrip": false, "rstrip": false, "normalized": false, "special": true})
		}
	}
	if len(added) != 771 {
		t.Fatalf("%d control tokens, want 771", len(added))
	}
	model["vocab"] = vocab
	doc["added_tokens"] = added
	out, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "tokenizer.json")
	if err := os.WriteFile(path, out, 0o644); err != nil {
		t.Fatal(err)
	}
	tok, err := tokenizer.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := tok.SetSpecialTokens("<s>", "</s>"); err != nil {
		t.Fatal(err)
	}
	return tok, path
}

// TestMistralV3SentencePieceSamples encodes mistral-common's v3 chat
// samples (tool definitions, tool calls and results, several turns) and
// compares with the ids the sentencepiece library gave there. The samples
// are written as pieces ("▁" for a space); sentencepiece encodes each text
// between control tokens on its own with a "▁" in front, which the text
// given to pitstop leaves out and the normalizer puts back.
func TestMistralV3SentencePieceSamples(t *testing.T) {
	tok, _ := mistralV3(t)
	var samples []struct {
		Sample string  `json:"sample"`
		Text   string  `json:"text_v3"`
		Tokens []int32 `json:"tokens_v3"`
	}
	if err := json.Unmarshal(readGzip(t, filepath.Join("testdata", "mistral", "samples_v3.json.gz")), &samples); err != nil {
		t.Fatal(err)
	}
	if len(samples) != 6 {
		t.Fatalf("%d samples, want 6", len(samples))
	}
	var controls []string
	for _, a := range tok.AddedTokens() {
		controls = append(controls, a.Content)
	}
	byteToken := regexp.MustCompile(`<0x[0-9A-F]{2}>`)
	for _, s := range samples {
		// The pieces as text: "▁" a space, "<0x0A>" the byte it names.
		raw := byteToken.ReplaceAllStringFunc(strings.ReplaceAll(s.Text, "▁", " "), func(b string) string {
			v, _ := strconv.ParseUint(b[3:5], 16, 8)
			return string([]byte{byte(v)})
		})
		text := raw
		for _, c := range controls {
			text = strings.ReplaceAll(text, c+" ", c)
		}
		got := tok.Encode(text, true)
		if !slices.Equal(got, s.Tokens) {
			i := 0
			for i < min(len(got), len(s.Tokens)) && got[i] == s.Tokens[i] {
				i++
			}
			t.Errorf("%s: ids differ from sentencepiece's at %d of %d (pitstop %d tokens)\npitstop %v\nspm     %v",
				s.Sample, i, len(s.Tokens), len(got), got[i:min(len(got), i+8)], s.Tokens[i:min(len(s.Tokens), i+8)])
			continue
		}
		if tok.Decode(got) != raw {
			t.Errorf("%s: ids do not decode to the sample's text", s.Sample)
		}
	}
}

// TestMistral7BMatchesHuggingFace compares Mistral 7B's tokenizers, v0.1's
// file and the v0.3 one built from mistral-common's model, with
// @huggingface/tokenizers; v0.3's [INST], [TOOL_CALLS] and the rest are
// special added tokens there, which the rendered tool prompt uses.
func TestMistral7BMatchesHuggingFace(t *testing.T) {
	v1 := filepath.Join(t.TempDir(), "tokenizer.json")
	if err := os.WriteFile(v1, mistralV1JSON(t), 0o644); err != nil {
		t.Fatal(err)
	}
	tok1, err := tokenizer.Load(v1)
	if err != nil {
		t.Fatal(err)
	}
	tok3, v3 := mistralV3(t)
	texts := referenceTexts(t, "mistral-v0.3-tools.jinja", "<s>", "</s>")
	for _, c := range []struct {
		name string
		tok  *tokenizer.Tokenizer
		path string
	}{{"mistral-7b-v0.1", tok1, v1}, {"mistral-7b-v0.3", tok3, v3}} {
		same := matchHuggingFace(t, c.name, c.tok, c.path, "", texts)
		t.Logf("%s: %d of %d texts tokenized identically (vocabulary %d)", c.name, same, len(texts), c.tok.VocabSize())
	}
}
