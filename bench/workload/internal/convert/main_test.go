package main

import (
	"strings"
	"testing"

	"github.com/pitstop-llm/pitstop/bench/workload"
)

func TestConvert(t *testing.T) {
	enc, err := encoder()
	if err != nil {
		t.Fatal(err)
	}
	// GPT-2 ids: "Hello, world!" → [15496 11 995 0]; "Convert this to text to speech. " is 9 (Con·vert, …, ".", " ").
	if got := len(enc.EncodeOrdinary("Hello, world!")); got != 4 {
		t.Fatalf("Hello, world! = %d tokens, want 4", got)
	}
	src := `{"1_1": [
	  {"prompt": "Hello, world!", "completion": " Hi", "api_token": "Convert this to text to speech. ", "api_time": 5.5},
	  {"prompt": "Hello, world! HiConvert this to text to speech. ", "completion": " Done", "api_token": " next question", "api_time": 20},
	  {"prompt": "Hello, world! HiConvert this to text to speech.  Done next question", "completion": " ok"}],
	 "deadbeefdeadbeefdeadbeefdeadbeef": [{"prompt_tokens": 10, "completion_tokens": 3, "api_time": 0.0001, "api_token_length": 2}, {"prompt_tokens": 15, "completion_tokens": 1}]}`
	out, st, err := convert([]byte(src), enc)
	if err != nil {
		t.Fatal(err)
	}
	if st.requests != 2 || st.segments != 5 || st.textSegments != 3 || st.pairs != 2 {
		t.Errorf("stats %+v", st)
	}
	s := string(out)
	for _, want := range []string{
		`"1_1": [{"prompt_tokens": 4, "completion_tokens": 1, "api_time": 5.5, "api_token_length": 9, "tool": "tts"}`,
		`"tool": "human-think"}`,
		`{"prompt_tokens": 10, "completion_tokens": 3, "api_time": 0.0001, "api_token_length": 2, "tool": "math"}`,
	} {
		if !strings.Contains(s, want) {
			t.Errorf("output lacks %s:\n%s", want, s)
		}
	}
	if strings.Index(s, `"1_1"`) > strings.Index(s, `"deadbeef`) {
		t.Error("request order not kept")
	}
	w, err := workload.ParseInfercept("t", out, workload.InferceptOptions{})
	if err != nil {
		t.Fatalf("the workload package rejects the converted output: %v", err)
	}
	if c := w.Programs[0].Calls[0]; c.NewTokens != 4 || c.Segments[0].Tool != "tts" || c.Segments[1].Tool != "human-think" {
		t.Errorf("converted call %+v", c)
	}
}
