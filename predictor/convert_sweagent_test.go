package predictor

import (
	"os"
	"strings"
	"testing"
)

// A trajectory's timed steps become shell-tool calls with the action as the
// command and execution_time (a number or a string) as the duration; steps
// without an action or a time are skipped, keeping their step index.
func TestConvertSWEAgent(t *testing.T) {
	data, err := os.ReadFile("testdata/swe-agent-mini.traj")
	if err != nil {
		t.Fatal(err)
	}
	recs, err := ConvertSWEAgent(data, "swe-agent/test", "run1")
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		seg   int
		class string
		secs  float64
	}{{0, "prog:ls", 0.12}, {1, "prog:python", 0.5}, {4, "prog:pip", 2.25}}
	if len(recs) != len(want) {
		t.Fatalf("%d records, want %d: %+v", len(recs), len(want), recs)
	}
	for i, w := range want {
		r := recs[i]
		if r.Segment != w.seg || r.Tool != SWEAgentShellTool || ArgumentClass(r.ToolArgs) != w.class ||
			r.ToolDurationS == nil || *r.ToolDurationS != w.secs || r.Program != "run1" || r.Source != "swe-agent/test" {
			t.Errorf("record %d = %+v (args %s), want segment %d class %s %v s", i, r, r.ToolArgs, w.seg, w.class, w.secs)
		}
	}
	// They survive the trace file round trip.
	path := t.TempDir() + "/calls.jsonl.gz"
	if err := WriteTraces(path, recs); err != nil {
		t.Fatal(err)
	}
	back, err := ReadTraces(path)
	if err != nil || len(back) != 3 || back[2].ToolArgs != recs[2].ToolArgs {
		t.Fatalf("read back %+v, %v", back, err)
	}
}

func TestConvertSWEAgentErrors(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`not json`, "swe-agent trajectory"},
		{`{"history": []}`, `no "trajectory" array`},
		{`{"trajectory": [{"action": "ls"}]}`, "no step has an execution_time"},
		{`{"trajectory": [{"action": "ls", "execution_time": -1}]}`, "execution_time -1: want seconds >= 0"},
		{`{"trajectory": [{"action": "ls", "execution_time": "soon"}]}`, `execution_time "soon": want seconds`},
		{`{"trajectory": [{"action": "ls", "execution_time": "NaN"}]}`, "want seconds >= 0"},
	} {
		_, err := ConvertSWEAgent([]byte(c.in), "s", "p")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want it to say %q", c.in, err, c.want)
		}
	}
}

// Untrusted trajectories never panic, and whatever converts is a valid
// trace (non-negative, finite durations).
func FuzzConvertSWEAgent(f *testing.F) {
	data, err := os.ReadFile("testdata/swe-agent-mini.traj")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(data)
	f.Add([]byte(`{"trajectory": [{"action": "ls", "execution_time": "1e400"}]}`))
	mini, err := os.ReadFile("testdata/mini-swe-agent-mini.traj.json")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(mini)
	f.Fuzz(func(t *testing.T, in []byte) {
		recs, err := ConvertSWEAgent(in, "s", "p")
		if err != nil {
			return
		}
		timed := 0
		for _, r := range recs {
			if r.ToolDurationS != nil {
				timed++
				if !validSeconds(*r.ToolDurationS) {
					t.Fatalf("invalid duration %+v", r)
				}
			}
			if r.PreToolOutputTokens < 0 || r.Input.PromptTokens < 0 {
				t.Fatalf("negative tokens %+v", r)
			}
		}
		if timed == 0 {
			t.Fatal("converted with no timed call")
		}
	})
}

// mini-swe-agent: each response is a segment with its own token counts; a
// command took from its response (or the previous command of the same
// response) to its output; a response without a timestamp gives a record
// with no duration.
func TestConvertMiniSWEAgent(t *testing.T) {
	data, err := os.ReadFile("testdata/mini-swe-agent-mini.traj.json")
	if err != nil {
		t.Fatal(err)
	}
	recs, err := ConvertSWEAgent(data, "mini/test", "run1")
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		seg, tokens, prompt int
		lastTool, class     string
		secs                float64 // -1: none
	}{
		{0, 84, 1500, "", "prog:ls", 0.25},
		{1, 120, 1700, "bash", "prog:pip", 7.5},
		{1, 0, 0, "", "prog:python -m pytest", 2}, // the response's second call
		{2, 30, 1900, "bash", "prog:ls", -1},
	}
	if len(recs) != len(want) {
		t.Fatalf("%d records, want %d: %+v", len(recs), len(want), recs)
	}
	for i, w := range want {
		r := recs[i]
		secsOK := (w.secs < 0 && r.ToolDurationS == nil) || (r.ToolDurationS != nil && *r.ToolDurationS == w.secs)
		if r.Segment != w.seg || r.PreToolOutputTokens != w.tokens || r.Input.PromptTokens != w.prompt || r.Input.LastTool != w.lastTool ||
			r.Tool != "bash" || ArgumentClass(r.ToolArgs) != w.class || !secsOK {
			t.Errorf("record %d = %+v (args %s), want %+v", i, r, r.ToolArgs, w)
		}
	}
	// The history the third response sees: two tool-call segments, 84 and 120 tokens.
	if h := recs[3].Input.History; h.Calls != 2 || h.MeanOutputTokens != 102 || h.LastOutputTokens != 120 {
		t.Errorf("history %+v", h)
	}
	if _, err := ConvertSWEAgent([]byte(`{"trajectory_format": "mini-swe-agent-1.1", "messages": []}`), "s", "p"); err == nil ||
		!strings.Contains(err.Error(), "no tool call with timestamps") {
		t.Errorf("empty messages: %v", err)
	}
}

// Long commands are cut to maxCommandBytes at a rune boundary and stay
// valid JSON whose program still classifies.
func TestShellArgsCut(t *testing.T) {
	long := "make " + strings.Repeat("é", 200)
	args := shellArgs(long)
	if ArgumentClass(args) != "prog:make" || len(args) > maxCommandBytes+20 {
		t.Fatalf("shellArgs = %s (%d bytes)", args, len(args))
	}
}
