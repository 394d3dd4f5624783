package infercept

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

func TestTraceRecords(t *testing.T) {
	recs, err := TraceRecords([]byte(inferceptSample), RecordOptions{Source: "s"})
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
	// Text is counted with GPT-2's BPE: "Once upon a time" is 4 tokens,
	// "Tell me a story about a dragon." 8.
	if nm[0].Source != "s/N_M" || nm[0].Tool != "tts" || nm[1].Tool != "image-gen" || nm[0].TokensApprox ||
		nm[0].Input.LastMessage != "Tell me a story about a dragon." || nm[1].Input.LastMessage != "Convert this to text to speech. " ||
		nm[0].PreToolOutputTokens != 4 || nm[0].Input.PromptTokens != 8 || !slices.Equal(nm[0].Input.ToolNames, []string{"tts", "image-gen"}) {
		t.Fatalf("N_M records: %+v", nm)
	}
	ve := recs[6:]
	if ve[0].Tool != "virtual-env" || !slices.Equal(ve[0].Input.ToolNames, []string{"virtual-env"}) {
		t.Fatalf("count-only conversation records: %+v", ve)
	}

	// Counts given replace the counts of the text; prompts are rebuilt.
	counts := map[string]RequestCounts{"3_1": {Prompt: 9, Segments: []SegmentCounts{{Output: 4, ToolReturn: 8}, {Output: 6, ToolReturn: 7}, {Output: 5}}}}
	recs, err = TraceRecords([]byte(inferceptSample), RecordOptions{Source: "s", Counts: counts})
	if err != nil {
		t.Fatal(err)
	}
	nm = recs[3:6]
	if nm[0].Input.PromptTokens != 9 || nm[1].Input.PromptTokens != 21 || nm[2].Input.PromptTokens != 34 ||
		nm[1].PreToolOutputTokens != 6 || nm[1].ToolReturnTokens != 7 {
		t.Fatalf("N_M records with counts: %+v", nm)
	}
}

func TestTraceRecordsErrors(t *testing.T) {
	for data, want := range map[string]string{
		`[1,2]`:                             "not an InferCept dataset",
		`{}`:                                "no requests",
		`{"a": [{"completion_tokens": 3}]}`: "request a segment 0: neither prompt_tokens nor prompt",
		`{"a": [{"prompt_tokens": 3}]}`:     "neither completion_tokens nor completion",
		`{"a": [{"prompt_tokens": 3, "completion_tokens": -1}]}`:                "negative token count",
		`{"a": [{"prompt_tokens": 3, "completion_tokens": 1, "api_time": -4}]}`: "api_time -4",
	} {
		if _, err := TraceRecords([]byte(data), RecordOptions{}); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want one containing %q", data, err, want)
		}
	}
	_, err := TraceRecords([]byte(inferceptSample), RecordOptions{Counts: map[string]RequestCounts{"7": {Segments: []SegmentCounts{{}}}}})
	if err == nil || !strings.Contains(err.Error(), "request 7 has 2 segments but its counts have 1") {
		t.Errorf("short counts: %v", err)
	}
}
