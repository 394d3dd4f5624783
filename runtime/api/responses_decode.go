package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/pitstop-llm/pitstop/models/chat"
	"github.com/pitstop-llm/pitstop/runtime"
)

// responsesRequest is the JSON body of POST /v1/responses (OpenAI's
// Responses API; the fields pitstop supports).
type responsesRequest struct {
	Model              json.RawMessage `json:"model"`
	Input              json.RawMessage `json:"input"`
	Instructions       *string         `json:"instructions"`
	Tools              []responsesTool `json:"tools"`
	ToolChoice         json.RawMessage `json:"tool_choice"`
	ParallelToolCalls  *bool           `json:"parallel_tool_calls"`
	Stream             *bool           `json:"stream"`
	PreviousResponseID *string         `json:"previous_response_id"`
	Store              *bool           `json:"store"`
	MaxOutputTokens    *int            `json:"max_output_tokens"`
	Temperature        *float64        `json:"temperature"`
	TopP               *float64        `json:"top_p"`
	Text               *responsesText  `json:"text"`
	Metadata           json.RawMessage `json:"metadata"`
	Background         *bool           `json:"background"`
	User               *string         `json:"user"`
	SafetyIdentifier   *string         `json:"safety_identifier"`
	PromptCacheKey     *string         `json:"prompt_cache_key"`
	// the other fields are checked by checkResponsesFields
}

// responsesTool is a function tool, flat as the Responses API has it.
type responsesTool struct {
	Type        string          `json:"type"`
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
	Strict      *bool           `json:"strict"`
}

type responsesText struct {
	Format json.RawMessage `json:"format"`
}

// inputItem is one item of input: a message, a function call the model
// made, or a function call's output.
type inputItem struct {
	Type      string          `json:"type"`
	Role      string          `json:"role"`
	Content   json.RawMessage `json:"content"`
	CallID    string          `json:"call_id"`
	Name      string          `json:"name"`
	Arguments string          `json:"arguments"`
	Output    json.RawMessage `json:"output"`
	ID        string          `json:"id"`
	Status    string          `json:"status"`
}

// ResponsesParams is a decoded Responses request.
type ResponsesParams struct {
	Model        string
	Instructions string
	Input        []chat.Message // the request's input as chat messages
	Tools        []chat.Tool
	StrictTools  map[string]bool
	ToolChoice   runtime.ToolChoice
	Parallel     bool
	Stream       bool
	Previous     string
	Store        bool
	MaxTokens    int
	Temperature  *float64
	TopP         *float64
	Format       *runtime.ResponseFormat
	Background   bool
	Metadata     map[string]string
	// hints echoed in the response object
	User, SafetyIdentifier, PromptCacheKey *string
	// echoes for the response object
	rawTools      []responsesTool
	rawToolChoice any
}

