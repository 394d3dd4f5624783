package api

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/pitstop-llm/pitstop/models/chat"
	"github.com/pitstop-llm/pitstop/runtime"
)

// responseObject is OpenAI's Response object.
type responseObject struct {
	ID                 string             `json:"id"`
	Object             string             `json:"object"`
	CreatedAt          int64              `json:"created_at"`
	Status             string             `json:"status"`
	Error              *APIError          `json:"error"`
	IncompleteDetails  *incompleteDetails `json:"incomplete_details"`
	Instructions       *string            `json:"instructions"`
	MaxOutputTokens    *int               `json:"max_output_tokens"`
	Model              string             `json:"model"`
	Output             []outputItem       `json:"output"`
	ParallelToolCalls  bool               `json:"parallel_tool_calls"`
	PreviousResponseID *string            `json:"previous_response_id"`
	Store              bool               `json:"store"`
	Temperature        *float64           `json:"temperature"`
	TopP               *float64           `json:"top_p"`
	ToolChoice         any                `json:"tool_choice"`
	Tools              []responsesTool    `json:"tools"`
	Text               map[string]any     `json:"text"`
	Usage              *responsesUsage    `json:"usage"`
	Metadata           map[string]string  `json:"metadata"`
	Background         bool               `json:"background"`
	CompletedAt        *int64             `json:"completed_at"`
	// Fields of the reference's Response object that pitstop holds at
	// their defaults, and the request's hints, echoed.
	Reasoning        map[string]any `json:"reasoning"`
	Truncation       string         `json:"truncation"`
	ServiceTier      string         `json:"service_tier"`
	TopLogprobs      int            `json:"top_logprobs"`
	MaxToolCalls     *int           `json:"max_tool_calls"`
	Conversation     any            `json:"conversation"`
	Prompt           any            `json:"prompt"`
	User             *string        `json:"user"`
	SafetyIdentifier *string        `json:"safety_identifier"`
	PromptCacheKey   *string        `json:"prompt_cache_key"`
	Pitstop          *pitstopInfo   `json:"pitstop,omitempty"`
}

type incompleteDetails struct {
	Reason string `json:"reason"`
}

type responsesUsage struct {
	InputTokens         int            `json:"input_tokens"`
	InputTokensDetails  map[string]int `json:"input_tokens_details"`
	OutputTokens        int            `json:"output_tokens"`
	OutputTokensDetails map[string]int `json:"output_tokens_details"`
	TotalTokens         int            `json:"total_tokens"`
}

// outputItem is an item of a response's output: a message, a function
// call for the client, or a pitstop_tool_call — a registered tool the
// server ran inside the response, like OpenAI's hosted tools' items.
type outputItem struct {
	Type      string        `json:"type"`
	ID        string        `json:"id"`
	Status    string        `json:"status"`
	Role      string        `json:"role,omitempty"`
	Content   []contentItem `json:"content,omitempty"`
	CallID    string        `json:"call_id,omitempty"`
	Name      string        `json:"name,omitempty"`
	Arguments *string       `json:"arguments,omitempty"`
	Output    *string       `json:"output,omitempty"`
	IsError   bool          `json:"is_error,omitempty"`
}

type contentItem struct {
	Type        string `json:"type"`
	Text        string `json:"text"`
	Annotations []any  `json:"annotations"`
}

// maxStoredResponses bounds the responses kept per tenant.
const maxStoredResponses = 10000

func newID(prefix string) string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return prefix + hex.EncodeToString(b[:])
}

