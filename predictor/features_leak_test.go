package predictor

import (
	"slices"
	"testing"
)

// leakProgram is one program of three segments: two tool calls and a reply.
func leakProgram() []TraceRecord {
	recs := []TraceRecord{
		{Source: "s", Program: "p", Segment: 0, Input: Input{LastMessage: "find flights to Oslo", ToolNames: []string{"search", "book"}, PromptTokens: 300},
			PreToolOutputTokens: 40, Tool: "search"},
		{Source: "s", Program: "p", Segment: 1, Input: Input{LastMessage: `{"flights":[1,2]}`, ToolNames: []string{"search", "book"}, PromptTokens: 360},
			PreToolOutputTokens: 25, Tool: "book"},
		{Source: "s", Program: "p", Segment: 2, Input: Input{LastMessage: `{"ok":true}`, ToolNames: []string{"search", "book"}, PromptTokens: 400},
			PreToolOutputTokens: 90},
	}
	var h History
	for i := range recs {
		recs[i].Input.History = h
		h = h.Observe(recs[i].PreToolOutputTokens, recs[i].Tool)
	}
	return recs
}

func featuresOf(recs []TraceRecord) [][]float32 {
	DeriveContext(recs)
	X, _ := FeaturizeTraces(recs)
	return X
}

// No feature of a segment reads the segment's own tool or output (or what the
// tool then did): changing them leaves that segment's features as they were,
// and changes only the later segments' (which see them as history).
func TestFeaturesDoNotLeak(t *testing.T) {
	base := featuresOf(leakProgram())
	for k := range 3 {
		recs := leakProgram()
		recs[k].Tool = "other_tool"
		recs[k].PreToolOutputTokens = 7 * (recs[k].PreToolOutputTokens + 11)
		d := 3.5
		recs[k].ToolDurationS = &d
		recs[k].ToolReturnTokens = 999
		recs[k].ToolArgs = `{"command":"make test"}`
		// What later segments know of it changes with it.
		var h History
		for i := range recs {
			recs[i].Input.History = h
			h = h.Observe(recs[i].PreToolOutputTokens, recs[i].Tool)
		}
		got := featuresOf(recs)
		for i := 0; i <= k; i++ {
			if !slices.Equal(got[i], base[i]) {
				t.Errorf("changing segment %d's own tool and output changed segment %d's features", k, i)
			}
		}
		if k < 2 && slices.Equal(got[k+1], base[k+1]) {
			t.Errorf("segment %d's features do not see segment %d's tool and output at all", k+1, k)
		}
	}
}

// The classes the window mode keeps (WindowModes) read the argument class of
// the call whose result a segment resumes after (the previous segment's
// arguments), never the segment's own: changing a segment's own tool, its
// arguments and its output leaves its classes as they were, and the next
// segment's LastToolClass follows the changed arguments.
func TestWindowModeClassesDoNotLeak(t *testing.T) {
	program := func() []TraceRecord {
		recs := leakProgram()
		recs[0].ToolArgs = `{"command":"cd /repo && grep -rn foo ."}`
		recs[1].ToolArgs = `{"url":"https://api.example.com/book"}`
		DeriveContext(recs)
		DeriveToolClasses(recs)
		return recs
	}
	base := program()
	if base[0].Input.LastToolClass != "" || base[1].Input.LastToolClass != "prog:grep" || base[2].Input.LastToolClass != "host:api.example.com" {
		t.Fatalf("tool classes %q %q %q, want \"\" prog:grep host:api.example.com",
			base[0].Input.LastToolClass, base[1].Input.LastToolClass, base[2].Input.LastToolClass)
	}
	for k := range 3 {
		recs := leakProgram()
		recs[0].ToolArgs = `{"command":"cd /repo && grep -rn foo ."}`
		recs[1].ToolArgs = `{"url":"https://api.example.com/book"}`
		recs[k].ToolArgs = `{"command":"make test"}`
		recs[k].PreToolOutputTokens = 7 * (recs[k].PreToolOutputTokens + 11)
		DeriveContext(recs)
		DeriveToolClasses(recs)
		var b1, b2 [modeRootLevel + 1]modeClass
		if !slices.Equal(modeClasses(recs[k].Input, &b1), modeClasses(base[k].Input, &b2)) {
			t.Errorf("changing segment %d's own arguments and output changed its window-mode classes", k)
		}
		if k < 2 && recs[k+1].Input.LastToolClass != "prog:make" {
			t.Errorf("segment %d's tool class %q does not follow segment %d's arguments (want prog:make)", k+1, recs[k+1].Input.LastToolClass, k)
		}
	}
	// A gap in a program's segments, or a tool that is not the last message's, gives no class.
	gap := program()
	gap[1].Segment = 5
	gap[1].Input.LastToolClass, gap[2].Input.LastToolClass = "", ""
	gap[2].Input.LastTool = "other"
	DeriveToolClasses(gap)
	if gap[1].Input.LastToolClass != "" || gap[2].Input.LastToolClass != "" {
		t.Fatalf("tool classes %q %q across a gap and a mismatched tool, want none", gap[1].Input.LastToolClass, gap[2].Input.LastToolClass)
	}
}

func TestDeriveContext(t *testing.T) {
	recs := leakProgram()
	DeriveContext(recs)
	if recs[0].Input.LastTool != "" || recs[1].Input.LastTool != "search" || recs[2].Input.LastTool != "book" {
		t.Fatalf("last tools %q %q %q, want \"\" search book", recs[0].Input.LastTool, recs[1].Input.LastTool, recs[2].Input.LastTool)
	}
	h := recs[2].Input.History
	if h.MeanToolCallTokens != 32.5 || h.Replies != 0 || h.Calls != 2 {
		t.Fatalf("history of the third segment %+v, want 2 calls with tool-call mean 32.5", h)
	}
	// The user's text and a tool's result are told apart.
	X, _ := FeaturizeTraces(recs)
	if X[0][kindOff] != 1 || X[1][kindOff+1] != 1 {
		t.Fatal("kind of the last message not in the features")
	}
}

// A segment's Retry (by which ProgramBlend keeps retries apart) reads the
// histories it and its program's earlier segments carry (treeProgram),
// never its own tool, arguments or output: changing them leaves it.
func TestRetryDoesNotLeak(t *testing.T) {
	base := treeProgram()
	DeriveRetries(base)
	for k := range base {
		recs := treeProgram()
		recs[k].Tool = "other_tool"
		recs[k].PreToolOutputTokens = 7 * (recs[k].PreToolOutputTokens + 11)
		recs[k].ToolArgs = `{"command":"make test"}`
		DeriveRetries(recs)
		if recs[k].Input.Retry != base[k].Input.Retry {
			t.Errorf("changing segment %d's own tool and output changed its Retry", k)
		}
	}
}