// DecodeResponsesRequest decodes and checks the body of POST
// /v1/responses. Every error is an OpenAI-style 400 naming the field at
// fault. It never panics, whatever the input.
func DecodeResponsesRequest(body []byte) (*ResponsesParams, *APIError) {
	var raw responsesRequest
	if aerr := decodeObject(body, &raw); aerr != nil {
		return nil, aerr
	}
	if aerr := checkResponsesFields(body); aerr != nil {
		return nil, aerr
	}
	p := &ResponsesParams{Store: raw.Store == nil || *raw.Store, Parallel: raw.ParallelToolCalls == nil || *raw.ParallelToolCalls,
		Stream: raw.Stream != nil && *raw.Stream, Temperature: raw.Temperature, TopP: raw.TopP}
	if len(raw.Model) == 0 || bytes.Equal(raw.Model, []byte("null")) {
		return nil, invalid("model", "missing_required_parameter", "You must provide a model parameter.")
	}
	if err := json.Unmarshal(raw.Model, &p.Model); err != nil || strings.TrimSpace(p.Model) == "" {
		return nil, invalid("model", "invalid_type", "model must be a non-empty string.")
	}
	p.Background = raw.Background != nil && *raw.Background
	p.User, p.SafetyIdentifier, p.PromptCacheKey = raw.User, raw.SafetyIdentifier, raw.PromptCacheKey
	if len(raw.Metadata) > 0 && !bytes.Equal(bytes.TrimSpace(raw.Metadata), []byte("null")) {
		if json.Unmarshal(raw.Metadata, &p.Metadata) != nil {
			return nil, invalid("metadata", "invalid_type", "metadata must be an object of string values.")
		}
		if len(p.Metadata) > 16 {
			return nil, invalid("metadata", "invalid_value", "metadata has %d keys, at most 16.", len(p.Metadata))
		}
		for k, v := range p.Metadata {
			if len(k) > 64 || len(v) > 512 {
				return nil, invalid("metadata", "invalid_value", "metadata keys are at most 64 characters and values at most 512 (key %q).", k)
			}
		}
	}
	if raw.Instructions != nil {
		p.Instructions = *raw.Instructions
	}
	if raw.PreviousResponseID != nil {
		p.Previous = *raw.PreviousResponseID
		if !strings.HasPrefix(p.Previous, "resp_") {
			return nil, invalid("previous_response_id", "invalid_value", "previous_response_id must be a response id (resp_...), got %q.", p.Previous)
		}
	}
	if raw.MaxOutputTokens != nil {
		if *raw.MaxOutputTokens < 1 {
			return nil, invalid("max_output_tokens", "invalid_value", "max_output_tokens must be at least 1, got %d.", *raw.MaxOutputTokens)
		}
		p.MaxTokens = *raw.MaxOutputTokens
	}
	if t := raw.Temperature; t != nil && !(*t >= 0 && *t <= 2) {
		return nil, invalid("temperature", "invalid_value", "temperature must be between 0 and 2, got %g.", *t)
	}
	if tp := raw.TopP; tp != nil && !(*tp >= 0 && *tp <= 1) {
		return nil, invalid("top_p", "invalid_value", "top_p must be between 0 and 1, got %g.", *tp)
	}
	input, aerr := decodeInput(raw.Input)
	if aerr != nil {
		return nil, aerr
	}
	if len(input) == 0 && p.Previous == "" {
		return nil, invalid("input", "missing_required_parameter", "input must be a non-empty string or array of items.")
	}
	p.Input = input
	if len(raw.Tools) > maxTools {
		return nil, invalid("tools", "array_above_max_length", "tools has %d entries, more than %d.", len(raw.Tools), maxTools)
	}
	for i, t := range raw.Tools {
		param := fmt.Sprintf("tools[%d]", i)
		if t.Type != "function" {
			return nil, invalid(param+".type", "invalid_value", "Invalid value %q: only \"function\" tools are supported.", t.Type)
		}
		if t.Name == "" {
			return nil, invalid(param+".name", "missing_required_parameter", "Missing required parameter: %s.name.", param)
		}
		params := t.Parameters
		if bytes.Equal(bytes.TrimSpace(params), []byte("null")) {
			params = nil
		}
		p.Tools = append(p.Tools, chat.Tool{Name: t.Name, Description: t.Description, Parameters: params})
		if t.Strict != nil && *t.Strict {
			if p.StrictTools == nil {
				p.StrictTools = map[string]bool{}
			}
			p.StrictTools[t.Name] = true
		}
	}
	p.rawTools = raw.Tools
	choice, aerr := decodeResponsesToolChoice(raw.ToolChoice)
	if aerr != nil {
		return nil, aerr
	}
	p.ToolChoice = choice
	p.rawToolChoice = "auto"
	if len(raw.ToolChoice) > 0 {
		_ = json.Unmarshal(raw.ToolChoice, &p.rawToolChoice)
	}
	if raw.Text != nil && len(raw.Text.Format) > 0 {
		// text.format is response_format with the schema's fields inline.
		var f struct {
			Type   string          `json:"type"`
			Name   string          `json:"name"`
			Schema json.RawMessage `json:"schema"`
			Strict *bool           `json:"strict"`
		}
		if json.Unmarshal(raw.Text.Format, &f) != nil {
			return nil, invalid("text.format", "invalid_type", "text.format must be an object.")
		}
		wrapped, _ := json.Marshal(map[string]any{"type": f.Type, "json_schema": map[string]any{"name": f.Name, "schema": f.Schema, "strict": f.Strict}})
		if f.Type != "json_schema" {
			wrapped, _ = json.Marshal(map[string]any{"type": f.Type})
		}
		rf, aerr := decodeResponseFormat(wrapped)
		if aerr != nil {
			if aerr.Param != nil {
				fixed := strings.Replace(strings.Replace(*aerr.Param, "response_format.json_schema.", "text.format.", 1), "response_format", "text.format", 1)
				aerr.Param = &fixed
			}
			return nil, aerr
		}
		p.Format = rf
	}
	return p, nil
}

