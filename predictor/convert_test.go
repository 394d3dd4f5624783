package predictor

import (
	"slices"
	"strings"
	"testing"
)

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
	gpt2, err := TiktokenCounter(EncodingGPT2)
	if err != nil {
		t.Fatal(err)
	}
	if r.Source != "bfcl/parallel" || r.Tool != "spotify.play" || r.PreToolOutputTokens != gpt2(call) || r.ToolDurationS != nil ||
		r.Input.SystemPrompt != "Be terse." || !strings.HasPrefix(r.Input.LastMessage, "Play Taylor") ||
		!slices.Equal(r.Input.ToolNames, []string{"spotify.play"}) || r.Input.PromptTokens < 30 || r.TokensApprox {
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
