package api

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/pitstop-llm/pitstop/runtime"
	"github.com/pitstop-llm/pitstop/tools"
)

// TestResponsesFields: every field of OpenAI's request body is known:
// unknown ones and values pitstop does not support are 400s naming the
// field; defaults and hints are accepted; metadata is echoed.
func TestResponsesFields(t *testing.T) {
	ts := newTestServer(t, serverOpts{})
	for _, c := range []struct{ extra, param, code string }{
		{`"frobnicate":1`, "frobnicate", "unknown_parameter"},
		{`"include":["file_search_call.results"]`, "include", "unsupported_parameter"},
		{`"reasoning":{"effort":"high"}`, "reasoning", "unsupported_parameter"},
		{`"conversation":"conv_1"`, "conversation", "unsupported_parameter"},
		{`"prompt":{"id":"pmpt_1"}`, "prompt", "unsupported_parameter"},
		{`"max_tool_calls":3`, "max_tool_calls", "unsupported_parameter"},
		{`"top_logprobs":2`, "top_logprobs", "unsupported_parameter"},
		{`"truncation":"auto"`, "truncation", "unsupported_value"},
		{`"service_tier":"flex"`, "service_tier", "unsupported_value"},
		{`"user":7`, "user", "invalid_json"}, // a wrong JSON type, as decodeObject answers every field
		{`"metadata":{"a":1}`, "metadata", "invalid_type"},
		{`"tools":[{"type":"web_search"}]`, "tools[0].type", "invalid_value"},
		{`"background":true,"store":false`, "background", "invalid_value"},
		{`"background":true,"stream":true`, "background", "unsupported_value"},
	} {
		status, body := ts.do("POST", "/v1/responses", `{`+respModel+`,"input":"hi",`+c.extra+`}`, nil)
		wantError(t, status, body, 400, c.param)
		if code, _ := body["error"].(map[string]any)["code"].(string); code != c.code {
			t.Errorf("%s: code %q, want %q", c.extra, code, c.code)
		}
	}
	status, r := ts.do("POST", "/v1/responses", `{`+respModel+`,"input":"hi","include":[],"reasoning":null,"truncation":"disabled","service_tier":"auto",`+
		`"user":"u1","safety_identifier":"s1","prompt_cache_key":"k","background":false,"top_logprobs":0,"metadata":{"run":"7"}}`, nil)
	if status != 200 || r["metadata"].(map[string]any)["run"] != "7" || r["background"] != false || r["user"] != "u1" ||
		r["truncation"] != "disabled" || r["service_tier"] != "default" || r["completed_at"] == nil {
		t.Fatalf("defaults: %d %v", status, r)
	}
}