// createResponse serves POST /v1/responses.
func (s *Server) createResponse(c echo.Context) error {
	received := time.Now()
	body, aerr := s.readBody(c)
	if aerr != nil {
		return aerr
	}
	p, aerr := DecodeResponsesRequest(body)
	if aerr != nil {
		return aerr
	}
	tenant := who(c).tenant
	id := newID("resp_")
	program := id
	var history []chat.Message
	if p.Previous != "" {
		prev, ok := s.responses.get(tenant, p.Previous)
		if !ok {
			return newError(http.StatusNotFound, typeInvalidRequest, "previous_response_id", "previous_response_not_found", "Previous response with id %q not found.", p.Previous)
		}
		if prev.done != nil && (prev.obj.Status == "queued" || prev.obj.Status == "in_progress") {
			return invalid("previous_response_id", "invalid_value", "Previous response %q is still %s: poll GET /v1/responses/%s until it completes.", p.Previous, prev.obj.Status, p.Previous)
		}
		history, program = prev.conversation, prev.program
	}
	if p.Background && !p.Store {
		return invalid("background", "invalid_value", "background responses need store: true (their result is read with GET /v1/responses/{id}).")
	}
	if p.Background && p.Stream {
		return invalid("background", "unsupported_value", "background with stream is not supported; poll GET /v1/responses/{id}.")
	}
	var msgs []chat.Message
	if p.Instructions != "" {
		msgs = append(msgs, chat.Message{Role: chat.RoleSystem, Content: p.Instructions})
	}
	conversation := append(append([]chat.Message(nil), history...), p.Input...)
	msgs = append(msgs, conversation...)
	req := runtime.ChatRequest{Model: p.Model, Tenant: tenant, Program: program, Messages: msgs, Tools: p.Tools, StrictTools: p.StrictTools,
		ToolChoice: p.ToolChoice, ParallelToolCalls: p.Parallel, MaxTokens: p.MaxTokens, Temperature: p.Temperature, TopP: p.TopP,
		ResponseFormat: p.Format, Stream: p.Stream, Received: received}
	ctx := c.Request().Context()
	if p.Background {
		ctx = context.WithoutCancel(ctx) // the call outlives the request; cancel ends it
	}
	call, err := s.rt.Chat(ctx, req)
	if err != nil {
		return fromRuntime(err)
	}
	c.Response().Header().Set(HeaderProgram, call.Program())
	obj := newResponseObject(id, p, s.rt.Model().Name(), received)
	if p.Background {
		return s.backgroundResponse(c, call, obj, p, conversation, program, received)
	}
	if p.Stream {
		return s.streamResponse(c, call, obj, p, conversation, program, received)
	}
	res, err := call.Wait(c.Request().Context())
	if err != nil {
		<-call.Done()
		return nil
	}
	s.callDone(call, res, received, false)
	if res.Err != nil {
		return fromRuntime(res.Err)
	}
	finishResponse(obj, res)
	s.storeResponse(tenant, p, obj, conversation, res, program)
	return c.JSON(http.StatusOK, obj)
}

func newResponseObject(id string, p *ResponsesParams, model string, created time.Time) *responseObject {
	o := &responseObject{ID: id, Object: "response", CreatedAt: created.Unix(), Status: "in_progress", Model: model,
		Output: []outputItem{}, ParallelToolCalls: p.Parallel, Store: p.Store, Temperature: p.Temperature, TopP: p.TopP,
		ToolChoice: p.rawToolChoice, Tools: p.rawTools, Metadata: p.Metadata, Background: p.Background,
		Reasoning: map[string]any{"effort": nil, "summary": nil}, Truncation: "disabled", ServiceTier: "default",
		User: p.User, SafetyIdentifier: p.SafetyIdentifier, PromptCacheKey: p.PromptCacheKey, Text: map[string]any{"format": map[string]any{"type": "text"}}}
	if o.Tools == nil {
		o.Tools = []responsesTool{}
	}
	if o.Metadata == nil {
		o.Metadata = map[string]string{}
	}
	if p.Instructions != "" {
		o.Instructions = &p.Instructions
	}
	if p.MaxTokens > 0 {
		o.MaxOutputTokens = &p.MaxTokens
	}
	if p.Previous != "" {
		o.PreviousResponseID = &p.Previous
	}
	if p.Format != nil {
		f := map[string]any{"type": p.Format.Type}
		if p.Format.Type == "json_schema" {
			f["name"], f["schema"], f["strict"] = p.Format.Name, json.RawMessage(p.Format.Schema), p.Format.Strict
		}
		o.Text["format"] = f
	}
	return o
}

// outputItems are a finished call's output: the server-side tool calls,
// the message, the client's function calls.
func outputItems(res *runtime.Result) []outputItem {
	var out []outputItem
	for _, r := range res.Rounds {
		for _, tc := range r.Calls {
			args, content := tc.Arguments, tc.Content
			out = append(out, outputItem{Type: "pitstop_tool_call", ID: "ptc_" + tc.ID, Status: "completed", CallID: tc.ID, Name: tc.Name,
				Arguments: &args, Output: &content, IsError: tc.IsError})
		}
	}
	if res.Content != "" {
		out = append(out, messageItem(newID("msg_"), res.Content, "completed"))
	}
	for _, tc := range res.ToolCalls {
		args := tc.Arguments
		out = append(out, outputItem{Type: "function_call", ID: "fc_" + tc.ID, Status: "completed", CallID: tc.ID, Name: tc.Name, Arguments: &args})
	}
	return out
}

