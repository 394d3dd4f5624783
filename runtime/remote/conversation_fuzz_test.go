package remote

import (
	"bytes"
	"encoding/json"
	"math"
	"testing"

	"github.com/pitstop-llm/pitstop/models/chat"
)

// FuzzEncodeBody holds encodeBody's encoder to encoding/json.Marshal, the
// one it replaced: for every request made of the fuzzer's strings and
// numbers (escapes, HTML, invalid UTF-8, raw messages with spaces, floats
// of every size), the same bytes, or an error from both. The request's
// first body (all at once) and a tool round's continuation (the kept
// encoding and the appended messages) are both compared.
func FuzzEncodeBody(f *testing.F) {
	f.Add("user", "hello <b>&</b> \u2028 \xff", "fn", `{"type": "object", "properties": {}}`, `"auto"`, 0.7, int64(42), "stop")
	f.Add("assistant", "", "get_weather", `{ }`, `{"type":"function","function":{"name":"f"}}`, 1e21, int64(-1), "")
	f.Add("tool", "\x00\t\"\\", "n", `[1, 2.50, -0e0, 1E400]`, `null`, 1e-7, int64(math.MaxInt64), "</script>")
	f.Add("user", "x", "", `{"a":[true,false,null,"\u00e9\ud800"]}`, `"required"`, math.Inf(1), int64(0), "a")
	f.Fuzz(func(t *testing.T, role, content, name, params, choice string, temp float64, seed int64, stop string) {
		// The raw messages a Request holds are valid JSON: a tool's
		// parameters were decoded from the client's body (or a tool
		// server's list), tool_choice and response_format are made by
		// the runtime. Invalid ones are not compared: segmentio takes
		// "000" (the first value, 0, and what follows) where
		// encoding/json refuses it.
		if !json.Valid([]byte(params)) {
			params = `{"type":"object"}`
		}
		tools := []chat.Tool{{Name: name, Description: content, Parameters: json.RawMessage(params)}}
		msgs := []chat.Message{
			{Role: chat.RoleSystem, Content: stop},
			{Role: role, Content: content, Name: name, ToolCallID: stop},
			{Role: chat.RoleAssistant, ToolCalls: []chat.ToolCall{{ID: stop, Name: name, Arguments: params}}},
		}
		p := true
		w := wireRequest{Model: name, Stream: true, StreamOptions: wireStreamOptions{IncludeUsage: true},
			Tools: toWireTools(tools), ToolChoice: json.RawMessage(choice), ParallelToolCalls: &p,
			MaxTokens: int(seed % 100000), Temperature: &temp, TopP: &temp, Seed: &seed, Stop: []string{stop, content},
			ResponseFormat: json.RawMessage(params)}
		if !json.Valid([]byte(choice)) {
			w.ToolChoice = nil
		}
		for _, v := range []any{&w, toWireMessages(msgs), toWireMessages(msgs[1:]), toWireMessages(nil)} {
			want, werr := json.Marshal(v)
			got, gerr := appendJSON(nil, v)
			if (werr != nil) != (gerr != nil) {
				t.Fatalf("encoding/json's error %v, marshal's %v", werr, gerr)
			}
			if werr == nil && !bytes.Equal(got, want) {
				t.Fatalf("marshal wrote\n%s\nencoding/json\n%s", got, want)
			}
		}
		// encodeBody itself, first body and continuation, against the
		// whole body encoded at once by encoding/json.
		req := &Request{Messages: msgs[:2], Tools: tools}
		for _, n := range []int{2, 3, 0} {
			req.Messages = msgs[:n]
			var room []wireMessage
			got, gerr := req.encodeBody(&w, &room)
			want, werr := json.Marshal(struct {
				Messages []wireMessage `json:"messages"`
				*wireRequest
			}{toWireMessages(req.Messages), &w})
			if (werr != nil) != (gerr != nil) {
				t.Fatalf("%d messages: encoding/json's error %v, encodeBody's %v", n, werr, gerr)
			}
			if werr == nil && !bytes.Equal(got, want) {
				t.Fatalf("%d messages: encodeBody wrote\n%s\nencoding/json\n%s", n, got, want)
			}
		}
	})
}
