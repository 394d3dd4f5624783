package chat

import (
	"strings"

	"github.com/pitstop-llm/pitstop/models/tokenizer"
)

// SpanKind says what a span of a rendered prompt holds.
type SpanKind uint8

const (
	// SpanContent is a message's content as the template writes it (Llama
	// 3.1's template trims it, and writes a tool result as the inside of a
	// JSON string literal).
	SpanContent SpanKind = iota + 1
	// SpanToolCall is one tool call of an assistant message as written: the
	// JSON object with the call's name and arguments.
	SpanToolCall
	// SpanToolDef is one tool's definition (JSON) in the tools block.
	SpanToolDef
)

func (k SpanKind) String() string {
	switch k {
	case SpanContent:
		return "content"
	case SpanToolCall:
		return "tool_call"
	case SpanToolDef:
		return "tool_def"
	}
	return "unknown"
}

// Span is a byte range [Start, End) of a rendered prompt that holds text of
// the conversation rather than the template's markup: the text a client or
// a tool supplied, which must never become special tokens.
type Span struct {
	Start, End int
	Kind       SpanKind
	// Msg is the index of the message the text comes from (of the result,
	// for RenderToolResultsSpans); for SpanToolDef, the index of the tool.
	Msg int
	// Role is the role of that message ("" for SpanToolDef).
	Role string
}

// Rendered is a rendered prompt and the spans of conversation text in it,
// in order, not overlapping, none empty.
type Rendered struct {
	Text  string
	Spans []Span
}

// Slice returns Text[i:j] with the spans that fall in it, clipped to it and
// shifted to its start.
func (r Rendered) Slice(i, j int) Rendered {
	out := Rendered{Text: r.Text[i:j]}
	for _, s := range r.Spans {
		s.Start, s.End = max(s.Start, i)-i, min(s.End, j)-i
		if s.Start < s.End {
			out.Spans = append(out.Spans, s)
		}
	}
	return out
}

// Isolated reports whether the span is tokenized apart from the markup
// around it: the contents of system, user and tool messages, text that
// comes from outside the model. The model's own text (an assistant's
// content and tool calls) and the tool definitions are tokenized together
// with the markup around them, only with special tokens switched off, so
// that they get the tokens the model wrote.
func (s Span) Isolated() bool { return s.Kind == SpanContent && s.Role != RoleAssistant }

// TokenSpans converts the spans for tokenizer.EncodeSpans.
func (r Rendered) TokenSpans() []tokenizer.Span {
	out := make([]tokenizer.Span, len(r.Spans))
	for i, s := range r.Spans {
		out[i] = tokenizer.Span{Start: s.Start, End: s.End, Cut: s.Isolated()}
	}
	return out
}

// Encode tokenizes the prompt with tok: the template's markup with special
// tokens, the conversation text in the spans as plain text (see
// tokenizer.EncodeSpans and Span.Isolated). The server and the tiny
// model's training both tokenize this way.
//
// Conversation text never becomes a tool-call marker token, not even one
// the tokenizer does not flag special (Qwen2.5's <tool_call>), which
// Hugging Face matches in any text: a span that spells such a marker is
// cut inside it (see markerCuts), so that a model repeating the text
// repeats text, which its parser takes for content.
func (r Rendered) Encode(tok *tokenizer.Tokenizer) ([]int32, error) {
	return tok.EncodeSpans(r.Text, markerCuts(r.Text, r.TokenSpans(), plainMarkers(tok)))
}

// plainMarkers are the tool-call markers (of any template) that are added
// tokens of tok not flagged special: text encodes to them.
func plainMarkers(tok *tokenizer.Tokenizer) []string {
	var out []string
	for _, a := range tok.AddedTokens() {
		if a.Special {
			continue
		}
		for _, m := range allMarkers() {
			if a.Content == m {
				out = append(out, m)
			}
		}
	}
	return out
}

// markerCuts splits each span of text that spells one of markers into
// spans tokenized on their own, cut one byte into each occurrence: no piece
// holds a whole marker. Spans without one are left as they are.
func markerCuts(text string, spans []tokenizer.Span, markers []string) []tokenizer.Span {
	if len(markers) == 0 {
		return spans
	}
	var out []tokenizer.Span
	for _, s := range spans {
		var cuts []int
		for i := s.Start; i < s.End; i++ {
			for _, m := range markers {
				if strings.HasPrefix(text[i:s.End], m) {
					cuts = append(cuts, i+1)
					break
				}
			}
		}
		if len(cuts) == 0 {
			out = append(out, s)
			continue
		}
		start := s.Start
		for _, c := range append(cuts, s.End) {
			out = append(out, tokenizer.Span{Start: start, End: c, Cut: true})
			start = c
		}
	}
	return out
}

// spanWriter builds a Rendered: markup is written with WriteString,
// conversation text with span.
type spanWriter struct {
	b     strings.Builder
	spans []Span
}

func (w *spanWriter) WriteString(s string) { w.b.WriteString(s) }

func (w *spanWriter) span(s string, kind SpanKind, msg int, role string) {
	if s == "" {
		return
	}
	start := w.b.Len()
	w.b.WriteString(s)
	w.spans = append(w.spans, Span{Start: start, End: w.b.Len(), Kind: kind, Msg: msg, Role: role})
}

func (w *spanWriter) rendered() Rendered { return Rendered{Text: w.b.String(), Spans: w.spans} }
