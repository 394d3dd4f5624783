package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf8"

	segjson "github.com/segmentio/encoding/json"

	"github.com/pitstop-llm/pitstop/internal/jsondepth"
	"github.com/pitstop-llm/pitstop/models/chat"
	"github.com/pitstop-llm/pitstop/runtime"
)

// chatRequest is the JSON body of POST /v1/chat/completions. temperature,
// top_p and seed choose the sampling of a model with real weights (greedy
// without a temperature); cache_salt (vLLM's extension) narrows the
// tenant's prefix cache; fields pitstop does not use (presence_penalty,
// ...) are accepted and ignored.
type chatRequest struct {
	Model               json.RawMessage `json:"model"`
	Messages            []wireMessage   `json:"messages"`
	Tools               []wireTool      `json:"tools"`
	ToolChoice          json.RawMessage `json:"tool_choice"`
	ParallelToolCalls   *bool           `json:"parallel_tool_calls"`
	Stream              *bool           `json:"stream"`
	StreamOptions       *streamOptions  `json:"stream_options"`
	MaxTokens           *int            `json:"max_tokens"`
	MaxCompletionTokens *int            `json:"max_completion_tokens"`
	N                   *int            `json:"n"`
	Temperature         *float64        `json:"temperature"`
	TopP                *float64        `json:"top_p"`
	Seed                *int64          `json:"seed"`
	Stop                json.RawMessage `json:"stop"`
	ResponseFormat      json.RawMessage `json:"response_format"`
	Logprobs            *bool           `json:"logprobs"`
	TopLogprobs         *int            `json:"top_logprobs"`
	CacheSalt           json.RawMessage `json:"cache_salt"`
}

type streamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

type wireMessage struct {
	Role       string          `json:"role"`
	Content    json.RawMessage `json:"content"`
	Name       string          `json:"name"`
	ToolCalls  []wireToolCall  `json:"tool_calls"`
	ToolCallID string          `json:"tool_call_id"`
}

type wireToolCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	} `json:"function"`
}

type wireTool struct {
	Type     string        `json:"type"`
	Function *wireFunction `json:"function"`
}

type wireFunction struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
	Strict      *bool           `json:"strict"`
}

type contentPart struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// ChatParams is a decoded chat completion request.
type ChatParams struct {
	Request      runtime.ChatRequest
	IncludeUsage bool // stream_options.include_usage
}

// Limits of a request the decoder enforces.
const (
	maxMessages = 4096
	maxTools    = 256
)

// decodeObject decodes a request body that must be one JSON object into v;
// the error is OpenAI's 400 naming the field at fault.
func decodeObject(body []byte, v any) *APIError {
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return invalid("", "invalid_json", "We could not parse the JSON body of your request: expected a JSON object.")
	}
	// segmentio/encoding's json takes and refuses what encoding/json does,
	// in one pass without reflection's per-value work: a chat request's
	// decode is a router's largest JSON work per call. A body it refuses is
	// decoded again by encoding/json for the error the client sees (its
	// messages name the field and the JSON type, segmentio's show the
	// input). FuzzDecodeObject holds both ways to encoding/json's. The
	// library has no depth limit: a body nested deeper than encoding/json
	// takes goes to encoding/json, which refuses it.
	if jsondepth.Exceeds(trimmed) {
		return decodeObjectStd(trimmed, v)
	}
	rest, err := segjson.Parse(trimmed, v, 0)
	if err != nil {
		reflect.ValueOf(v).Elem().SetZero()
		return decodeObjectStd(trimmed, v)
	}
	// As encoding/json's Decoder.More after the value: what follows may be
	// only space, or a closing bracket (which More does not count).
	if rest = bytes.TrimLeft(rest, " \t\r\n"); len(rest) > 0 && rest[0] != '}' && rest[0] != ']' {
		return invalid("", "invalid_json", "We could not parse the JSON body of your request: more than one JSON value.")
	}
	return nil
}