func decodeResponsesToolChoice(raw json.RawMessage) (runtime.ToolChoice, *APIError) {
	raw = bytes.TrimSpace(raw)
	if len(raw) > 0 && raw[0] == '{' {
		var obj struct {
			Type string `json:"type"`
			Name string `json:"name"`
		}
		if json.Unmarshal(raw, &obj) != nil || obj.Type != "function" || obj.Name == "" {
			return runtime.ToolChoice{}, invalid("tool_choice", "invalid_value", "Invalid value for tool_choice: must be \"none\", \"auto\", \"required\" or {\"type\": \"function\", \"name\": ...}.")
		}
		return runtime.ToolChoice{Mode: runtime.ChoiceFunction, Name: obj.Name}, nil
	}
	return decodeToolChoice(raw)
}

// decodeInput reads input: a string (one user message) or an array of
// items.
func decodeInput(raw json.RawMessage) ([]chat.Message, *APIError) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return nil, nil
	}
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, invalid("input", "invalid_type", "input must be a string or an array of items.")
		}
		return []chat.Message{{Role: chat.RoleUser, Content: s}}, nil
	}
	var items []inputItem
	if raw[0] != '[' || json.Unmarshal(raw, &items) != nil {
		return nil, invalid("input", "invalid_type", "input must be a string or an array of items.")
	}
	if len(items) > maxMessages {
		return nil, invalid("input", "array_above_max_length", "input has %d items, more than %d.", len(items), maxMessages)
	}
	var msgs []chat.Message
	for i, it := range items {
		param := fmt.Sprintf("input[%d]", i)
		switch it.Type {
		case "", "message":
			role := it.Role
			switch role {
			case chat.RoleUser, chat.RoleAssistant, chat.RoleSystem:
			case "developer":
				role = chat.RoleSystem
			case "":
				return nil, invalid(param+".role", "missing_required_parameter", "Missing required parameter: %s.role.", param)
			default:
				return nil, invalid(param+".role", "invalid_value", "Invalid value %q: supported roles are user, assistant, system and developer.", it.Role)
			}
			text, aerr := decodeItemContent(param+".content", it.Content)
			if aerr != nil {
				return nil, aerr
			}
			msgs = append(msgs, chat.Message{Role: role, Content: text})
		case "function_call":
			if it.CallID == "" || it.Name == "" {
				return nil, invalid(param+".call_id", "missing_required_parameter", "%s: a function_call item needs call_id and name.", param)
			}
			args, aerr := decodeArguments(param+".arguments", json.RawMessage(strconvQuote(it.Arguments)))
			if aerr != nil {
				return nil, aerr
			}
			tc := chat.ToolCall{ID: it.CallID, Name: it.Name, Arguments: args}
			if n := len(msgs); n > 0 && msgs[n-1].Role == chat.RoleAssistant && len(msgs[n-1].ToolCalls) > 0 {
				msgs[n-1].ToolCalls = append(msgs[n-1].ToolCalls, tc)
			} else {
				msgs = append(msgs, chat.Message{Role: chat.RoleAssistant, ToolCalls: []chat.ToolCall{tc}})
			}
		case "function_call_output":
			if it.CallID == "" {
				return nil, invalid(param+".call_id", "missing_required_parameter", "Missing required parameter: %s.call_id.", param)
			}
			out, aerr := decodeItemContent(param+".output", it.Output)
			if aerr != nil {
				return nil, aerr
			}
			msgs = append(msgs, chat.Message{Role: chat.RoleTool, Content: out, ToolCallID: it.CallID})
		default:
			return nil, invalid(param+".type", "invalid_value", "Invalid value %q: supported input items are message, function_call and function_call_output.", it.Type)
		}
	}
	return msgs, nil
}

func strconvQuote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// decodeItemContent accepts a string or an array of text parts
// (input_text, output_text, text).
func decodeItemContent(param string, raw json.RawMessage) (string, *APIError) {
	raw = bytes.TrimSpace(raw)
	if len(raw) > 0 && raw[0] == '[' {
		var parts []contentPart
		if json.Unmarshal(raw, &parts) != nil {
			return "", invalid(param, "invalid_type", "%s must be a string or an array of text parts.", param)
		}
		var b strings.Builder
		for j, pt := range parts {
			switch pt.Type {
			case "input_text", "output_text", "text":
				b.WriteString(pt.Text)
			default:
				return "", invalid(fmt.Sprintf("%s[%d].type", param, j), "unsupported_value", "Content parts of type %q are not supported; only input_text and output_text.", pt.Type)
			}
		}
		return b.String(), nil
	}
	return decodeContent(param, raw)
}
