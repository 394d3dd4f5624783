package api

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// decodeObjectRef is decodeObject as it was before segmentio/encoding:
// encoding/json's Decoder alone, the reference FuzzDecodeObject holds
// decodeObject to.
func decodeObjectRef(body []byte, v any) *APIError {
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return invalid("", "invalid_json", "We could not parse the JSON body of your request: expected a JSON object.")
	}
	dec := json.NewDecoder(bytes.NewReader(trimmed))
	if err := dec.Decode(v); err != nil {
		return invalid(jsonErrorParam(err), "invalid_json", "We could not parse the JSON body of your request: %s", jsonErrorText(err))
	}
	if dec.More() {
		return invalid("", "invalid_json", "We could not parse the JSON body of your request: more than one JSON value.")
	}
	return nil
}

var decodeObjectSeeds = []string{
	`{"model":"m","messages":[{"role":"user","content":"hi"}]}`,
	`{"model":"m","messages":[{"role":"user","content":[{"type":"text","text":"a"}]}],"stream":true,"stream_options":{"include_usage":true},"max_tokens":5,"temperature":0.5,"top_p":1,"seed":-3}`,
	`{"model":"m","messages":[{"role":"assistant","content":null,"tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{\"a\":1}"}}]},{"role":"tool","tool_call_id":"c","content":"r"}],"tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object"},"strict":true}}],"tool_choice":"auto","parallel_tool_calls":false}`,
	`{"MODEL":"m","Messages":[]}`,
	`{"model":"m","model":"n"}`,
	`{"model":1,"stream":"yes"}`,
	`{"max_tokens":1.5}`,
	`{"max_tokens":1e400}`,
	`{"seed":99999999999999999999}`,
	`{"messages":[{"role":1}]}`,
	`{"messages":{}}`,
	`{"model":"\u00e9\ud800x"}`,
	"{\"model\":\"\xff\"}",
	`{"input":[{"role":"user","content":"x"}],"metadata":{"a":"b"},"text":{"format":{"type":"text"}},"max_output_tokens":"9"}`,
	`{"url":"http://a:1","kind":"vllm","weight":2.5,"max_inflight":-1,"api_key_env":7}`,
	`{} {}`, `{}}`, `{}]`, `{} x`, `{`, `{"a":}`, `[]`, `null`, ``, ` { } `,
	// nested as deep as encoding/json takes, and one deeper (it refuses)
	`{"x":` + strings.Repeat("[", 9999) + strings.Repeat("]", 9999) + `}`,
	`{"x":` + strings.Repeat("[", 10000) + strings.Repeat("]", 10000) + `}`,
	`{"tool_choice":` + strings.Repeat("[", 10000) + strings.Repeat("]", 10000) + `}`,
	`{} ` + strings.Repeat("[", 10001),
}

// TestDecodeObjectMatchesStd: the seeds are taken or refused as
// encoding/json's Decoder took or refused them, with the same value or the
// same error.
func TestDecodeObjectMatchesStd(t *testing.T) {
	for _, s := range decodeObjectSeeds {
		compareDecodeObject(t, []byte(s))
	}
}

// FuzzDecodeObject: any body, the same.
func FuzzDecodeObject(f *testing.F) {
	for _, s := range decodeObjectSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(compareDecodeObject)
}

// compareDecodeObject decodes body as each of decodeObject's callers does
// (a chat completion, a response, a backend to add) both ways.
func compareDecodeObject(t *testing.T, body []byte) {
	compareDecodeAs[chatRequest](t, body)
	compareDecodeAs[responsesRequest](t, body)
	compareDecodeAs[struct {
		URL         string  `json:"url"`
		Kind        string  `json:"kind"`
		Weight      float64 `json:"weight"`
		MaxInflight int     `json:"max_inflight"`
		APIKeyEnv   string  `json:"api_key_env"`
	}](t, body)
}

func compareDecodeAs[T any](t *testing.T, body []byte) {
	var got, want T
	gerr, werr := decodeObject(body, &got), decodeObjectRef(body, &want)
	if (gerr == nil) != (werr == nil) {
		t.Fatalf("%q as %T: decodeObject %v, encoding/json %v", body, got, gerr, werr)
	}
	if gerr != nil {
		if !reflect.DeepEqual(gerr, werr) {
			t.Fatalf("%q as %T: decodeObject answers %+v, encoding/json %+v", body, got, gerr, werr)
		}
		return
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%q as %T: decoded %+v, encoding/json %+v", body, got, got, want)
	}
}
