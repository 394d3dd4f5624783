package predictor

import (
	"fmt"
	"slices"

	tiktoken "github.com/pkoukk/tiktoken-go"
	tiktoken_loader "github.com/pkoukk/tiktoken-go-loader"
)

// TokenCounter counts the tokens of a text. Whoever knows the tokenizer of
// the model that wrote a text counts with it: the runtime with the served
// model's (its trace records carry the counts it generated), the converters
// of public traces with the tokenizer of the models those traces came from
// (TiktokenCounter).
type TokenCounter func(string) int

// The tiktoken encodings TiktokenCounter knows, by the models that use them.
const (
	// EncodingGPT2 is GPT-2's byte-level BPE, which GPT-J (InferCept's model)
	// shares: tiktoken's r50k_base has its 50,257 ranks and its pre-tokenizer.
	EncodingGPT2  = "r50k_base"
	EncodingGPT4  = "cl100k_base" // GPT-3.5, GPT-4
	EncodingGPT4o = "o200k_base"  // GPT-4o
	// DefaultEncoding is what the converters count with when given no
	// counter: the InferCept traces' own (GPT-J), so that every record of
	// the default training set counts in the same unit.
	DefaultEncoding = EncodingGPT2
)

// TiktokenEncodings lists the encodings TiktokenCounter accepts.
var TiktokenEncodings = []string{EncodingGPT2, EncodingGPT4, EncodingGPT4o}

// TiktokenCounter returns a counter of the tokens of a tiktoken encoding
// (TiktokenEncodings), counted exactly as the models of that encoding see a
// text (special-token text is counted as ordinary text). Its rank file comes
// from the offline loader (github.com/pkoukk/tiktoken-go-loader embeds
// them): nothing is downloaded, so counts are the same on every machine.
// Loading takes a fraction of a second; make one counter and reuse it. The
// counter is not safe for concurrent use.
func TiktokenCounter(encoding string) (TokenCounter, error) {
	if !slices.Contains(TiktokenEncodings, encoding) {
		return nil, fmt.Errorf("predictor: unknown tiktoken encoding %q (known: %v)", encoding, TiktokenEncodings)
	}
	// tiktoken-go reads rank files through a package-level loader; the
	// offline one only ever serves the embedded files.
	tiktoken.SetBpeLoader(tiktoken_loader.NewOfflineLoader())
	enc, err := tiktoken.GetEncoding(encoding)
	if err != nil {
		return nil, fmt.Errorf("predictor: tiktoken encoding %s: %w", encoding, err)
	}
	return func(s string) int { return len(enc.EncodeOrdinary(s)) }, nil
}

// counterOr returns count, or when it is nil a counter of DefaultEncoding.
func counterOr(count TokenCounter) (TokenCounter, error) {
	if count != nil {
		return count, nil
	}
	return TiktokenCounter(DefaultEncoding)
}
