package api

import (
	"bufio"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

const respModel = `"model":"pitstop-scripted-test"`

// TestResponsesFunctionToolChain: a function tool's call comes back as a
// function_call item; previous_response_id with its output completes the
// chain, on the conversation pitstop kept; the response is stored for GET
// and DELETE.
func TestResponsesFunctionToolChain(t *testing.T) {
	ts := newTestServer(t, serverOpts{})
	tool := `{"type":"function","name":"get_weather","description":"weather","parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}`
	status, r1 := ts.do("POST", "/v1/responses", `{`+respModel+`,"instructions":"Be brief.","input":"/call get_weather {\"city\": \"Paris\"}","tools":[`+tool+`]}`, nil)
	if status != 200 || r1["status"] != "completed" || r1["object"] != "response" {
		t.Fatalf("first: %d %v", status, r1)
	}
	out := r1["output"].([]any)
	call := out[len(out)-1].(map[string]any)
	if call["type"] != "function_call" || call["name"] != "get_weather" || call["arguments"] != `{"city": "Paris"}` {
		t.Fatalf("output %v", out)
	}
	id := r1["id"].(string)
	body := `{` + respModel + `,"previous_response_id":"` + id + `","input":[{"type":"function_call_output","call_id":"` + call["call_id"].(string) + `","output":"sunny, 21 C"}],"tools":[` + tool + `]}`
	status, r2 := ts.do("POST", "/v1/responses", body, nil)
	if status != 200 || r2["status"] != "completed" || r2["previous_response_id"] != id {
		t.Fatalf("second: %d %v", status, r2)
	}
	msg := r2["output"].([]any)[0].(map[string]any)
	text := msg["content"].([]any)[0].(map[string]any)["text"]
	if msg["type"] != "message" || text != "The result is sunny, 21 C." {
		t.Fatalf("second output %v", r2["output"])
	}
	if status, got := ts.do("GET", "/v1/responses/"+id, "", nil); status != 200 || got["id"] != id {
		t.Fatalf("GET: %d %v", status, got)
	}
	if status, got := ts.do("DELETE", "/v1/responses/"+id, "", nil); status != 200 || got["deleted"] != true {
		t.Fatalf("DELETE: %d %v", status, got)
	}
	status, body404 := ts.do("GET", "/v1/responses/"+id, "", nil)
	wantError(t, status, body404, 404, "response_id")
	status, body404 = ts.do("POST", "/v1/responses", `{`+respModel+`,"previous_response_id":"`+id+`","input":"hi"}`, nil)
	wantError(t, status, body404, 404, "previous_response_id")
}

// TestResponsesServerSideTool: a registered tool runs inside the response
// and appears as a pitstop_tool_call output item before the answer.
func TestResponsesServerSideTool(t *testing.T) {
	ts := newTestServer(t, serverOpts{})
	status, r := ts.do("POST", "/v1/responses", `{`+respModel+`,"input":[{"role":"user","content":[{"type":"input_text","text":"What is (17+25)*3?"}]}],"tools":[{"type":"function","name":"calculator"}],"store":false}`, nil)
	if status != 200 {
		t.Fatalf("%d %v", status, r)
	}
	out := r["output"].([]any)
	if len(out) != 2 || out[0].(map[string]any)["type"] != "pitstop_tool_call" || out[0].(map[string]any)["output"] != "126" {
		t.Fatalf("output %v", out)
	}
	if status, _ := ts.do("GET", "/v1/responses/"+r["id"].(string), "", nil); status != 404 {
		t.Errorf("store false: GET %d", status)
	}
}

// TestResponsesStreamEvents: a streamed response's events arrive in the
// documented order with increasing sequence numbers.
func TestResponsesStreamEvents(t *testing.T) {
	ts := newTestServer(t, serverOpts{})
	req, _ := http.NewRequest("POST", ts.http.URL+"/v1/responses", strings.NewReader(`{`+respModel+`,"stream":true,"input":"/pre Let me check.\n/call get_weather {\"city\": \"Oslo\"}","tools":[{"type":"function","name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string"}}}}]}`))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var types []string
	sc := bufio.NewScanner(resp.Body)
	seq := -1
	var final map[string]any
	for sc.Scan() {
		line := sc.Text()
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			continue
		}
		var ev map[string]any
		if err := json.Unmarshal([]byte(data), &ev); err != nil {
			t.Fatal(err)
		}
		if n := int(ev["sequence_number"].(float64)); n != seq+1 {
			t.Fatalf("sequence %d after %d", n, seq)
		} else {
			seq = n
		}
		types = append(types, ev["type"].(string))
		if ev["type"] == "response.completed" {
			final = ev["response"].(map[string]any)
		}
	}
	// Deltas repeat: keep the order of first appearance of each kind.
	want := []string{"response.created", "response.in_progress", "response.output_item.added", "response.content_part.added",
		"response.output_text.delta", "response.output_text.done", "response.content_part.done", "response.output_item.done",
		"response.output_item.added", "response.function_call_arguments.delta", "response.function_call_arguments.done",
		"response.output_item.done", "response.completed"}
	var got []string
	for i, ty := range types {
		if i > 0 && types[i-1] == ty && strings.HasSuffix(ty, ".delta") {
			continue
		}
		got = append(got, ty)
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("events\n%v\nwant\n%v", got, want)
	}
	out := final["output"].([]any)
	if len(out) != 2 || out[1].(map[string]any)["arguments"] != `{"city": "Oslo"}` || final["status"] != "completed" {
		t.Fatalf("final %v", final)
	}
}

