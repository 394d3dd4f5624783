package chat

import (
	"fmt"
	"sort"
	"strings"
)

// ToolFormat is how a model writes tool calls: the markup its tokenizer may
// have tokens for and the parser that reads them. Names are vLLM's
// --tool-call-parser names.
type ToolFormat struct {
	Name      string
	Markup    Markup
	NewParser func(opts ...ParserOption) ToolCallParser
}

var toolFormats = map[string]ToolFormat{
	"hermes": {Name: "hermes", Markup: Markup{Open: openTag, Close: closeTag},
		NewParser: func(opts ...ParserOption) ToolCallParser { return NewHermesParser(opts...) }},
	"mistral": {Name: "mistral", Markup: Markup{Open: mistralCalls},
		NewParser: func(opts ...ParserOption) ToolCallParser { return NewMistralParser(opts...) }},
	"llama3_json": {Name: "llama3_json", Markup: Markup{Open: pythonTag, Unmarked: true},
		NewParser: func(opts ...ParserOption) ToolCallParser { return NewLlamaParser(opts...) }},
}

// ToolFormatNames lists the tool-call parsers LookupToolFormat knows.
func ToolFormatNames() []string {
	var out []string
	for n := range toolFormats {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// LookupToolFormat returns the tool-call format called name: vLLM's parser
// names, with "-" for "_" accepted ("llama3-json").
func LookupToolFormat(name string) (ToolFormat, error) {
	n := strings.ReplaceAll(strings.ToLower(strings.TrimSpace(name)), "-", "_")
	if f, ok := toolFormats[n]; ok {
		return f, nil
	}
	return ToolFormat{}, fmt.Errorf("chat: unknown tool-call parser %q (valid: %s)", name, strings.Join(ToolFormatNames(), ", "))
}

// DetectToolFormat names the tool-call format a Jinja chat template
// writes, from its markup: <tool_call> is Hermes-style (Qwen2.5, Qwen3,
// Hermes), Llama 3 headers are Llama 3's JSON calls, [TOOL_CALLS] is
// Mistral's. "" when none shows.
func DetectToolFormat(src string) string {
	switch {
	case strings.Contains(src, openTag):
		return "hermes"
	case strings.Contains(src, "<|start_header_id|>"):
		return "llama3_json"
	case strings.Contains(src, mistralCalls):
		return "mistral"
	}
	return ""
}

// turnEnds are end-of-turn tokens of known template families, in the order
// they are looked for in a template's source.
var turnEnds = []string{"<|im_end|>", "<|eot_id|>", "<|end|>", "<end_of_turn>"}

// detectEndOfTurn is the token text that closes an assistant turn: the
// first of turnEnds the template writes, else its EOS token.
func detectEndOfTurn(src, eos string) string {
	for _, e := range turnEnds {
		if strings.Contains(src, e) {
			return e
		}
	}
	return eos
}