// decodeObjectStd is decodeObject on encoding/json's Decoder, trimmed
// being the body without its surrounding space.
func decodeObjectStd(trimmed []byte, v any) *APIError {
	dec := json.NewDecoder(bytes.NewReader(trimmed))
	if err := dec.Decode(v); err != nil {
		return invalid(jsonErrorParam(err), "invalid_json", "We could not parse the JSON body of your request: %s", jsonErrorText(err))
	}
	if dec.More() {
		return invalid("", "invalid_json", "We could not parse the JSON body of your request: more than one JSON value.")
	}
	return nil
}

// DecodeChatRequest decodes and checks the JSON body of a chat completion
// request. Every error is an OpenAI-style 400 naming the field at fault.
// It never panics, whatever the input.
func DecodeChatRequest(body []byte) (*ChatParams, *APIError) {
	var raw chatRequest
	if aerr := decodeObject(body, &raw); aerr != nil {
		return nil, aerr
	}
	p := &ChatParams{}
	r := &p.Request

	if len(raw.Model) == 0 || bytes.Equal(raw.Model, []byte("null")) {
		return nil, invalid("model", "missing_required_parameter", "You must provide a model parameter.")
	}
	// A model id without escapes is taken as it is (plainContent);
	// encoding/json reads the rest.
	model, ok := plainContent(raw.Model)
	if !ok {
		if err := json.Unmarshal(raw.Model, &model); err != nil {
			model = ""
		}
	}
	if strings.TrimSpace(model) == "" {
		return nil, invalid("model", "invalid_type", "model must be a non-empty string.")
	}
	r.Model = model

	if raw.N != nil && *raw.N != 1 {
		return nil, invalid("n", "unsupported_value", "n must be 1: pitstop returns one choice per call, got %d.", *raw.N)
	}
	switch {
	case raw.MaxCompletionTokens != nil:
		r.MaxTokens = *raw.MaxCompletionTokens
		if r.MaxTokens < 1 {
			return nil, invalid("max_completion_tokens", "invalid_value", "max_completion_tokens must be at least 1, got %d.", r.MaxTokens)
		}
	case raw.MaxTokens != nil:
		r.MaxTokens = *raw.MaxTokens
		if r.MaxTokens < 1 {
			return nil, invalid("max_tokens", "invalid_value", "max_tokens must be at least 1, got %d.", r.MaxTokens)
		}
	}
	if t := raw.Temperature; t != nil && !(*t >= 0 && *t <= 2) {
		return nil, invalid("temperature", "invalid_value", "temperature must be between 0 and 2, got %g.", *t)
	}
	if p := raw.TopP; p != nil && !(*p >= 0 && *p <= 1) {
		return nil, invalid("top_p", "invalid_value", "top_p must be between 0 and 1, got %g.", *p)
	}
	r.Temperature, r.TopP, r.Seed = raw.Temperature, raw.TopP, raw.Seed
	stop, aerr := decodeStop(raw.Stop)
	if aerr != nil {
		return nil, aerr
	}
	r.Stop = stop
	if r.CacheSalt, aerr = decodeCacheSalt(raw.CacheSalt); aerr != nil {
		return nil, aerr
	}
	if r.ResponseFormat, aerr = decodeResponseFormat(raw.ResponseFormat); aerr != nil {
		return nil, aerr
	}
	r.Logprobs = raw.Logprobs != nil && *raw.Logprobs
	if raw.TopLogprobs != nil {
		if *raw.TopLogprobs < 0 || *raw.TopLogprobs > runtime.MaxTopLogprobs {
			return nil, invalid("top_logprobs", "invalid_value", "top_logprobs must be between 0 and %d, got %d.", runtime.MaxTopLogprobs, *raw.TopLogprobs)
		}
		if *raw.TopLogprobs > 0 && !r.Logprobs {
			return nil, invalid("top_logprobs", "invalid_value", "top_logprobs needs logprobs: true.")
		}
		r.TopLogprobs = *raw.TopLogprobs
	}
	r.Stream = raw.Stream != nil && *raw.Stream
	if raw.StreamOptions != nil {
		if !r.Stream {
			return nil, invalid("stream_options", "invalid_value", "stream_options is only allowed when stream is true.")
		}
		p.IncludeUsage = raw.StreamOptions.IncludeUsage
	}
	r.ParallelToolCalls = raw.ParallelToolCalls == nil || *raw.ParallelToolCalls

	if len(raw.Messages) == 0 {
		return nil, invalid("messages", "missing_required_parameter", "messages must be a non-empty array.")
	}
	if len(raw.Messages) > maxMessages {
		return nil, invalid("messages", "array_above_max_length", "messages has %d entries, more than %d.", len(raw.Messages), maxMessages)
	}
	r.Messages = make([]chat.Message, len(raw.Messages))
	for i := range raw.Messages {
		m, err := decodeMessage(i, &raw.Messages[i])
		if err != nil {
			return nil, err
		}
		r.Messages[i] = m
	}

	if len(raw.Tools) > maxTools {
		return nil, invalid("tools", "array_above_max_length", "tools has %d entries, more than %d.", len(raw.Tools), maxTools)
	}
	for i, t := range raw.Tools {
		param := fmt.Sprintf("tools[%d]", i)
		if t.Type != "function" {
			return nil, invalid(param+".type", "invalid_value", "Invalid value %q: only \"function\" tools are supported.", t.Type)
		}
		if t.Function == nil || t.Function.Name == "" {
			return nil, invalid(param+".function.name", "missing_required_parameter", "Missing required parameter: %s.function.name.", param)
		}
		params := t.Function.Parameters
		if bytes.Equal(bytes.TrimSpace(params), []byte("null")) {
			params = nil
		}
		r.Tools = append(r.Tools, chat.Tool{Name: t.Function.Name, Description: t.Function.Description, Parameters: params})
		if t.Function.Strict != nil && *t.Function.Strict {
			if r.StrictTools == nil {
				r.StrictTools = map[string]bool{}
			}
			r.StrictTools[t.Function.Name] = true
		}
	}

	choice, err := decodeToolChoice(raw.ToolChoice)
	if err != nil {
		return nil, err
	}
	r.ToolChoice = choice
	if len(r.Tools) == 0 && (choice.Mode == runtime.ChoiceRequired || choice.Mode == runtime.ChoiceFunction) {
		return nil, invalid("tool_choice", "invalid_value", "tool_choice %q is only allowed when tools are specified.", choice.Mode)
	}
	return p, nil
}

