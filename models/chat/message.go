// Package chat renders chat conversations into model prompts and parses the
// tool calls a model writes back, incrementally, as its tokens stream out.
// A model's own Jinja template (tokenizer_config.json, chat_template.jinja,
// a GGUF file) renders with github.com/ardanlabs/jinja, an engine written
// for chat templates, through Jinja (jinja*.go); three templates are also
// written by hand in Go (Qwen2.5, Hermes-style ChatML, Llama 3.1), equal to
// the official ones byte for byte, for the built-in tiny model, which has
// no Jinja source to ship. A call counts when
// the model wrote the template's markers as tokens of their own, not when
// its text spells them (provenance.go, docs/tool-call-provenance.md).
package chat

import "encoding/json"

// Roles of a chat message.
const (
	RoleSystem    = "system"
	RoleUser      = "user"
	RoleAssistant = "assistant"
	RoleTool      = "tool"
)

// Message is one turn of a conversation, in OpenAI's shape.
type Message struct {
	Role       string     `json:"role"`
	Content    string     `json:"content"`
	ToolCalls  []ToolCall `json:"tool_calls,omitempty"`
	ToolCallID string     `json:"tool_call_id,omitempty"` // role tool: the call this answers
	Name       string     `json:"name,omitempty"`
}

// ToolCall is a function call made by the assistant.
type ToolCall struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"` // a JSON object, as text
}

// Tool is a function the model may call.
type Tool struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters,omitempty"` // JSON Schema
}
