package predictor

import (
	"errors"
	"strings"
	"testing"
)

func TestConvertTauBench(t *testing.T) {
	data := []byte(`[{"task_id": 3, "trial": 0, "reward": 1, "info": {}, "traj": [
		{"role": "system", "content": "Airline policy."},
		{"role": "user", "content": "Book me a flight"},
		{"role": "assistant", "content": null, "tool_calls": [{"function": {"name": "search", "arguments": "{\"from\":\"JFK\"}"}, "id": "c1", "type": "function"}]},
		{"role": "tool", "tool_call_id": "c1", "name": "search", "content": "[flight 1]"},
		{"role": "assistant", "content": "I found flight 1."},
		{"role": "user", "content": "Thanks"},
		{"role": "assistant", "content": "Bye now"}]}]`)
	trajs, err := ParseTauBench(data)
	if err != nil {
		t.Fatal(err)
	}
	words := func(s string) int { return len(strings.Fields(s)) } // a stand-in tokenizer
	recs, err := ConvertChat(trajs, "tau-test", words)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 3 {
		t.Fatalf("%d records, want one per assistant message (3)", len(recs))
	}
	r0, r1, r2 := recs[0], recs[1], recs[2]
	if r0.Program != "task3-trial0" || r0.Tool != "search" || r0.PreToolOutputTokens != 2 || r0.Input.LastTool != "" ||
		r0.Input.LastMessage != "Book me a flight" || r0.Input.SystemPrompt != "Airline policy." {
		t.Fatalf("first record %+v", r0)
	}
	if r1.Tool != "" || r1.Input.LastTool != "search" || r1.Input.LastMessage != "[flight 1]" || r1.PreToolOutputTokens != 4 ||
		r1.Input.History.Calls != 1 || r1.Input.History.MeanToolCallTokens != 2 {
		t.Fatalf("second record %+v", r1)
	}
	if r2.Input.LastTool != "" || r2.Input.History.Replies != 1 || r2.Segment != 2 || !(r2.Input.PromptTokens > r1.Input.PromptTokens) {
		t.Fatalf("third record %+v", r2)
	}
	// No tool list in tau-bench: the tools the set's runs call are offered.
	if len(r0.Input.ToolNames) != 1 || r0.Input.ToolNames[0] != "search" {
		t.Fatalf("offered %q", r0.Input.ToolNames)
	}
	if _, err := ConvertChat([]ChatTrajectory{{Messages: []ChatMessage{{Role: "robot"}}}}, "x", words); err == nil {
		t.Fatal("an unknown role converted")
	}
}

func TestParseToolBenchAnswer(t *testing.T) {
	data := []byte(`{"answer_generation": {"function": [{"name": "f", "description": "d", "parameters": {"type": "object"}}],
		"train_messages": [[{"role": "user", "content": "q"}],
		[{"role": "user", "content": "q"}, {"role": "assistant", "content": "think", "function_call": {"name": "f", "arguments": "{}"}},
		 {"role": "function", "name": "f", "content": "ok"}, {"role": "assistant", "content": "done"}]]}}`)
	tr, err := ParseToolBenchAnswer(data, "G1/1")
	if err != nil {
		t.Fatal(err)
	}
	recs, err := ConvertChat([]ChatTrajectory{tr}, "tb", func(s string) int { return len(s) })
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 2 || recs[0].Tool != "f" || recs[0].PreToolOutputTokens != len("think")+len("f")+len("{}") ||
		recs[1].Input.LastTool != "f" || recs[0].Input.ToolSchemaBytes != len("f")+len("d")+len(`{"type": "object"}`) {
		t.Fatalf("records %+v", recs)
	}
	if _, err := ParseToolBenchAnswer([]byte(`{"answer_generation": {"train_messages": []}}`), "empty"); !errors.Is(err, ErrNoTrajectory) {
		t.Fatalf("empty answer: %v, want ErrNoTrajectory", err)
	}
}