func decodeMessage(i int, w *wireMessage) (chat.Message, *APIError) {
	// The parameter's name is for errors only: made when one is found (a
	// conversation has many messages, and each name is an allocation).
	param := func() string { return "messages[" + strconv.Itoa(i) + "]" }
	m := chat.Message{Role: w.Role, Name: w.Name, ToolCallID: w.ToolCallID}
	switch w.Role {
	case chat.RoleSystem, chat.RoleUser, chat.RoleAssistant, chat.RoleTool:
	case "developer":
		m.Role = chat.RoleSystem
	case "":
		return m, invalid(param()+".role", "missing_required_parameter", "Missing required parameter: %s.role.", param())
	default:
		return m, invalid(param()+".role", "invalid_value", "Invalid value %q: supported roles are system, developer, user, assistant and tool.", w.Role)
	}
	content, ok := plainContent(w.Content)
	if !ok {
		var err *APIError
		if content, err = decodeContent(param()+".content", w.Content); err != nil {
			return m, err
		}
	}
	m.Content = content
	if len(w.ToolCalls) > 0 && m.Role != chat.RoleAssistant {
		return m, invalid(param()+".tool_calls", "invalid_value", "Only assistant messages may have tool_calls.")
	}
	for j, tc := range w.ToolCalls {
		tp := fmt.Sprintf("%s.tool_calls[%d]", param(), j)
		if tc.Type != "" && tc.Type != "function" {
			return m, invalid(tp+".type", "invalid_value", "Invalid value %q: only \"function\" tool calls are supported.", tc.Type)
		}
		if tc.Function.Name == "" {
			return m, invalid(tp+".function.name", "missing_required_parameter", "Missing required parameter: %s.function.name.", tp)
		}
		args, err := decodeArguments(tp+".function.arguments", tc.Function.Arguments)
		if err != nil {
			return m, err
		}
		m.ToolCalls = append(m.ToolCalls, chat.ToolCall{ID: tc.ID, Name: tc.Function.Name, Arguments: args})
	}
	if m.Role == chat.RoleTool && w.ToolCallID == "" {
		return m, invalid(param()+".tool_call_id", "missing_required_parameter", "Missing required parameter: %s.tool_call_id.", param())
	}
	if (m.Role == chat.RoleUser || m.Role == chat.RoleSystem) && len(w.Content) == 0 {
		return m, invalid(param()+".content", "missing_required_parameter", "Missing required parameter: %s.content.", param())
	}
	return m, nil
}

