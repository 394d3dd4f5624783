package api

import (
	"bytes"
	"encoding/json"
	"reflect"
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
	`{} {}`, `{}}`, `{}]`, `{} x`, `{`, `{"a":}`, `[]`, `null`, ``, ` { } `,
}

// TestDecodeObjectMatchesStd: the seeds are taken or refused as
// encoding/json's Decoder took or refused them, with the same request or
// the same field named at fault.
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

func compareDecodeObject(t *testing.T, body []byte) {
	var got, want chatRequest
	gerr, werr := decodeObject(body, &got), decodeObjectRef(body, &want)
	if (gerr == nil) != (werr == nil) {
		t.Fatalf("%q: decodeObject %v, encoding/json %v", body, gerr, werr)
	}
	if gerr != nil {
		if !reflect.DeepEqual(gerr, werr) {
			t.Fatalf("%q: decodeObject answers %+v, encoding/json %+v", body, gerr, werr)
		}
		return
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%q: decoded %+v, encoding/json %+v", body, got, want)
	}
}
