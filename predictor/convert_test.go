package predictor

import (
	"slices"
	"strings"
	"testing"
)

const inferceptSample = `{
 "0a84bcdff8434b23971032489f44b90a": [
   {"prompt_tokens": 392, "completion_tokens": 127, "api_time": 8.6e-05, "api_token_length": 21},
   {"prompt_tokens": 540, "completion_tokens": 47, "api_time": 0.7, "api_token_length": 23},
   {"prompt_tokens": 610, "completion_tokens": 48}],
 "3_1": [
   {"prompt": "Tell me a story about a dragon.", "completion": "Once upon a time", "api_token": "Convert this to text to speech. ", "api_time": 4.6},
   {"prompt": "Tell me a story about a dragon.Once upon a timeConvert this to text to speech. ", "completion": "Here is the converted file. ", "api_token": "Generate an image about this. ", "api_time": 11.5},
   {"prompt": "…", "completion": "Here is the image. "}],
 "7": [
   {"prompt_tokens": 2000, "completion_tokens": 4, "api_time": 0.1, "api_token_length": 3},
   {"prompt_tokens": 2007, "completion_tokens": 4}]
}`

func TestConvertInfercept(t *testing.T) {
	recs, err := ConvertInfercept([]byte(inferceptSample), InferceptOptions{Source: "s"})
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 8 {
		t.Fatalf("%d records, want 8", len(recs))
	}
	hex := recs[:3]
	if hex[0].Source != "s/hex" || hex[0].Tool != "math" || hex[1].Tool != "qa" || hex[2].Tool != "" ||
		hex[1].Input.PromptTokens != 540 || hex[1].PreToolOutputTokens != 47 || hex[0].ToolReturnTokens != 21 ||
		*hex[1].ToolDurationS != 0.7 || hex[2].ToolDurationS != nil || hex[0].TokensApprox {
		t.Fatalf("hex records: %+v", hex)
	}
	if h := hex[2].Input.History; h.Calls != 2 || h.MeanOutputTokens != 87 || h.LastOutputTokens != 47 || !slices.Equal(h.ToolsCalled, []string{"math", "qa"}) {
		t.Fatalf("hex history %+v", h)
	}
	nm := recs[3:6]
	if nm[0].Source != "s/N_M" || nm[0].Tool != "tts" || nm[1].Tool != "image-gen" || !nm[0].TokensApprox ||
		nm[0].Input.LastMessage != "Tell me a story about a dragon." || nm[1].Input.LastMessage != "Convert this to text to speech. " ||
		nm[0].PreToolOutputTokens != ApproxTokens("Once upon a time") || !slices.Equal(nm[0].Input.ToolNames, []string{"tts", "image-gen"}) {
		t.Fatalf("N_M records: %+v", nm)
	}
	ve := recs[6:]
	if ve[0].Tool != "virtual-env" || !slices.Equal(ve[0].Input.ToolNames, []string{"virtual-env"}) {
		t.Fatalf("count-only conversation records: %+v", ve)
	}

	// Tokenizer counts replace the text's approximations; prompts are rebuilt.
	counts := map[string]RequestCounts{"3_1": {Prompt: 9, Segments: []SegmentCounts{{Output: 4, ToolReturn: 8}, {Output: 6, ToolReturn: 7}, {Output: 5}}}}
	recs, err = ConvertInfercept([]byte(inferceptSample), InferceptOptions{Source: "s", Counts: counts})
	if err != nil {
		t.Fatal(err)
	}
	nm = recs[3:6]
	if nm[0].TokensApprox || nm[0].Input.PromptTokens != 9 || nm[1].Input.PromptTokens != 21 || nm[2].Input.PromptTokens != 34 ||
		nm[1].PreToolOutputTokens != 6 || nm[1].ToolReturnTokens != 7 {
		t.Fatalf("N_M records with counts: %+v", nm)
	}
}

