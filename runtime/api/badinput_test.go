package api

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"

	"github.com/pitstop-llm/pitstop/runtime"
)

func TestBadInput(t *testing.T) {
	ts := newTestServer(t, serverOpts{api: Config{MaxBodyBytes: 64 << 10}})
	const msgs = `"messages":[{"role":"user","content":"hi"}]`
	cases := []struct {
		name, method, path, body string
		status                   int
		param                    string
	}{
		{"malformed JSON", "POST", "/v1/chat/completions", `{"model": "pitstop-scripted-test", "messages": [`, 400, ""},
		{"not an object", "POST", "/v1/chat/completions", `[1,2]`, 400, ""},
		{"wrong type", "POST", "/v1/chat/completions", `{"model":"pitstop-scripted-test","messages":"hi"}`, 400, "messages"},
		{"no model", "POST", "/v1/chat/completions", `{` + msgs + `}`, 400, "model"},
		{"unknown model", "POST", "/v1/chat/completions", `{"model":"gpt-17",` + msgs + `}`, 404, "model"},
		{"no messages", "POST", "/v1/chat/completions", `{"model":"pitstop-scripted-test","messages":[]}`, 400, "messages"},
		{"bad role", "POST", "/v1/chat/completions", `{"model":"pitstop-scripted-test","messages":[{"role":"wizard","content":"x"}]}`, 400, "messages[0].role"},
		{"tool message without id", "POST", "/v1/chat/completions", `{"model":"pitstop-scripted-test","messages":[{"role":"user","content":"x"},{"role":"tool","content":"y"}]}`, 400, "messages[1].tool_call_id"},
		{"bad tool call arguments", "POST", "/v1/chat/completions", `{"model":"pitstop-scripted-test","messages":[{"role":"user","content":"x"},{"role":"assistant","tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{oops"}}]}]}`, 400, "messages[1].tool_calls[0].function.arguments"},
		{"invalid tool schema", "POST", "/v1/chat/completions", `{"model":"pitstop-scripted-test",` + msgs + `,"tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object","properties":{"a":{"type":"no-such-type"}}}}}]}`, 400, "tools[0].function.parameters"},
		{"schema not an object", "POST", "/v1/chat/completions", `{"model":"pitstop-scripted-test",` + msgs + `,"tools":[{"type":"function","function":{"name":"f","parameters":{"type":"array"}}}]}`, 400, "tools[0].function.parameters"},
		{"bad tool name", "POST", "/v1/chat/completions", `{"model":"pitstop-scripted-test",` + msgs + `,"tools":[{"type":"function","function":{"name":"no spaces allowed"}}]}`, 400, "tools[0].function.name"},
		{"tool type", "POST", "/v1/chat/completions", `{"model":"pitstop-scripted-test",` + msgs + `,"tools":[{"type":"retrieval"}]}`, 400, "tools[0].type"},
		{"bad tool_choice", "POST", "/v1/chat/completions", `{"model":"pitstop-scripted-test",` + msgs + `,"tools":[{"type":"function","function":{"name":"f"}}],"tool_choice":"sometimes"}`, 400, "tool_choice"},
		{"tool_choice unknown function", "POST", "/v1/chat/completions", `{"model":"pitstop-scripted-test",` + msgs + `,"tools":[{"type":"function","function":{"name":"f"}}],"tool_choice":{"type":"function","function":{"name":"g"}}}`, 400, "tool_choice"},
		{"required without tools", "POST", "/v1/chat/completions", `{"model":"pitstop-scripted-test",` + msgs + `,"tool_choice":"required"}`, 400, "tool_choice"},
		{"n > 1", "POST", "/v1/chat/completions", `{"model":"pitstop-scripted-test",` + msgs + `,"n":3}`, 400, "n"},
		{"max_tokens 0", "POST", "/v1/chat/completions", `{"model":"pitstop-scripted-test",` + msgs + `,"max_tokens":0}`, 400, "max_tokens"},
		{"image part", "POST", "/v1/chat/completions", `{"model":"pitstop-scripted-test","messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"x"}}]}]}`, 400, "messages[0].content[0].type"},
		{"oversized body", "POST", "/v1/chat/completions", `{"model":"pitstop-scripted-test","messages":[{"role":"user","content":"` + strings.Repeat("a", 70<<10) + `"}]}`, 413, ""},
		{"context too long", "POST", "/v1/chat/completions", `{"model":"pitstop-scripted-test","messages":[{"role":"user","content":"` + strings.Repeat("zq ", 20000) + `"}]}`, 400, "messages"},
		{"invoke wrong arguments", "POST", "/v1/tools/calculator/invoke", `{"arguments":{"expr":"1+1"}}`, 400, "arguments"},
		{"invoke arguments not JSON", "POST", "/v1/tools/calculator/invoke", `{"arguments":"{nope"}`, 400, "arguments"},
		{"invoke unknown tool", "POST", "/v1/tools/nope/invoke", `{"arguments":{}}`, 404, "name"},
		{"register disabled", "POST", "/v1/tools", `{"name":"w","url":"http://127.0.0.1:1/"}`, 403, ""},
		{"unknown route", "GET", "/v1/nothing", ``, 404, ""},
		{"wrong method", "GET", "/v1/chat/completions", ``, 405, ""},
		{"unknown program", "GET", "/v1/programs/none", ``, 404, "id"},
		{"bad program header", "POST", "/v1/chat/completions", `{"model":"pitstop-scripted-test",` + msgs + `}`, 400, "X-Pitstop-Program"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var h map[string]string
			if c.name == "bad program header" {
				h = map[string]string{HeaderProgram: strings.Repeat("p", 300)}
			}
			status, body := ts.do(c.method, c.path, c.body, h)
			wantError(t, status, body, c.status, c.param)
		})
	}
	serving(t, ts)
}

