package chat

import (
	"fmt"
	"sort"
	"strings"
	"unicode"
)

// Template renders conversations for one model family and parses what the
// model writes back.
type Template interface {
	// Name is the name Lookup knows the template by.
	Name() string
	// Render writes the whole prompt for msgs and tools, ending with the
	// assistant's header when addGenerationPrompt is set.
	Render(msgs []Message, tools []Tool, addGenerationPrompt bool) (string, error)
	// RenderToolResults writes what follows an assistant turn that ended in
	// tool calls, once the tools ran: the text to append right after the
	// turn's end token (EndOfTurn, or whichever stop token ended it), then
	// the assistant header when addGenerationPrompt is set. Each result is a
	// message with role "tool". Render of the whole conversation equals the
	// earlier prompt, the generated turn, its end token and this text.
	RenderToolResults(results []Message, addGenerationPrompt bool) (string, error)
	// RenderSpans is Render that also reports where the conversation's
	// text (message contents, tool calls, tool definitions) lies in the
	// prompt, for tokenizing it without special tokens (Rendered.Encode).
	RenderSpans(msgs []Message, tools []Tool, addGenerationPrompt bool) (Rendered, error)
	// RenderToolResultsSpans is RenderToolResults with the spans of the
	// results' contents (Span.Msg indexes results).
	RenderToolResultsSpans(results []Message, addGenerationPrompt bool) (Rendered, error)
	// EndOfTurn is the token text that closes an assistant turn in a
	// rendered conversation.
	EndOfTurn() string
	// StopStrings are the texts that end generation.
	StopStrings() []string
	// ToolCallMarkup is the markup of the template's tool calls, which
	// the model writes as tokens of their own when its tokenizer has them.
	ToolCallMarkup() Markup
	// NewParser returns a streaming parser for the model's tool calls
	// (marker tokens only unless WithProvenance says otherwise).
	NewParser(opts ...ParserOption) ToolCallParser
}

var templates = map[string]func() Template{
	"qwen2.5":  func() Template { return NewQwen25() },
	"hermes":   func() Template { return NewHermes() },
	"llama3.1": func() Template { return NewLlama31(Llama31Options{}) },
}

// Names lists the names Lookup accepts.
func Names() []string {
	var out []string
	for n := range templates {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Lookup returns the template called name (case-insensitive).
func Lookup(name string) (Template, error) {
	if f, ok := templates[strings.ToLower(strings.TrimSpace(name))]; ok {
		return f(), nil
	}
	return nil, fmt.Errorf("chat: unknown template %q (valid: %s)", name, strings.Join(Names(), ", "))
}

// pyStrip is Python's str.strip() (Jinja's trim filter).
func pyStrip(s string) string {
	return strings.TrimFunc(s, func(r rune) bool {
		return unicode.IsSpace(r) || (r >= 0x1c && r <= 0x1f)
	})
}
