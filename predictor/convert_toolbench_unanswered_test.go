package predictor

import (
	"errors"
	"strings"
	"testing"
)

// A search that never answered: no train_messages, the query and the
// functions only; it calls a tool, gives up, and calls the other.
const toolBenchUnanswered = `{
 "answer_generation": {
  "function": [{"name": "news_for_currents", "description": "d", "parameters": {}}, {"name": "search_for_currents", "description": "d", "parameters": {}},
   {"name": "people_for_tvmaze", "description": "d", "parameters": {}}, {"name": "Finish", "description": "d", "parameters": {}}],
  "query": "news in French please",
  "finish_type": "give_answer"
 },
 "tree": {"tree": {"node_type": "Action Input", "description": "", "children": [
  {"node_type": "Thought", "description": "get news", "children": [
   {"node_type": "Action", "description": "news_for_currents", "children": [
    {"node_type": "Action Input", "description": "fr", "observation": "error", "children": [
     {"node_type": "Thought", "description": "give up", "children": [
      {"node_type": "Action", "description": "Finish", "children": [
       {"node_type": "Action Input", "description": "restart", "observation": "", "children": []}]}]}]}]}]},
  {"node_type": "Thought", "description": "try search instead", "children": [
   {"node_type": "Action", "description": "search_for_currents", "children": [
    {"node_type": "Action Input", "description": "fr", "observation": "none", "children": []}]}]}]}}
}`

func TestConvertToolBenchTreeUnansweredRebuildsThePrompt(t *testing.T) {
	words := func(s string) int { return len(strings.Fields(s)) }
	recs, err := ConvertToolBenchTreeUnanswered([]byte(toolBenchUnanswered), "g1/69", "toolbench/unanswered", words)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 3 {
		t.Fatalf("%d records, want the tree's 3 turns", len(recs))
	}
	wantSystem := toolBenchSystemPrompt + "1.currents: \n2.tvmaze: \n"
	for i, r := range recs {
		if r.Input.SystemPrompt != wantSystem || len(r.Input.ToolNames) != 4 || r.Segment != i || r.Program != "g1/69" {
			t.Errorf("turn %d: system %q, tools %v, segment %d of %q; want the rebuilt prompt, 4 functions", i, r.Input.SystemPrompt, r.Input.ToolNames, r.Segment, r.Program)
		}
	}
	// The first and third turns start from the query alone (the third is
	// another branch from the root); the second reads the tool's result.
	if recs[0].Input.LastMessage != "\nnews in French please\nBegin!\n" || recs[2].Input.LastMessage != recs[0].Input.LastMessage || recs[1].Input.LastMessage != "error" {
		t.Errorf("last messages %q, %q, %q; want the framed query, the result, the query", recs[0].Input.LastMessage, recs[1].Input.LastMessage, recs[2].Input.LastMessage)
	}
	if recs[0].PreToolOutputTokens != 2+1+1 || recs[2].Tool != "search_for_currents" {
		t.Errorf("turn 0: %d tokens, turn 2 calls %q; want 4 (thought, call, arguments) and search_for_currents", recs[0].PreToolOutputTokens, recs[2].Tool)
	}

	// A file that answered is ConvertToolBenchTree's; one with no query is nothing's.
	if _, err := ConvertToolBenchTreeUnanswered([]byte(toolBenchTreeAnswer), "x", "s", words); !errors.Is(err, ErrNoTrajectory) {
		t.Errorf("an answered file: %v, want ErrNoTrajectory", err)
	}
	if _, err := ConvertToolBenchTreeUnanswered([]byte(`{"answer_generation": {}, "tree": {"tree": {}}}`), "x", "s", words); !errors.Is(err, ErrNoTrajectory) {
		t.Errorf("no query: %v, want ErrNoTrajectory", err)
	}
	// ConvertToolBenchTree still skips it.
	if _, err := ConvertToolBenchTree([]byte(toolBenchUnanswered), "x", "s", words); !errors.Is(err, ErrNoTrajectory) {
		t.Errorf("ConvertToolBenchTree on an unanswered file: %v, want ErrNoTrajectory", err)
	}
}