// TestResponsesDecoding: wrong shapes are 400s naming the parameter.
func TestResponsesDecoding(t *testing.T) {
	for _, c := range []struct{ body, param string }{
		{`{"input":"x"}`, "model"},
		{`{` + respModel + `}`, "input"},
		{`{` + respModel + `,"input":5}`, "input"},
		{`{` + respModel + `,"input":[{"role":"robot","content":"x"}]}`, "input[0].role"},
		{`{` + respModel + `,"input":[{"type":"image","content":"x"}]}`, "input[0].type"},
		{`{` + respModel + `,"input":[{"role":"user","content":[{"type":"input_image"}]}]}`, "input[0].content[0].type"},
		{`{` + respModel + `,"input":[{"type":"function_call_output","output":"x"}]}`, "input[0].call_id"},
		{`{` + respModel + `,"input":"x","tools":[{"type":"web_search"}]}`, "tools[0].type"},
		{`{` + respModel + `,"input":"x","tool_choice":{"type":"function"}}`, "tool_choice"},
		{`{` + respModel + `,"input":"x","previous_response_id":"abc"}`, "previous_response_id"},
		{`{` + respModel + `,"input":"x","max_output_tokens":0}`, "max_output_tokens"},
		{`{` + respModel + `,"input":"x","text":{"format":{"type":"json_schema","name":"x","schema":{"type":"string","pattern":"a"}}}}`, ""},
		{`{` + respModel + `,"input":"x","text":{"format":{"type":"yaml"}}}`, "text.format.type"},
	} {
		p, aerr := DecodeResponsesRequest([]byte(c.body))
		if c.param == "" { // accepted by the decoder, refused by the runtime
			if aerr != nil || p.Format == nil {
				t.Errorf("%s: %v", c.body, aerr)
			}
			continue
		}
		if aerr == nil || aerr.Param == nil || *aerr.Param != c.param {
			t.Errorf("%s: %+v", c.body, aerr)
		}
	}
}

// FuzzDecodeResponsesRequest: the decoder never panics and answers a
// request or a 400.
func FuzzDecodeResponsesRequest(f *testing.F) {
	for _, s := range []string{
		`{` + respModel + `,"input":"hi"}`,
		`{` + respModel + `,"instructions":"i","input":[{"role":"user","content":[{"type":"input_text","text":"a"}]},{"type":"function_call","call_id":"c","name":"f","arguments":"{}"},{"type":"function_call_output","call_id":"c","output":"r"}],"tools":[{"type":"function","name":"f","strict":true,"parameters":{"type":"object"}}],"tool_choice":{"type":"function","name":"f"},"stream":true,"store":false}`,
		`{` + respModel + `,"previous_response_id":"resp_1","input":[]}`,
		`{` + respModel + `,"input":"x","text":{"format":{"type":"json_schema","name":"n","schema":{"type":"object"}}}}`,
		`[]`, ``, `{"model":"m","input":{}}`,
		`{` + respModel + `,"input":"x","background":true,"metadata":{"k":"v"},"include":[],"reasoning":null,"truncation":"disabled","service_tier":"auto","user":"u"}`,
		`{` + respModel + `,"input":"x","frobnicate":1}`, `{` + respModel + `,"input":"x","top_logprobs":3,"prompt_cache_key":7}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		p, aerr := DecodeResponsesRequest(body)
		if (p == nil) == (aerr == nil) {
			t.Fatalf("request %v and error %v", p, aerr)
		}
		if aerr != nil && aerr.Status != http.StatusBadRequest {
			t.Fatalf("status %d", aerr.Status)
		}
		if p != nil && len(p.Input) == 0 && p.Previous == "" {
			t.Fatal("accepted without input")
		}
	})
}

// TestResponsesPerTenant: a stored response is its tenant's: another
// tenant can neither read it, chain on it nor delete it.
func TestResponsesPerTenant(t *testing.T) {
	ts := twoTenants(t, twoTenantKeys)
	alpha := map[string]string{"Authorization": "Bearer ka"}
	beta := map[string]string{"Authorization": "Bearer kb"}
	status, r := ts.do("POST", "/v1/responses", `{`+respModel+`,"input":"hello"}`, alpha)
	if status != 200 {
		t.Fatalf("%d %v", status, r)
	}
	id := r["id"].(string)
	if status, _ := ts.do("GET", "/v1/responses/"+id, "", beta); status != 404 {
		t.Errorf("beta GET: %d", status)
	}
	if status, _ := ts.do("POST", "/v1/responses", `{`+respModel+`,"previous_response_id":"`+id+`","input":"more"}`, beta); status != 404 {
		t.Errorf("beta chain: %d", status)
	}
	if status, _ := ts.do("DELETE", "/v1/responses/"+id, "", beta); status != 404 {
		t.Errorf("beta DELETE: %d", status)
	}
	if status, got := ts.do("GET", "/v1/responses/"+id, "", alpha); status != 200 || got["id"] != id {
		t.Errorf("alpha GET: %d %v", status, got)
	}
}