// plainContent is a message's content when it is a JSON string without
// escapes, in valid UTF-8: its bytes between the quotes, as
// encoding/json's own fast path reads it (raw was checked as JSON by the
// body's decode). json.Unmarshal would scan it twice more (check, then
// decode): for a long conversation, most of its decode. A string with
// escapes is left to decodeContent.
func plainContent(raw json.RawMessage) (string, bool) {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return "", false
	}
	inner := raw[1 : len(raw)-1]
	for _, c := range inner {
		if c == '\\' || c == '"' || c < ' ' {
			return "", false
		}
	}
	if !utf8.Valid(inner) {
		return "", false
	}
	return string(inner), true
}

// decodeContent accepts a string, null, or an array of text parts.
func decodeContent(param string, raw json.RawMessage) (string, *APIError) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return "", nil
	}
	switch raw[0] {
	case '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return "", invalid(param, "invalid_type", "%s must be a string or an array of text parts.", param)
		}
		return s, nil
	case '[':
		var parts []contentPart
		if err := json.Unmarshal(raw, &parts); err != nil {
			return "", invalid(param, "invalid_type", "%s must be a string or an array of text parts.", param)
		}
		var b strings.Builder
		for j, p := range parts {
			if p.Type != "text" {
				return "", invalid(fmt.Sprintf("%s[%d].type", param, j), "unsupported_value", "Content parts of type %q are not supported; only \"text\".", p.Type)
			}
			b.WriteString(p.Text)
		}
		return b.String(), nil
	}
	return "", invalid(param, "invalid_type", "%s must be a string or an array of text parts.", param)
}

// decodeArguments accepts the arguments of a tool call: a string holding a
// JSON object (OpenAI's form) or, leniently, the object itself.
func decodeArguments(param string, raw json.RawMessage) (string, *APIError) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return "{}", nil
	}
	s := string(raw)
	if raw[0] == '"' {
		if err := json.Unmarshal(raw, &s); err != nil {
			return "", invalid(param, "invalid_type", "%s must be a string.", param)
		}
	}
	t := strings.TrimSpace(s)
	if t == "" {
		return "{}", nil
	}
	var v any
	if err := json.Unmarshal([]byte(t), &v); err != nil {
		return "", invalid(param, "invalid_value", "%s is not valid JSON: %v", param, err)
	}
	if _, ok := v.(map[string]any); !ok {
		return "", invalid(param, "invalid_value", "%s must be a JSON object.", param)
	}
	return t, nil
}

// decodeResponseFormat accepts response_format: {"type": "text"},
// {"type": "json_object"} or {"type": "json_schema", "json_schema":
// {"name", "schema", "strict"}}.
func decodeResponseFormat(raw json.RawMessage) (*runtime.ResponseFormat, *APIError) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return nil, nil
	}
	var w struct {
		Type       string `json:"type"`
		JSONSchema *struct {
			Name   string          `json:"name"`
			Schema json.RawMessage `json:"schema"`
			Strict *bool           `json:"strict"`
		} `json:"json_schema"`
	}
	if raw[0] != '{' || json.Unmarshal(raw, &w) != nil {
		return nil, invalid("response_format", "invalid_type", "response_format must be an object such as {\"type\": \"json_object\"}.")
	}
	rf := &runtime.ResponseFormat{Type: w.Type}
	switch w.Type {
	case "text", "json_object":
	case "json_schema":
		if w.JSONSchema == nil {
			return nil, invalid("response_format.json_schema", "missing_required_parameter", "Missing required parameter: response_format.json_schema.")
		}
		if w.JSONSchema.Name == "" {
			return nil, invalid("response_format.json_schema.name", "missing_required_parameter", "Missing required parameter: response_format.json_schema.name.")
		}
		sch := bytes.TrimSpace(w.JSONSchema.Schema)
		if len(sch) == 0 || sch[0] != '{' {
			return nil, invalid("response_format.json_schema.schema", "invalid_type", "response_format.json_schema.schema must be a JSON Schema object.")
		}
		rf.Name, rf.Schema = w.JSONSchema.Name, sch
		rf.Strict = w.JSONSchema.Strict != nil && *w.JSONSchema.Strict
	case "":
		return nil, invalid("response_format.type", "missing_required_parameter", "Missing required parameter: response_format.type.")
	default:
		return nil, invalid("response_format.type", "invalid_value", "Invalid value %q: response_format.type must be text, json_object or json_schema.", w.Type)
	}
	return rf, nil
}

