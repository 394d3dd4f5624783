package chat

import "github.com/pitstop-llm/pitstop/models/tokenizer"

// Markup is a template's tool-call markup: the marker texts a tokenizer may
// have tokens of their own for. A model that means to call a tool writes
// the marker token; text that merely spells a marker (a model echoing a
// user's message that holds one) is text. See docs/tool-call-provenance.md.
type Markup struct {
	// Open is the marker that opens tool calls ("<tool_call>"; Llama 3.1's
	// "<|python_tag|>").
	Open string
	// Close is the marker that closes one ("</tool_call>"; "" when the
	// format has none).
	Close string
	// Unmarked says the format also has tool calls that no marker opens
	// (Llama 3.1's JSON object at the start of the output): no token can
	// tell such a call from text.
	Unmarked bool
}

// Markers lists the marker texts of m.
func (m Markup) Markers() []string {
	if m.Close == "" {
		return []string{m.Open}
	}
	return []string{m.Open, m.Close}
}

// Provenance says where a parser accepts tool-call markup from. A marker
// that arrives as a marker token (Feed with special set) always counts;
// text that spells a marker counts only where a Spelled field says so, and
// is content otherwise. The zero value is the strictest: only marker tokens
// open and close calls, and no call opens without one.
type Provenance struct {
	// SpelledOpen: text that spells the opening marker opens a call. Set
	// only when the tokenizer has no token for it, or the output's tokens
	// are unknown (TextProvenance).
	SpelledOpen bool
	// SpelledClose: text that spells the closing marker closes a call.
	SpelledClose bool
	// Unmarked: calls that no marker opens count (Markup.Unmarked).
	Unmarked bool
}

// TextProvenance trusts text: spelled markers count and so do unmarked
// calls. It is for output held only as text, whose tokens are unknown
// (Parse), and is what a tokenizer without marker tokens allows by default.
func TextProvenance() Provenance {
	return Provenance{SpelledOpen: true, SpelledClose: true, Unmarked: true}
}

// TextCalls reports whether text alone can make a tool call under p, so
// that a model repeating text it was given can call a tool.
func (p Provenance) TextCalls() bool { return p.SpelledOpen || p.Unmarked }

// ProvenanceFor returns the rules for a template with markup m whose
// tokenizer has the marker tokens in markers (MarkerTokens). A marker with
// a token counts only as that token. By default a marker without one counts
// when spelled, there being no other way to write it, and unmarked calls
// count. With strict, calls open only on a marker token: text can never
// call a tool (a closing marker without a token still counts spelled: the
// call it closes was opened by a token).
func ProvenanceFor(m Markup, markers map[int32]string, strict bool) Provenance {
	has := map[string]bool{}
	for _, s := range markers {
		has[s] = true
	}
	p := Provenance{SpelledClose: m.Close != "" && !has[m.Close]}
	if !strict {
		p.SpelledOpen = !has[m.Open]
		p.Unmarked = m.Unmarked
	}
	return p
}

// MarkerTokens returns the tokens of tok's own for the markers of m, by
// id: the added tokens whose text is a marker, flagged special or not
// (Qwen2.5's <tool_call> is an added token not flagged special). Ordinary
// vocabulary tokens that happen to spell a marker are not marker tokens:
// text encodes to them.
func MarkerTokens(m Markup, tok *tokenizer.Tokenizer) map[int32]string {
	out := map[int32]string{}
	for _, a := range tok.AddedTokens() {
		for _, s := range m.Markers() {
			if a.Content == s {
				out[a.ID] = s
			}
		}
	}
	return out
}

// WithProvenance sets where the parser accepts markup from (default: the
// zero Provenance, marker tokens only).
func WithProvenance(p Provenance) ParserOption {
	return func(c *parserConfig) { c.prov = p }
}

// allMarkers are the markers of every template Lookup knows: conversation
// text must never become one of their tokens (Rendered.Encode).
func allMarkers() []string {
	var out []string
	for _, name := range Names() {
		t, _ := Lookup(name)
		out = append(out, t.ToolCallMarkup().Markers()...)
	}
	return out
}
