package api

import (
	"encoding/json"
	"testing"

	"github.com/pitstop-llm/pitstop/models/chat"
	"github.com/pitstop-llm/pitstop/runtime"
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
		`{"model":"m","messages":[{"role":"user","content":"x"}],"cache_salt":"s\u00e9"}`,
		`{"model":"m","messages":[{"role":"user","content":"x"}],"cache_salt":""}`,
		`{"model":"m","messages":[{"role":"user","content":"x"}],"cache_salt":[1]}`,
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
		if len(r.CacheSalt) > runtime.MaxCacheSaltBytes {
			t.Fatalf("accepted a cache_salt of %d bytes", len(r.CacheSalt))
		}
		for _, tl := range r.Tools {
			if tl.Name == "" {
				t.Fatalf("accepted a tool without a name")
			}
		}
	})
}

// FuzzPlainContent: a content string that plainContent reads is read as
// json.Unmarshal reads it (any valid JSON string; plainContent declines
// those with escapes or invalid UTF-8, which decodeContent then reads
// with encoding/json).
func FuzzPlainContent(f *testing.F) {
	for _, s := range []string{`"plain"`, `"tab\tnew\nline"`, `"a\/b"`, `"\ud83d\ude00"`, `"\ud800"`, `"\u00e9t\u00E9"`, `"caf` + "\xe9" + `"`, `"q\"q\\"`, `""`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		if !json.Valid(raw) || len(raw) == 0 || raw[0] != '"' {
			return // the body's decode hands plainContent JSON values only
		}
		got, ok := plainContent(raw)
		var want string
		if err := json.Unmarshal(raw, &want); err != nil {
			t.Fatalf("%q: json.Unmarshal: %v", raw, err)
		}
		if ok && got != want {
			t.Fatalf("%q: plainContent %q, json.Unmarshal %q", raw, got, want)
		}
	})
}

// TestPlainContent: strings without escapes take the fast way; those
// with escapes are declined, and decodeContent still reads them.
func TestPlainContent(t *testing.T) {
	for raw, want := range map[string]string{`"plain"`: "plain", `"été: ok"`: "été: ok", `""`: ""} {
		if got, ok := plainContent(json.RawMessage(raw)); !ok || got != want {
			t.Errorf("%s: %q, %v", raw, got, ok)
		}
	}
	for raw, want := range map[string]string{`"a\/b"`: "a/b", `"\ud83d\ude00"`: "😀", `"a\nb"`: "a\nb", `"caf` + "\xe9" + `"`: "caf\uFFFD", `["x"]`: ""} {
		if _, ok := plainContent(json.RawMessage(raw)); ok {
			t.Errorf("%s: taken", raw)
		}
		if want == "" {
			continue
		}
		if got, err := decodeContent("c", json.RawMessage(raw)); err != nil || got != want {
			t.Errorf("%s: decodeContent %q, %v", raw, got, err)
		}
	}
}