// TestResponsesBackground: background: true answers at once with the
// response queued; GET polls it to completed, and previous_response_id
// chains on it then (not before: a 400). A background response whose
// server-side tool is still running is cancelled by POST .../cancel, its
// tool with it; a response made without background cannot be cancelled.
func TestResponsesBackground(t *testing.T) {
	gate := make(chan struct{})
	started, stopped := make(chan struct{}, 1), make(chan struct{}, 1)
	reg := gatedTools(t, gate)
	wall, err := tools.New("wall", "returns only when cancelled", json.RawMessage(`{"type":"object","properties":{}}`),
		func(ctx context.Context, _ json.RawMessage) (string, error) {
			started <- struct{}{}
			<-ctx.Done()
			stopped <- struct{}{}
			return "", ctx.Err()
		}, tools.WithTimeout(20*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	reg.MustRegister(wall)
	ts := newTestServer(t, serverOpts{rt: runtime.Config{Tools: reg}})

	status, r := ts.do("POST", "/v1/responses", `{`+respModel+`,"input":"/call gate {}\n/say Through the gate.","tools":[{"type":"function","name":"gate"}],"background":true}`, nil)
	if status != 200 || r["status"] != "queued" || r["background"] != true {
		t.Fatalf("create: %d %v", status, r)
	}
	id := r["id"].(string)
	if _, got := ts.do("GET", "/v1/responses/"+id, "", nil); got["status"] != "in_progress" {
		t.Fatalf("while the tool runs: %v", got)
	}
	status, body := ts.do("POST", "/v1/responses", `{`+respModel+`,"previous_response_id":"`+id+`","input":"and then?"}`, nil)
	wantError(t, status, body, 400, "previous_response_id")
	close(gate)
	got := pollResponse(t, ts, id)
	out := got["output"].([]any)
	if got["status"] != "completed" || len(out) != 2 || out[0].(map[string]any)["type"] != "pitstop_tool_call" {
		t.Fatalf("completed: %v", got)
	}
	if status, r := ts.do("POST", "/v1/responses", `{`+respModel+`,"previous_response_id":"`+id+`","input":"/say Again."}`, nil); status != 200 || r["status"] != "completed" {
		t.Fatalf("chained on a background response: %d %v", status, r)
	}
	if status, r := ts.do("POST", "/v1/responses/"+id+"/cancel", "", nil); status != 200 || r["status"] != "completed" {
		t.Fatalf("cancel after completion: %d %v", status, r)
	}

	_, r = ts.do("POST", "/v1/responses", `{`+respModel+`,"input":"/call wall {}","tools":[{"type":"function","name":"wall"}],"background":true}`, nil)
	id = r["id"].(string)
	select {
	case <-started:
	case <-time.After(10 * time.Second):
		t.Fatal("the wall tool did not start")
	}
	status, r = ts.do("POST", "/v1/responses/"+id+"/cancel", "", nil)
	if status != 200 || r["status"] != "cancelled" {
		t.Fatalf("cancel: %d %v", status, r)
	}
	select {
	case <-stopped:
	case <-time.After(5 * time.Second):
		t.Error("the cancelled response's tool kept running")
	}
	if _, got := ts.do("GET", "/v1/responses/"+id, "", nil); got["status"] != "cancelled" {
		t.Errorf("GET after cancel: %v", got)
	}

	_, r = ts.do("POST", "/v1/responses", `{`+respModel+`,"input":"hi"}`, nil)
	status, body = ts.do("POST", "/v1/responses/"+r["id"].(string)+"/cancel", "", nil)
	wantError(t, status, body, 400, "response_id")
}

// pollResponse GETs a response until it is no longer queued or running.
func pollResponse(t *testing.T, ts *testServer, id string) map[string]any {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		status, got := ts.do("GET", "/v1/responses/"+id, "", nil)
		if status != 200 {
			t.Fatalf("GET %s: %d %v", id, status, got)
		}
		if s := got["status"]; s != "queued" && s != "in_progress" {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s still %v after 10 s", id, got["status"])
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestResponsesInputItems: GET /v1/responses/{id}/input_items lists the
// request's input as items, newest first by default, with limit, after
// and order; instructions are not items.
func TestResponsesInputItems(t *testing.T) {
	ts := newTestServer(t, serverOpts{})
	input := `[{"role":"user","content":"/say ok"},{"type":"function_call","call_id":"c1","name":"f","arguments":"{}"},{"type":"function_call_output","call_id":"c1","output":"r"},{"role":"user","content":[{"type":"input_text","text":"last"}]}]`
	status, r := ts.do("POST", "/v1/responses", `{`+respModel+`,"instructions":"be brief","input":`+input+`}`, nil)
	if status != 200 {
		t.Fatalf("%d %v", status, r)
	}
	id := r["id"].(string)
	status, l := ts.do("GET", "/v1/responses/"+id+"/input_items", "", nil)
	data, _ := l["data"].([]any)
	if status != 200 || l["object"] != "list" || len(data) != 4 || l["has_more"] != false {
		t.Fatalf("list: %d %v", status, l)
	}
	types := ""
	for _, it := range data {
		types += it.(map[string]any)["type"].(string) + " "
	}
	if types != "message function_call_output function_call message " {
		t.Errorf("newest first: %s", types)
	}
	if last := data[0].(map[string]any)["content"].([]any)[0].(map[string]any)["text"]; last != "last" {
		t.Errorf("first item %v", data[0])
	}
	_, l = ts.do("GET", "/v1/responses/"+id+"/input_items?order=asc&limit=2", "", nil)
	data = l["data"].([]any)
	if len(data) != 2 || l["has_more"] != true || data[1].(map[string]any)["type"] != "function_call" {
		t.Fatalf("asc, limit 2: %v", l)
	}
	_, l = ts.do("GET", "/v1/responses/"+id+"/input_items?order=asc&after="+l["last_id"].(string), "", nil)
	if data = l["data"].([]any); len(data) != 2 || data[0].(map[string]any)["type"] != "function_call_output" {
		t.Fatalf("after: %v", l)
	}
	for _, q := range []string{"order=up", "limit=0", "limit=x", "after=nope"} {
		status, body := ts.do("GET", "/v1/responses/"+id+"/input_items?"+q, "", nil)
		param, _, _ := strings.Cut(q, "=")
		wantError(t, status, body, 400, param)
	}
	status, body := ts.do("GET", "/v1/responses/resp_missing/input_items", "", nil)
	wantError(t, status, body, 404, "response_id")
}
