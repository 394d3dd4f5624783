package remote

import (
	"encoding/json"
	"slices"

	"github.com/pitstop-llm/pitstop/models/chat"
)

// The OpenAI chat-completions wire format, as much of it as the router sends
// and reads.

type wireToolCall struct {
	Index    *int         `json:"index,omitempty"`
	ID       string       `json:"id,omitempty"`
	Type     string       `json:"type,omitempty"`
	Function wireFunction `json:"function"`
}

type wireFunction struct {
	Name      string `json:"name,omitempty"`
	Arguments string `json:"arguments"`
}

type wireMessage struct {
	Role       string         `json:"role"`
	Content    *string        `json:"content"`
	ToolCalls  []wireToolCall `json:"tool_calls,omitempty"`
	ToolCallID string         `json:"tool_call_id,omitempty"`
	Name       string         `json:"name,omitempty"`
}

// wireRequest is the chat-completions request the router sends; the
// backend kind's own fields are set only for that kind.
type wireRequest struct {
	Model string `json:"model,omitempty"`
	// The messages come first, spliced in by body (their encoding may be
	// an earlier generation's).
	Stream            bool              `json:"stream"`
	StreamOptions     wireStreamOptions `json:"stream_options"`
	Tools             []wireTool        `json:"tools,omitempty"`
	ToolChoice        json.RawMessage   `json:"tool_choice,omitempty"`
	ParallelToolCalls *bool             `json:"parallel_tool_calls,omitempty"`
	MaxTokens         int               `json:"max_tokens,omitempty"`
	Temperature       *float64          `json:"temperature,omitempty"`
	TopP              *float64          `json:"top_p,omitempty"`
	Seed              *int64            `json:"seed,omitempty"`
	Stop              []string          `json:"stop,omitempty"`
	ResponseFormat    json.RawMessage   `json:"response_format,omitempty"`
	Priority          *int              `json:"priority,omitempty"`     // vLLM, SGLang
	CachePrompt       bool              `json:"cache_prompt,omitempty"` // llama.cpp
	IDSlot            *int              `json:"id_slot,omitempty"`      // llama.cpp
	CacheSalt         string            `json:"cache_salt,omitempty"`   // vLLM, pitstop
}

type wireStreamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

type wireTool struct {
	Type     string `json:"type"`
	Function struct {
		Name        string          `json:"name"`
		Description string          `json:"description,omitempty"`
		Parameters  json.RawMessage `json:"parameters,omitempty"`
	} `json:"function"`
}

type wireUsage struct {
	PromptTokens        int `json:"prompt_tokens"`
	CompletionTokens    int `json:"completion_tokens"`
	PromptTokensDetails *struct {
		CachedTokens int `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
}

type wireChunk struct {
	Model   modelName `json:"model"`
	Choices []struct {
		Index int `json:"index"`
		// Content and FinishReason: null and "" mean the same here, and
		// strings spare the decoder an allocation each.
		Delta struct {
			Content   string         `json:"content"`
			ToolCalls []wireToolCall `json:"tool_calls"`
		} `json:"delta"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices"`
	Usage *wireUsage `json:"usage"`
	Error *wireError `json:"error"`
	// Pitstop is a pitstop backend's extension chunk: a tool round it ran
	// itself (its own registered tools), with its KV handling.
	Pitstop *struct {
		ToolRound json.RawMessage `json:"tool_round"`
	} `json:"pitstop"`
}

type wireError struct {
	Message string `json:"message"`
	Type    string `json:"type"`
}

func toWireMessages(msgs []chat.Message) []wireMessage {
	return appendWireMessages(make([]wireMessage, 0, len(msgs)), msgs)
}

// appendWireMessages appends msgs' wire form to out (never nil: an empty
// conversation is [], not null).
func appendWireMessages(out []wireMessage, msgs []chat.Message) []wireMessage {
	if out == nil {
		out = make([]wireMessage, 0, len(msgs))
	} else {
		out = slices.Grow(out, len(msgs))
	}
	for i := range msgs {
		m := &msgs[i]
		w := wireMessage{Role: m.Role, Content: &m.Content, ToolCallID: m.ToolCallID, Name: m.Name}
		if m.Role == chat.RoleAssistant && m.Content == "" && len(m.ToolCalls) > 0 {
			w.Content = nil
		}
		if m.Role != chat.RoleTool {
			w.Name = ""
		}
		if len(m.ToolCalls) > 0 {
			w.ToolCalls = make([]wireToolCall, 0, len(m.ToolCalls))
		}
		for _, tc := range m.ToolCalls {
			w.ToolCalls = append(w.ToolCalls, wireToolCall{ID: tc.ID, Type: "function", Function: wireFunction{Name: tc.Name, Arguments: tc.Arguments}})
		}
		out = append(out, w)
	}
	return out
}

func toWireTools(tools []chat.Tool) []wireTool {
	out := make([]wireTool, len(tools))
	for i, t := range tools {
		out[i].Type = "function"
		out[i].Function.Name, out[i].Function.Description, out[i].Function.Parameters = t.Name, t.Description, t.Parameters
	}
	return out
}