// The loop guard: a model that keeps calling tools is stopped after
// MaxToolRounds rounds with a 4xx, non-stream and stream.
func TestLoopGuard(t *testing.T) {
	ts := newTestServer(t, serverOpts{rt: runtime.Config{MaxToolRounds: 3}})
	body := `{"model":"pitstop-scripted-test","messages":[{"role":"user","content":"/call calculator {\"expression\": \"1+1\"}\n/repeat"}],"tools":[{"type":"function","function":{"name":"calculator"}}]`
	status, out := ts.do("POST", "/v1/chat/completions", body+`}`, nil)
	wantError(t, status, out, http.StatusUnprocessableEntity, "")
	if code := out["error"].(map[string]any)["code"]; code != "tool_round_limit_exceeded" {
		t.Errorf("code %v", code)
	}
	// Streamed, nothing was written before the guard tripped: a plain 422.
	status, out = ts.do("POST", "/v1/chat/completions", body+`,"stream":true}`, nil)
	wantError(t, status, out, http.StatusUnprocessableEntity, "")

	// Streamed after some content: the error arrives as an SSE error event,
	// which go-openai reports.
	s, err := ts.client(nil).CreateChatCompletionStream(context.Background(), openai.ChatCompletionRequest{
		Model: "pitstop-scripted-test", Stream: true, Tools: []openai.Tool{calculatorDecl()},
		Messages: []openai.ChatCompletionMessage{userMsg("/pre Thinking.\n/call calculator {\"expression\": \"1+1\"}\n/repeat")}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var streamErr error
	for {
		_, err := s.Recv()
		if err != nil {
			if !errors.Is(err, io.EOF) {
				streamErr = err
			}
			break
		}
	}
	if streamErr == nil || !strings.Contains(streamErr.Error(), "rounds in one call") {
		t.Errorf("stream error %v", streamErr)
	}
	// go-openai sees the status and the error object of a non-stream call.
	_, err = ts.client(nil).CreateChatCompletion(context.Background(), openai.ChatCompletionRequest{
		Model: "pitstop-scripted-test", Tools: []openai.Tool{calculatorDecl()},
		Messages: []openai.ChatCompletionMessage{userMsg("/call calculator {\"expression\": \"1+1\"}\n/repeat")}})
	var ae *openai.APIError
	if !errors.As(err, &ae) || ae.HTTPStatusCode != http.StatusUnprocessableEntity || ae.Type != "invalid_request_error" {
		t.Errorf("go-openai error %v", err)
	}
	serving(t, ts)
}

// A model that calls a tool with arguments not matching its schema gets
// the validation error as the tool's result and carries on.
func TestModelWrongArguments(t *testing.T) {
	ts := newTestServer(t, serverOpts{})
	resp, err := ts.client(nil).CreateChatCompletion(context.Background(), openai.ChatCompletionRequest{
		Model: "pitstop-scripted-test", Tools: []openai.Tool{calculatorDecl()},
		Messages: []openai.ChatCompletionMessage{userMsg(`/call calculator {"expr": "1+1"}`)}})
	if err != nil {
		t.Fatal(err)
	}
	if c := resp.Choices[0].Message.Content; !strings.Contains(c, "The tool reported an error: invalid arguments") {
		t.Fatalf("content %q", c)
	}
}

func TestInvoke(t *testing.T) {
	ts := newTestServer(t, serverOpts{})
	h := map[string]string{HeaderProgram: "own-loop"}
	for range 3 {
		status, out := ts.do("POST", "/v1/tools/calculator/invoke", `{"arguments":"{\"expression\": \"6*7\"}","call_id":"c1"}`, h)
		if status != 200 || out["content"] != "42" || out["is_error"] != false || out["program"] != "own-loop" {
			t.Fatalf("invoke: %d %v", status, out)
		}
	}
	p, ok := ts.rt.Program(context.Background(), "", "own-loop")
	if !ok || p.Invokes != 3 || p.InvokeTimeS <= 0 || p.OutsideSince != nil {
		t.Errorf("program %+v", p)
	}
	if st, ok := ts.rt.Durations().Stats("calculator"); !ok || st.Count < 3 {
		t.Errorf("duration stats %+v", st)
	}
	status, out := ts.do("GET", "/v1/tools", "", nil)
	if status != 200 || len(out["data"].([]any)) < 3 {
		t.Errorf("tools: %d %v", status, out)
	}
}

// A client tool named like a registered one runs server-side only when its
// parameters have the registered shape; other parameters are a 400 naming
// the clash, never a silent swap.
func TestClientToolNameClash(t *testing.T) {
	ts := newTestServer(t, serverOpts{})
	ask := func(params string) (int, map[string]any) {
		return ts.do("POST", "/v1/chat/completions", `{"model":"pitstop-scripted-test","messages":[{"role":"user","content":"What is 2+3?"}],
			"tools":[{"type":"function","function":{"name":"calculator","parameters":`+params+`}}]}`, nil)
	}
	// The same shape, other descriptions and constraints: the server's calculator.
	status, out := ask(`{"type":"object","properties":{"expression":{"type":"string","description":"math"}},"required":["expression"]}`)
	if status != 200 || out["pitstop"].(map[string]any)["tool_rounds"] == nil {
		t.Fatalf("compatible declaration: %d %v", status, out)
	}
	// Another tool under the same name.
	status, out = ask(`{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"}},"required":["a","b"]}`)
	wantError(t, status, out, http.StatusBadRequest, "tools[0].function.parameters")
	if msg := out["error"].(map[string]any)["message"].(string); !strings.Contains(msg, "registered on this server with other parameters") {
		t.Errorf("message %q", msg)
	}
}