// decodeStop accepts stop: null, a string, or an array of at most
// runtime.MaxStop non-empty strings.
func decodeStop(raw json.RawMessage) ([]string, *APIError) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return nil, nil
	}
	var stops []string
	switch raw[0] {
	case '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, invalid("stop", "invalid_type", "stop must be a string or an array of strings.")
		}
		stops = []string{s}
	case '[':
		if err := json.Unmarshal(raw, &stops); err != nil {
			return nil, invalid("stop", "invalid_type", "stop must be a string or an array of strings.")
		}
	default:
		return nil, invalid("stop", "invalid_type", "stop must be a string or an array of strings.")
	}
	if len(stops) > runtime.MaxStop {
		return nil, invalid("stop", "array_above_max_length", "stop has %d sequences, at most %d are allowed.", len(stops), runtime.MaxStop)
	}
	for i, s := range stops {
		if s == "" {
			return nil, invalid(fmt.Sprintf("stop[%d]", i), "invalid_value", "A stop sequence must not be empty.")
		}
	}
	return stops, nil
}

func decodeToolChoice(raw json.RawMessage) (runtime.ToolChoice, *APIError) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return runtime.ToolChoice{Mode: runtime.ChoiceAuto}, nil
	}
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err == nil {
			switch runtime.ChoiceMode(s) {
			case runtime.ChoiceAuto, runtime.ChoiceNone, runtime.ChoiceRequired:
				return runtime.ToolChoice{Mode: runtime.ChoiceMode(s)}, nil
			}
		}
		return runtime.ToolChoice{}, invalid("tool_choice", "invalid_value", "Invalid value for tool_choice: must be \"none\", \"auto\", \"required\" or {\"type\": \"function\", \"function\": {\"name\": ...}}.")
	}
	var obj struct {
		Type     string `json:"type"`
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	}
	if err := json.Unmarshal(raw, &obj); err != nil || obj.Type != "function" || obj.Function.Name == "" {
		return runtime.ToolChoice{}, invalid("tool_choice", "invalid_value", "Invalid value for tool_choice: must be \"none\", \"auto\", \"required\" or {\"type\": \"function\", \"function\": {\"name\": ...}}.")
	}
	return runtime.ToolChoice{Mode: runtime.ChoiceFunction, Name: obj.Function.Name}, nil
}

// jsonErrorParam names the field of a JSON type error.
func jsonErrorParam(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) && te.Field != "" {
		return te.Field
	}
	return ""
}

func jsonErrorText(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		if te.Field != "" {
			return fmt.Sprintf("%s must be %s, not %s.", te.Field, jsonTypeName(te.Type.Kind().String()), te.Value)
		}
		return fmt.Sprintf("expected %s, got %s.", jsonTypeName(te.Type.Kind().String()), te.Value)
	}
	return err.Error()
}

func jsonTypeName(kind string) string {
	switch kind {
	case "string":
		return "a string"
	case "slice", "array":
		return "an array"
	case "struct", "map":
		return "an object"
	case "bool":
		return "a boolean"
	case "int", "int64", "float64":
		return "a number"
	}
	return kind
}
