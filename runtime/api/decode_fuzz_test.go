package api

import (
	"encoding/json"
	"testing"

	"github.com/pitstop-llm/pitstop/models/chat"
)

// FuzzDecodeChatRequest: the request decoder never panics, answers either
// a request or a 400 error, and a request it accepts is well formed.
func FuzzDecodeChatRequest(f *testing.F) {
	seeds := []string{
		`{"model":"m","messages":[{"role":"user","content":"hi"}]}`,
		`{"model":"m","messages":[{"role":"user","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}],"stream":true,"stream_options":{"include_usage":true}}`,
		`{"model":"m","messages":[{"role":"system","content":"s"},{"role":"user","content":"q"},{"role":"assistant","content":null,"tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{\"a\":1}"}}]},{"role":"tool","tool_call_id":"c","content":"r"}],"tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object"}}}],"tool_choice":{"type":"function","function":{"name":"f"}},"parallel_tool_calls":false}`,
		`{"model":"m","messages":[{"role":"developer","content":"d"}],"tool_choice":"none","max_tokens":5,"n":1}`,
		`{"model":"m","messages":[{"role":"assistant","tool_calls":[{"function":{"name":"f","arguments":{"x":[1,2]}}}]}]}`,
		`{"model":"m","messages":[]}`,
		`{"model":1}`,
		`{"model":"m","messages":[{"role":"user"}]}`,
		`{"model":"m","messages":[{"role":"user","content":"x"}],"tools":[{"type":"function"}]}`,
		`{"model":"m","messages":[{"role":"user","content":"x"}],"tool_choice":"required"}`,
		`{"model":"m","messages":[{"role":"user","content":"x"}]} {}`,
		`{"model":"m","messages":[{"role":"user","content":"\u0000\ud800"}]}`,
		`[]`, `null`, ``, `{`, `{"messages":{}}`,
	}
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		p, err := DecodeChatRequest(body)
		if (p == nil) == (err == nil) {
			t.Fatalf("want exactly one of request and error, got %v and %v", p, err)
		}
		if err != nil {
			if err.Status != 400 || err.Message == "" || err.Type == "" {
				t.Fatalf("bad error %+v", err)
			}
			if _, jerr := json.Marshal(errorBody{Error: err}); jerr != nil {
				t.Fatalf("error does not marshal: %v", jerr)
			}
			return
		}
		r := p.Request
		if r.Model == "" || len(r.Messages) == 0 {
			t.Fatalf("accepted request without model or messages: %+v", r)
		}
		for _, m := range r.Messages {
			switch m.Role {
			case chat.RoleSystem, chat.RoleUser, chat.RoleAssistant, chat.RoleTool:
			default:
				t.Fatalf("accepted role %q", m.Role)
			}
			for _, tc := range m.ToolCalls {
				var v map[string]any
				if json.Unmarshal([]byte(tc.Arguments), &v) != nil {
					t.Fatalf("accepted tool call arguments that are not an object: %q", tc.Arguments)
				}
			}
		}
		for _, tl := range r.Tools {
			if tl.Name == "" {
				t.Fatalf("accepted a tool without a name")
			}
		}
	})
}
