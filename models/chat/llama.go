package chat

import "fmt"

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

// ToolCallMarkup: "<|python_tag|>" is Llama 3's marker token, but the JSON
// tool calls of the 3.1 template are written without it as a rule.
func (l *Llama31) ToolCallMarkup() Markup { return Markup{Open: pythonTag, Unmarked: true} }

func (l *Llama31) NewParser(opts ...ParserOption) ToolCallParser { return NewLlamaParser(opts...) }

func header(role string) string { return "<|start_header_id|>" + role + "<|end_header_id|>\n\n" }

const llamaFormatLine = `Respond in the format {"name": function name, "parameters": dictionary of argument name and its value}.Do not use variables.` + "\n\n"

// Render follows the official template. Two places where it raises an
// error are handled instead: an assistant turn with several tool calls is
// written as the calls separated by "; " (what NewLlamaParser reads), and
// tools with no message to carry them is an error.
func (l *Llama31) Render(msgs []Message, tools []Tool, addGenerationPrompt bool) (string, error) {
	r, err := l.RenderSpans(msgs, tools, addGenerationPrompt)
	return r.Text, err
}

func (l *Llama31) RenderSpans(msgs []Message, tools []Tool, addGenerationPrompt bool) (Rendered, error) {
	var b spanWriter
	b.WriteString("<|begin_of_text|>")
	first := 0 // index in the caller's msgs of msgs[0]
	system, hasSystem := "", false
	if len(msgs) > 0 && msgs[0].Role == RoleSystem {
		system, hasSystem = pyStrip(msgs[0].Content), true
		msgs = msgs[1:]
		first = 1
	}
	toolDefs := make([]string, len(tools))
	for i, t := range tools {
		v, err := toolValue(t)
		if err != nil {
			return Rendered{}, err
		}
		toolDefs[i] = pyDumps(v, 4)
	}
	writeTools := func() {
		for i, d := range toolDefs {
			b.span(d, SpanToolDef, i, "")
			b.WriteString("\n\n")
		}
	}
	b.WriteString(header("system"))
	if len(tools) > 0 {
		b.WriteString("Environment: ipython\n")
	}
	b.WriteString("Cutting Knowledge Date: December 2023\nToday Date: " + l.opts.DateString + "\n\n")
	if len(tools) > 0 && l.opts.ToolsInSystem {
		b.WriteString("You have access to the following functions. To call a function, please respond with JSON for a function call.")
		b.WriteString(llamaFormatLine)
		writeTools()
	}
	if hasSystem {
		b.span(system, SpanContent, 0, RoleSystem)
	}
	b.WriteString("<|eot_id|>")
	if len(tools) > 0 && !l.opts.ToolsInSystem {
		if len(msgs) == 0 {
			return Rendered{}, fmt.Errorf("chat: llama3.1: cannot put tools in the first user message when there's no first user message")
		}
		b.WriteString(header("user"))
		b.WriteString("Given the following functions, please respond with a JSON for a function call with its proper arguments that best answers the given prompt.\n\n")
		b.WriteString(llamaFormatLine)
		writeTools()
		b.span(pyStrip(msgs[0].Content), SpanContent, first, msgs[0].Role)
		b.WriteString("<|eot_id|>")
		msgs = msgs[1:]
		first++
	}
	for j, m := range msgs {
		i := first + j
		switch {
		case m.Role == RoleTool || m.Role == "ipython":
			l.toolResult(&b, m, i)
		case len(m.ToolCalls) > 0:
			b.WriteString(header("assistant"))
			for k, tc := range m.ToolCalls {
				args, err := argsJSON(tc)
				if err != nil {
					return Rendered{}, err
				}
				if k > 0 {
					b.WriteString("; ")
				}
				b.span(`{"name": "`+tc.Name+`", "parameters": `+args+"}", SpanToolCall, i, m.Role)
			}
			b.WriteString("<|eot_id|>")
		case m.Role == RoleSystem || m.Role == RoleUser || m.Role == RoleAssistant:
			b.WriteString(header(m.Role))
			b.span(pyStrip(m.Content), SpanContent, i, m.Role)
			b.WriteString("<|eot_id|>")
		default:
			return Rendered{}, fmt.Errorf("chat: llama3.1: message %d has unknown role %q (want system, user, assistant, tool or ipython)", j, m.Role)
		}
	}
	if addGenerationPrompt {
		b.WriteString(header("assistant"))
	}
	return b.rendered(), nil
}

// toolResult writes an ipython turn. The official template tests `content
// is iterable`, which a string is, so the result goes through tojson: it
// appears as a JSON string literal, whose inside is the span.
func (l *Llama31) toolResult(b *spanWriter, m Message, i int) {
	b.WriteString(header("ipython") + `"`)
	q := pyQuote(m.Content)
	b.span(q[1:len(q)-1], SpanContent, i, m.Role)
	b.WriteString(`"<|eot_id|>`)
}

func (l *Llama31) RenderToolResults(results []Message, addGenerationPrompt bool) (string, error) {
	r, err := l.RenderToolResultsSpans(results, addGenerationPrompt)
	return r.Text, err
}

func (l *Llama31) RenderToolResultsSpans(results []Message, addGenerationPrompt bool) (Rendered, error) {
	if err := checkToolResults("llama3.1", results); err != nil {
		return Rendered{}, err
	}
	var b spanWriter
	for i, m := range results {
		l.toolResult(&b, m, i)
	}
	if addGenerationPrompt {
		b.WriteString(header("assistant"))
	}
	return b.rendered(), nil
}
