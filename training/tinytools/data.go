package tinytools

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"

	"github.com/pitstop-llm/pitstop/models/tokenizer"
)

// Special tokens of the tokenizer, ids 0.. in this order.
var Specials = []string{"<|endoftext|>", "<|im_start|>", "<|im_end|>", "<tool_call>", "</tool_call>"}

// Data turns generated dialogues into token sequences for training and
// evaluation.
type Data struct {
	Tok *tokenizer.Tokenizer
	TS  *Toolset
	Gen *Generator

	mu       sync.Mutex
	prefixes map[int][]int32
}

// NewData wraps a tokenizer and a toolset.
func NewData(tok *tokenizer.Tokenizer, ts *Toolset) *Data {
	return &Data{Tok: tok, TS: ts, Gen: NewGenerator(ts), prefixes: map[int][]int32{}}
}

// TrainTokenizer trains the byte-level BPE on n generated training
// dialogues (their text after the shared prefix) plus each variant's prefix,
// repeated so that its words get merges, with the Qwen2 pre-tokenizer split
// (single digits, so that numbers are copied digit by digit).
func TrainTokenizer(ts *Toolset, seed int64, n, vocab int) (*tokenizer.Tokenizer, error) {
	g := NewGenerator(ts)
	var docs []string
	for i := range n {
		e, err := g.Example(seed, StreamTrain, i, -1)
		if err != nil {
			return nil, err
		}
		text, pl, _, err := e.Render(ts)
		if err != nil {
			return nil, err
		}
		docs = append(docs, text[pl:])
	}
	for v := range Variants {
		e, err := g.Example(seed, StreamTrain, 0, v)
		if err != nil {
			return nil, err
		}
		text, pl, _, err := e.Render(ts)
		if err != nil {
			return nil, err
		}
		for range 40 {
			docs = append(docs, text[:pl])
		}
	}
	tok, err := tokenizer.TrainWithOptions(docs, tokenizer.TrainOptions{VocabSize: vocab, Specials: Specials, Pattern: tokenizer.PatternQwen2})
	if err != nil {
		return nil, err
	}
	if err := tok.SetSpecialTokens("", "<|im_end|>"); err != nil {
		return nil, err
	}
	return tok, nil
}

// PrefixTokens returns the tokens every dialogue of variant v starts with.
func (d *Data) PrefixTokens(v int) ([]int32, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if p, ok := d.prefixes[v]; ok {
		return p, nil
	}
	n, err := PrefixLen(v, d.TS)
	if err != nil {
		return nil, err
	}
	e, err := d.Gen.Example(0, StreamTrain, 0, v)
	if err != nil {
		return nil, err
	}
	r, _, _, err := e.render(d.TS)
	if err != nil {
		return nil, err
	}
	p, err := r.Slice(0, n).Encode(d.Tok)
	if err != nil {
		return nil, err
	}
	d.prefixes[v] = p
	return p, nil
}

var errPrefixMismatch = errors.New("tinytools: dialogue does not start with its variant's prefix tokens")

// Encoded is one dialogue as tokens after its variant's prefix, with the
// positions whose next token is the model's to write.
type Encoded struct {
	Tokens  []int32
	Pos     []int   // positions t whose next token Tokens[t+1] is trained
	Targets []int32 // Tokens[t+1] for each t in Pos
}

// Encode tokenizes a dialogue and marks the assistant tokens.
func (d *Data) Encode(e Example) (Encoded, error) {
	r, pl, spans, err := e.render(d.TS)
	if err != nil {
		return Encoded{}, err
	}
	text := r.Text
	prefix, err := d.PrefixTokens(e.Variant)
	if err != nil {
		return Encoded{}, err
	}
	// The server's tokenization: markup with special tokens, the system
	// prompt, the question and the tool results on their own as plain
	// text, the model's own turns with the markup (chat.Span.Isolated).
	all, err := r.Encode(d.Tok)
	if err != nil {
		return Encoded{}, err
	}
	if len(all) <= len(prefix) {
		return Encoded{}, fmt.Errorf("tinytools: dialogue shorter than its prefix")
	}
	for i, id := range prefix {
		if all[i] != id {
			return Encoded{}, errPrefixMismatch
		}
	}
	var enc Encoded
	enc.Tokens = all[len(prefix):]
	// Byte offset of each suffix token.
	off := pl
	si := 0
	for t, id := range enc.Tokens {
		start := off
		off += len(d.Tok.TokenBytes(id))
		for si < len(spans) && start >= spans[si].End {
			si++
		}
		if t > 0 && si < len(spans) && start >= spans[si].Start {
			enc.Pos = append(enc.Pos, t-1)
			enc.Targets = append(enc.Targets, id)
		}
	}
	if off != len(text) {
		return Encoded{}, fmt.Errorf("tinytools: tokens cover %d bytes of %d", off, len(text))
	}
	return enc, nil
}

// Batch is one training step: examples of one variant sharing its prefix.
type Batch struct {
	Variant int
	Prefix  []int32
	Seqs    []Encoded
}

// TrainBatch builds the batch of a step: of the curriculum variant with
// probability shortFrac (shortSize dialogues), else of a variant drawn by
// weight (fullSize dialogues), both chosen from seed and step. The
// dialogues are examples step·shortSize .. of the training stream.
func (d *Data) TrainBatch(seed int64, step, shortSize, fullSize int, shortFrac float64) (Batch, error) {
	v := TrainVariant(seed, step, shortFrac)
	size := fullSize
	if v == ShortVariant {
		size = shortSize
	}
	return d.batch(seed, StreamTrain, v, step*max(shortSize, fullSize), size)
}

// TrainVariant is the variant of a training step.
func TrainVariant(seed int64, step int, shortFrac float64) int {
	r := rand.New(rand.NewPCG(uint64(seed)^0x73686f7274, uint64(step)))
	if r.Float64() < shortFrac {
		return ShortVariant
	}
	return PickVariant(seed, step)
}

// EvalBatch builds a held-out batch (the eval stream) of one variant.
func (d *Data) EvalBatch(seed int64, variant, first, size int) (Batch, error) {
	return d.batch(seed, StreamEval, variant, first, size)
}

func (d *Data) batch(seed int64, stream uint64, variant, first, size int) (Batch, error) {
	p, err := d.PrefixTokens(variant)
	if err != nil {
		return Batch{}, err
	}
	b := Batch{Variant: variant, Prefix: p}
	for i := first; len(b.Seqs) < size; i++ {
		e, err := d.Gen.Example(seed, stream, i, variant)
		if err != nil {
			return Batch{}, err
		}
		enc, err := d.Encode(e)
		if errors.Is(err, errPrefixMismatch) {
			continue // the server would tokenize this prompt's prefix differently
		}
		if err != nil {
			return Batch{}, err
		}
		b.Seqs = append(b.Seqs, enc)
	}
	return b, nil
}