func messageItem(id, text, status string) outputItem {
	return outputItem{Type: "message", ID: id, Status: status, Role: chat.RoleAssistant,
		Content: []contentItem{{Type: "output_text", Text: text, Annotations: []any{}}}}
}

// finishResponse fills a response object from its call's result.
func finishResponse(o *responseObject, res *runtime.Result) {
	o.Status = "completed"
	done := time.Now().Unix()
	o.CompletedAt = &done
	if res.FinishReason == "length" {
		o.Status, o.IncompleteDetails = "incomplete", &incompleteDetails{Reason: "max_output_tokens"}
	}
	if len(o.Output) == 0 {
		o.Output = outputItems(res)
	}
	if o.Output == nil {
		o.Output = []outputItem{}
	}
	u := res.Usage
	o.Usage = &responsesUsage{InputTokens: u.PromptTokens, InputTokensDetails: map[string]int{"cached_tokens": u.CachedTokens},
		OutputTokens: u.CompletionTokens, OutputTokensDetails: map[string]int{"reasoning_tokens": 0}, TotalTokens: u.PromptTokens + u.CompletionTokens}
	o.Pitstop = &pitstopInfo{Program: res.Program, ToolRounds: res.Rounds, ToolResultTokens: u.ToolResultTokens}
}

// storeResponse keeps a response (store: true) with its conversation: the
// input, the server-side tool rounds, the answer and the client's calls.
func (s *Server) storeResponse(tenant string, p *ResponsesParams, o *responseObject, conversation []chat.Message, res *runtime.Result, program string) {
	if !p.Store {
		return
	}
	conv := append([]chat.Message(nil), conversation...)
	for _, r := range res.Rounds {
		var calls []chat.ToolCall
		var results []chat.Message
		for _, tc := range r.Calls {
			calls = append(calls, chat.ToolCall{ID: tc.ID, Name: tc.Name, Arguments: tc.Arguments})
			results = append(results, chat.Message{Role: chat.RoleTool, Content: tc.Content, ToolCallID: tc.ID, Name: tc.Name})
		}
		conv = append(conv, chat.Message{Role: chat.RoleAssistant, ToolCalls: calls})
		conv = append(conv, results...)
	}
	conv = append(conv, chat.Message{Role: chat.RoleAssistant, Content: res.Content, ToolCalls: res.ToolCalls})
	s.responses.put(tenant, o.ID, &storedResponse{obj: o, conversation: conv, program: program, input: p.Input})
}

// getResponse serves GET /v1/responses/{id}: the tenant's own only.
func (s *Server) getResponse(c echo.Context) error {
	r, ok := s.responses.get(who(c).tenant, c.Param("id"))
	if !ok {
		return newError(http.StatusNotFound, typeInvalidRequest, "response_id", "not_found", "Response with id %q not found.", c.Param("id"))
	}
	return c.JSON(http.StatusOK, r.obj)
}

// deleteResponse serves DELETE /v1/responses/{id}; a background response
// still running is cancelled.
func (s *Server) deleteResponse(c echo.Context) error {
	id := c.Param("id")
	if r, ok := s.responses.get(who(c).tenant, id); ok && r.call != nil {
		r.call.Cancel()
	}
	if !s.responses.remove(who(c).tenant, id) {
		return newError(http.StatusNotFound, typeInvalidRequest, "response_id", "not_found", "Response with id %q not found.", id)
	}
	return c.JSON(http.StatusOK, map[string]any{"id": id, "object": "response.deleted", "deleted": true})
}

// streamResponse writes a streamed response as the Responses API's typed
// server-sent events.
func (s *Server) streamResponse(c echo.Context, call *runtime.Call, obj *responseObject, p *ResponsesParams, conversation []chat.Message, program string, received time.Time) error {
	ctx := c.Request().Context()
	w := &respEvents{c: c, obj: obj}
	w.commit()
	res := relay(ctx, call, func(ds []runtime.Delta) bool { w.deltas(ds); return !w.failed })
	if res == nil {
		return nil
	}
	s.callDone(call, res, received, true)
	w.closeItem()
	if res.Err != nil {
		obj.Status, obj.Error = "failed", fromRuntime(res.Err)
		w.send("response.failed", map[string]any{"response": obj})
		w.flush()
		return nil
	}
	finishResponse(obj, res)
	s.storeResponse(who(c).tenant, p, obj, conversation, res, program)
	w.send("response.completed", map[string]any{"response": obj})
	w.flush()
	return nil
}
