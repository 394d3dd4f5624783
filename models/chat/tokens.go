package chat

import "github.com/pitstop-llm/pitstop/models/tokenizer"

// TokenReader reads a model's output token by token into a tool-call
// parser with each piece's provenance: a marker token (MarkerTokens) goes
// to the parser as a special piece, any other token through a streaming
// decoder as text. Special tokens that are not markers are dropped, as
// they are from any decoded output. A TokenReader is not safe for
// concurrent use.
type TokenReader struct {
	tok     *tokenizer.Tokenizer
	markers map[int32]string
	dec     *tokenizer.Decoder
	p       ToolCallParser
}

// NewTokenReader returns a reader of one assistant turn into p.
func NewTokenReader(tok *tokenizer.Tokenizer, markers map[int32]string, p ToolCallParser) *TokenReader {
	return &TokenReader{tok: tok, markers: markers, dec: tok.NewDecoder(true), p: p}
}

// Add reads one token and returns the parser's events.
func (r *TokenReader) Add(id int32) []Event {
	if m, ok := r.markers[id]; ok {
		// Text held by the decoder (an unfinished character) comes first.
		var ev []Event
		if txt := r.dec.Flush(); txt != "" {
			ev = r.p.Feed(txt, false)
		}
		return append(ev, r.p.Feed(m, true)...)
	}
	if txt := r.dec.Add(id); txt != "" {
		return r.p.Feed(txt, false)
	}
	return nil
}

// Close ends the output: the decoder's held text, then the parser's.
func (r *TokenReader) Close() []Event {
	var ev []Event
	if txt := r.dec.Flush(); txt != "" {
		ev = r.p.Feed(txt, false)
	}
	return append(ev, r.p.Close()...)
}

// ParseTokens reads a whole output of tokens with their provenance (a
// TokenReader over a fresh parser of t) and folds the events into a Result.
func ParseTokens(t Template, tok *tokenizer.Tokenizer, markers map[int32]string, ids []int32, opts ...ParserOption) Result {
	r := NewTokenReader(tok, markers, t.NewParser(opts...))
	var ev []Event
	for _, id := range ids {
		ev = append(ev, r.Add(id)...)
	}
	return Summarize(append(ev, r.Close()...))
}
