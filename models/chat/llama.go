package chat

import (
	"fmt"
	"strings"
)

// Llama31Options are the template variables of Llama 3.1's template.
type Llama31Options struct {
	// DateString is "Today Date" (default "26 Jul 2024", the template's own).
	DateString string
	// ToolsInSystem puts the tool list in the system turn instead of the
	// first user turn (the template's tools_in_user_message=false).
	ToolsInSystem bool
}

// Llama31 is Meta's Llama 3.1 Instruct template with JSON tool calls
// ({"name": ..., "parameters": {...}}) and tool results in "ipython" turns.
type Llama31 struct{ opts Llama31Options }

// NewLlama31 returns the Llama 3.1 template.
func NewLlama31(opts Llama31Options) *Llama31 {
	if opts.DateString == "" {
		opts.DateString = "26 Jul 2024"
	}
	return &Llama31{opts}
}

func (l *Llama31) Name() string      { return "llama3.1" }
func (l *Llama31) EndOfTurn() string { return "<|eot_id|>" }
func (l *Llama31) StopStrings() []string {
	return []string{"<|eot_id|>", "<|eom_id|>", "<|end_of_text|>"}
}
func (l *Llama31) NewParser(opts ...ParserOption) ToolCallParser { return NewLlamaParser(opts...) }

func header(role string) string { return "<|start_header_id|>" + role + "<|end_header_id|>\n\n" }

const llamaFormatLine = `Respond in the format {"name": function name, "parameters": dictionary of argument name and its value}.Do not use variables.` + "\n\n"

// Render follows the official template. Two places where it raises an
// error are handled instead: an assistant turn with several tool calls is
// written as the calls separated by "; " (what NewLlamaParser reads), and
// tools with no message to carry them is an error.
func (l *Llama31) Render(msgs []Message, tools []Tool, addGenerationPrompt bool) (string, error) {
	var b strings.Builder
	b.WriteString("<|begin_of_text|>")
	system := ""
	if len(msgs) > 0 && msgs[0].Role == RoleSystem {
		system = pyStrip(msgs[0].Content)
		msgs = msgs[1:]
	}
	var toolText strings.Builder
	for _, t := range tools {
		v, err := toolValue(t)
		if err != nil {
			return "", err
		}
		toolText.WriteString(pyDumps(v, 4))
		toolText.WriteString("\n\n")
	}
	b.WriteString(header("system"))
	if len(tools) > 0 {
		b.WriteString("Environment: ipython\n")
	}
	b.WriteString("Cutting Knowledge Date: December 2023\nToday Date: " + l.opts.DateString + "\n\n")
	if len(tools) > 0 && l.opts.ToolsInSystem {
		b.WriteString("You have access to the following functions. To call a function, please respond with JSON for a function call.")
		b.WriteString(llamaFormatLine)
		b.WriteString(toolText.String())
	}
	b.WriteString(system + "<|eot_id|>")
	if len(tools) > 0 && !l.opts.ToolsInSystem {
		if len(msgs) == 0 {
			return "", fmt.Errorf("chat: llama3.1: cannot put tools in the first user message when there's no first user message")
		}
		first := pyStrip(msgs[0].Content)
		msgs = msgs[1:]
		b.WriteString(header("user"))
		b.WriteString("Given the following functions, please respond with a JSON for a function call with its proper arguments that best answers the given prompt.\n\n")
		b.WriteString(llamaFormatLine)
		b.WriteString(toolText.String())
		b.WriteString(first + "<|eot_id|>")
	}
	for i, m := range msgs {
		switch {
		case m.Role == RoleTool || m.Role == "ipython":
			b.WriteString(l.toolResult(m))
		case len(m.ToolCalls) > 0:
			b.WriteString(header("assistant"))
			for j, tc := range m.ToolCalls {
				args, err := argsJSON(tc)
				if err != nil {
					return "", err
				}
				if j > 0 {
					b.WriteString("; ")
				}
				b.WriteString(`{"name": "` + tc.Name + `", "parameters": ` + args + "}")
			}
			b.WriteString("<|eot_id|>")
		case m.Role == RoleSystem || m.Role == RoleUser || m.Role == RoleAssistant:
			b.WriteString(header(m.Role) + pyStrip(m.Content) + "<|eot_id|>")
		default:
			return "", fmt.Errorf("chat: llama3.1: message %d has unknown role %q (want system, user, assistant, tool or ipython)", i, m.Role)
		}
	}
	if addGenerationPrompt {
		b.WriteString(header("assistant"))
	}
	return b.String(), nil
}

// toolResult writes an ipython turn. The official template tests `content
// is iterable`, which a string is, so the result goes through tojson: it
// appears as a JSON string literal.
func (l *Llama31) toolResult(m Message) string {
	return header("ipython") + pyQuote(m.Content) + "<|eot_id|>"
}

func (l *Llama31) RenderToolResults(results []Message, addGenerationPrompt bool) (string, error) {
	if err := checkToolResults("llama3.1", results); err != nil {
		return "", err
	}
	var b strings.Builder
	for _, m := range results {
		b.WriteString(l.toolResult(m))
	}
	if addGenerationPrompt {
		b.WriteString(header("assistant"))
	}
	return b.String(), nil
}
