package predictor

import (
	"errors"
	"strings"
	"testing"
)

// A search that calls search, gives up on that branch after one more turn
// (a thought and Finish), then tries lookup and answers: four turns, in the
// search's order, each with the inputs of its own branch. The kept path
// (train_messages) is search, lookup, Finish.
const toolBenchTreeAnswer = `{
 "answer_generation": {
  "function": [{"name": "search", "description": "find", "parameters": {}}, {"name": "lookup", "description": "look", "parameters": {}}],
  "train_messages": [[
   {"role": "system", "content": "you are an agent"},
   {"role": "user", "content": "find the thing"},
   {"role": "assistant", "content": null, "function_call": {"name": "search", "arguments": "q a"}},
   {"role": "function", "name": "search", "content": "r one"},
   {"role": "assistant", "content": "try lookup now", "function_call": {"name": "lookup", "arguments": "id 7"}},
   {"role": "function", "name": "lookup", "content": "r two two"},
   {"role": "assistant", "content": null, "function_call": {"name": "Finish", "arguments": "done"}}
  ]]
 },
 "tree": {"tree": {"node_type": "Action Input", "description": "", "children": [
  {"node_type": "Action", "description": "search", "children": [
   {"node_type": "Action Input", "description": "q a", "observation": "r one", "children": [
    {"node_type": "Thought", "description": "no luck so give up", "children": [
     {"node_type": "Action", "description": "Finish", "children": [
      {"node_type": "Action Input", "description": "give up", "observation": "restart", "children": []}]}]},
    {"node_type": "Thought", "description": "try lookup now", "children": [
     {"node_type": "Action", "description": "lookup", "children": [
      {"node_type": "Action Input", "description": "id 7", "observation": "r two two", "children": [
       {"node_type": "Action", "description": "Finish", "children": [
        {"node_type": "Action Input", "description": "done", "observation": "", "children": []}]}]}]}]}]}]}]}}
}`

func TestConvertToolBenchTreeKeepsEveryTurnOfTheSearch(t *testing.T) {
	words := func(s string) int { return len(strings.Fields(s)) }
	recs, err := ConvertToolBenchTree([]byte(toolBenchTreeAnswer), "g1/7", "toolbench/test", words)
	if err != nil {
		t.Fatal(err)
	}
	type want struct {
		tool, lastTool, lastMessage string
		out, calls                  int
	}
	wants := []want{
		{"search", "", "find the thing", 1 + 2, 0},  // search, "q a"
		{"Finish", "search", "r one", 5 + 1 + 2, 1}, // the thought, Finish, "give up"
		{"lookup", "search", "r one", 3 + 1 + 2, 1}, // the other branch: its inputs are still search's
		{"Finish", "lookup", "r two two", 1 + 1, 2}, // Finish, "done"
	}
	if len(recs) != len(wants) {
		t.Fatalf("%d records, want %d (every turn of the tree)", len(recs), len(wants))
	}
	for i, w := range wants {
		r := recs[i]
		if r.Tool != w.tool || r.Input.LastTool != w.lastTool || r.Input.LastMessage != w.lastMessage ||
			r.PreToolOutputTokens != w.out || r.Input.History.Calls != w.calls || r.Segment != i || r.Program != "g1/7" {
			t.Errorf("turn %d: tool %q after %q (%q), %d tokens, %d calls before, segment %d of %q; want %+v",
				i, r.Tool, r.Input.LastTool, r.Input.LastMessage, r.PreToolOutputTokens, r.Input.History.Calls, r.Segment, r.Program, w)
		}
		if r.Input.SystemPrompt != "you are an agent" || len(r.Input.ToolNames) != 2 {
			t.Errorf("turn %d: system %q, tools %v; want the kept path's", i, r.Input.SystemPrompt, r.Input.ToolNames)
		}
	}
	// The second branch's prompt holds its own path, not the abandoned turn.
	if recs[2].Input.PromptTokens != recs[1].Input.PromptTokens {
		t.Errorf("the two turns after search's result see prompts of %d and %d tokens; want the same branch prefix",
			recs[1].Input.PromptTokens, recs[2].Input.PromptTokens)
	}

	if _, err := ConvertToolBenchTree([]byte(`{"answer_generation": {"train_messages": []}, "tree": {"tree": {}}}`), "x", "s", words); !errors.Is(err, ErrNoTrajectory) {
		t.Fatalf("a run with no messages: %v, want ErrNoTrajectory", err)
	}
	if _, err := ConvertToolBenchTree([]byte(`{"answer_generation": `), "x", "s", words); err == nil {
		t.Fatal("truncated JSON converted")
	}
}