func TestConvertInferceptErrors(t *testing.T) {
	for data, want := range map[string]string{
		`[1,2]`:                             "not an InferCept dataset",
		`{}`:                                "no requests",
		`{"a": [{"completion_tokens": 3}]}`: "request a segment 0: neither prompt_tokens nor prompt",
		`{"a": [{"prompt_tokens": 3}]}`:     "neither completion_tokens nor completion",
		`{"a": [{"prompt_tokens": 3, "completion_tokens": -1}]}`:                "negative token count",
		`{"a": [{"prompt_tokens": 3, "completion_tokens": 1, "api_time": -4}]}`: "api_time -4",
	} {
		if _, err := ConvertInfercept([]byte(data), InferceptOptions{}); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want one containing %q", data, err, want)
		}
	}
	_, err := ConvertInfercept([]byte(inferceptSample), InferceptOptions{Counts: map[string]RequestCounts{"7": {Segments: []SegmentCounts{{}}}}})
	if err == nil || !strings.Contains(err.Error(), "request 7 has 2 segments but its counts have 1") {
		t.Errorf("short counts: %v", err)
	}
}

func TestConvertBFCL(t *testing.T) {
	q := `{"id": "p_0", "question": [[{"role": "system", "content": "Be terse."}, {"role": "user", "content": "Play Taylor Swift for 20 minutes and Maroon 5 for 15."}]], "function": [{"name": "spotify.play", "description": "Play tracks", "parameters": {"type": "dict", "properties": {"artist": {"type": "string"}, "duration": {"type": "integer"}}}}]}
{"id": "p_1", "question": [[{"role": "user", "content": "No answer for me."}]], "function": []}
`
	a := `{"id": "p_0", "ground_truth": [{"spotify.play": {"artist": ["Taylor Swift"], "duration": [20], "shuffle": [""]}}, {"spotify.play": {"artist": ["Maroon 5"], "duration": [15, 16], "opts": [{"loud": ["", true]}]}}]}
`
	recs, err := ConvertBFCL([]byte(q), []byte(a), "parallel", nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 1 {
		t.Fatalf("%d records, want 1 (p_1 has no ground truth)", len(recs))
	}
	r := recs[0]
	call := `[{"name":"spotify.play","arguments":{"artist":"Taylor Swift","duration":20}},{"name":"spotify.play","arguments":{"artist":"Maroon 5","duration":15,"opts":{"loud":true}}}]`
	if r.Source != "bfcl/parallel" || r.Tool != "spotify.play" || r.PreToolOutputTokens != ApproxTokens(call) || r.ToolDurationS != nil ||
		r.Input.SystemPrompt != "Be terse." || !strings.HasPrefix(r.Input.LastMessage, "Play Taylor") ||
		!slices.Equal(r.Input.ToolNames, []string{"spotify.play"}) || r.Input.PromptTokens < 30 || !r.TokensApprox {
		t.Fatalf("%+v", r)
	}
	if _, err := ConvertBFCL([]byte("not json\n"), []byte(a), "x", nil); err == nil || !strings.Contains(err.Error(), "bfcl x line 1") {
		t.Errorf("bad question line: %v", err)
	}
	if _, err := ConvertBFCL([]byte(q), []byte("{}\n"), "x", nil); err == nil || !strings.Contains(err.Error(), "answers line 1") {
		t.Errorf("bad answer line: %v", err)
	}
	if _, err := ConvertBFCL([]byte(q), nil, "x", nil); err == nil || !strings.Contains(err.Error(), "no question with a ground truth") {
		t.Errorf("no answers: %v", err)
	}
}

// The BFCL subset shipped in predictor/data converts whole.
func TestConvertBundledBFCL(t *testing.T) {
	recs, err := ConvertBFCLDir("data/bfcl", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) < 1400 {
		t.Fatalf("%d records from the shipped BFCL subset", len(recs))
	}
	for _, r := range recs {
		if r.PreToolOutputTokens <= 0 || r.Input.PromptTokens <= 0 || r.Tool == "" || len(r.Input.ToolNames) == 0 {
			t.Fatalf("record %s: %+v", r.Program, r)
		}
	}
	if _, err := ConvertBFCLDir(t.TempDir(), []string{"simple_python"}, nil); err == nil {
		t.Error("empty directory: no error")
	}
}
