package chat

import "fmt"

// QwenDefaultSystem is the system prompt the Qwen2.5 template writes when the
// conversation has none.
const QwenDefaultSystem = "You are Qwen, created by Alibaba Cloud. You are a helpful assistant."

const (
	hermesToolsHead = "# Tools\n\nYou may call one or more functions to assist with the user query.\n\nYou are provided with function signatures within <tools></tools> XML tags:\n<tools>"
	hermesToolsTail = "\n</tools>\n\nFor each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:\n<tool_call>\n{\"name\": <function-name>, \"arguments\": <args-json-object>}\n</tool_call><|im_end|>\n"
)

// ChatML is the ChatML family with Hermes tool calls (<tool_call> JSON
// </tool_call>): Qwen2.5's template, and "hermes", the same without the
// default system prompt (as Qwen3 renders it, minus thinking).
type ChatML struct {
	name          string
	defaultSystem string // "" writes no system turn when there is none
}

// NewQwen25 returns the Qwen2.5-Instruct template.
func NewQwen25() *ChatML { return &ChatML{name: "qwen2.5", defaultSystem: QwenDefaultSystem} }

// NewHermes returns the generic ChatML + Hermes tool-call template: Qwen2.5's
// format without a default system prompt.
func NewHermes() *ChatML { return &ChatML{name: "hermes"} }

func (c *ChatML) Name() string          { return c.name }
func (c *ChatML) EndOfTurn() string     { return "<|im_end|>" }
func (c *ChatML) StopStrings() []string { return []string{"<|im_end|>", "<|endoftext|>"} }

func (c *ChatML) ToolCallMarkup() Markup { return Markup{Open: openTag, Close: closeTag} }

func (c *ChatML) NewParser(opts ...ParserOption) ToolCallParser { return NewHermesParser(opts...) }

func (c *ChatML) Render(msgs []Message, tools []Tool, addGenerationPrompt bool) (string, error) {
	r, err := c.RenderSpans(msgs, tools, addGenerationPrompt)
	return r.Text, err
}

func (c *ChatML) RenderSpans(msgs []Message, tools []Tool, addGenerationPrompt bool) (Rendered, error) {
	var b spanWriter
	hasSystem := len(msgs) > 0 && msgs[0].Role == RoleSystem
	system := func() {
		if hasSystem {
			b.span(msgs[0].Content, SpanContent, 0, RoleSystem)
		} else {
			b.WriteString(c.defaultSystem)
		}
	}
	if len(tools) > 0 {
		b.WriteString("<|im_start|>system\n")
		if c.defaultSystem != "" || hasSystem {
			system()
			b.WriteString("\n\n")
		}
		b.WriteString(hermesToolsHead)
		for i, t := range tools {
			v, err := toolValue(t)
			if err != nil {
				return Rendered{}, err
			}
			b.WriteString("\n")
			b.span(pyDumps(v, 0), SpanToolDef, i, "")
		}
		b.WriteString(hermesToolsTail)
	} else if hasSystem || c.defaultSystem != "" {
		b.WriteString("<|im_start|>system\n")
		system()
		b.WriteString("<|im_end|>\n")
	}
	for i, m := range msgs {
		switch {
		case m.Role == RoleUser || (m.Role == RoleSystem && i > 0) || (m.Role == RoleAssistant && len(m.ToolCalls) == 0):
			b.WriteString("<|im_start|>" + m.Role + "\n")
			b.span(m.Content, SpanContent, i, m.Role)
			b.WriteString("<|im_end|>\n")
		case m.Role == RoleAssistant:
			b.WriteString("<|im_start|>assistant")
			if m.Content != "" {
				b.WriteString("\n")
				b.span(m.Content, SpanContent, i, m.Role)
			}
			for _, tc := range m.ToolCalls {
				args, err := argsJSON(tc)
				if err != nil {
					return Rendered{}, err
				}
				b.WriteString("\n<tool_call>\n")
				b.span("{\"name\": \""+tc.Name+"\", \"arguments\": "+args+"}", SpanToolCall, i, m.Role)
				b.WriteString("\n</tool_call>")
			}
			b.WriteString("<|im_end|>\n")
		case m.Role == RoleTool:
			if i == 0 || msgs[i-1].Role != RoleTool {
				b.WriteString("<|im_start|>user")
			}
			b.WriteString("\n<tool_response>\n")
			b.span(m.Content, SpanContent, i, m.Role)
			b.WriteString("\n</tool_response>")
			if i == len(msgs)-1 || msgs[i+1].Role != RoleTool {
				b.WriteString("<|im_end|>\n")
			}
		case m.Role == RoleSystem: // the first message, already written
		default:
			return Rendered{}, fmt.Errorf("chat: %s: message %d has unknown role %q (want system, user, assistant or tool)", c.name, i, m.Role)
		}
	}
	if addGenerationPrompt {
		b.WriteString("<|im_start|>assistant\n")
	}
	return b.rendered(), nil
}

func (c *ChatML) RenderToolResults(results []Message, addGenerationPrompt bool) (string, error) {
	r, err := c.RenderToolResultsSpans(results, addGenerationPrompt)
	return r.Text, err
}

func (c *ChatML) RenderToolResultsSpans(results []Message, addGenerationPrompt bool) (Rendered, error) {
	if err := checkToolResults(c.name, results); err != nil {
		return Rendered{}, err
	}
	var b spanWriter
	b.WriteString("\n<|im_start|>user")
	for i, m := range results {
		b.WriteString("\n<tool_response>\n")
		b.span(m.Content, SpanContent, i, m.Role)
		b.WriteString("\n</tool_response>")
	}
	b.WriteString("<|im_end|>\n")
	if addGenerationPrompt {
		b.WriteString("<|im_start|>assistant\n")
	}
	return b.rendered(), nil
}

func checkToolResults(name string, results []Message) error {
	if len(results) == 0 {
		return fmt.Errorf("chat: %s: no tool results to render", name)
	}
	for i, m := range results {
		if m.Role != RoleTool {
			return fmt.Errorf("chat: %s: tool result %d has role %q, want %q", name, i, m.Role, RoleTool)
		}
	}
	return nil
}
