package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pitstop-llm/pitstop/predictor"
)

// eval --online replays the records through the online learner and prints
// the learner's line beside the same model not learning, and the curves.
func TestPredictorEvalOnline(t *testing.T) {
	dir := t.TempDir()
	model := filepath.Join("..", "..", "predictor", "data", "default.onnx")
	traces := filepath.Join("..", "..", "predictor", "data", "traces", "toolbench-gpt35.jsonl.gz")
	csv, png := filepath.Join(dir, "curve.csv"), filepath.Join(dir, "curve.png")
	code, out, errOut := pitstop(t, "predictor", "eval", "--model", model, "--traces", traces, "--per-bin=false",
		"--online", "--curve", csv, "--curve-png", png)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"model, online          n=52", "model, online + mix    n=52", "model, not learning    n=52",
		"model + program blend  n=52", "model + blend + mix    n=52", "model + order mix      n=52", "model + order mix, point not calibrated n=52", "; point not calibrated ", "order mix or mode, point not calibrated n=52", "  mix or mode, point not calibrated n=26", "baseline: history", "baseline: history, training median start", "wrote " + csv,
		"second half (records 27-52, after learning from the first):", "  online + mix         n=26", "  history              n=26",
		"model, online + order mix n=52", "window mode by class   n=52", "  window mode by class n=26", "  rank correlation (Spearman), second half: online ", "rank correlation (Spearman), first half (records 1-26, while learning): online ",
		"experts, first segments: model MAE ", "rank correlation (Spearman), all records, not learning: model ", "order mix or mode, by order n=52", "  mix or mode, by order n=26", "experts, later segments: model MAE ", "of the mean); history MAE "} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	data, err := os.ReadFile(csv)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if lines[0] != "segments,mae_online,mae_not_learning,mae_history,mae_online_blend" || len(lines) != 3 || !strings.HasPrefix(lines[2], "52,") {
		t.Fatalf("curve CSV:\n%s", data)
	}
	if st, err := os.Stat(png); err != nil || st.Size() == 0 {
		t.Fatalf("curve PNG: %v", err)
	}
	if code, _, errOut := pitstop(t, "predictor", "eval", "--model", model, "--traces", traces, "--curve", csv); code == 0 || !strings.Contains(errOut, "--curve and --curve-png need --online") {
		t.Fatalf("--curve without --online: exit %d, %s", code, errOut)
	}
}

// convert-chat --search-tree needs --toolbench: a usage error (exit 2).
func TestConvertChatSearchTreeNeedsToolBench(t *testing.T) {
	code, _, errOut := pitstop(t, "predictor", "convert-chat", "--tau", "x.json", "--search-tree", "--source", "s", "--out", filepath.Join(t.TempDir(), "o.jsonl"))
	if code != 2 || !strings.Contains(errOut, "--search-tree needs --toolbench") {
		t.Fatalf("--search-tree with --tau: exit %d, %s", code, errOut)
	}
}

// convert-chat --unanswered needs --search-tree; with it, only the answer
// files whose search never answered are converted (their prompt rebuilt
// from the query), the answered ones skipped.
func TestConvertChatUnansweredTakesOnlyTheSearchesThatNeverAnswered(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "o.jsonl")
	if code, _, errOut := pitstop(t, "predictor", "convert-chat", "--toolbench", dir, "--unanswered", "--source", "s", "--out", out); code != 2 || !strings.Contains(errOut, "--unanswered needs --search-tree") {
		t.Fatalf("--unanswered without --search-tree: exit %d, %s", code, errOut)
	}
	tree := `"tree": {"tree": {"node_type": "Action Input", "description": "", "children": [
		{"node_type": "Action", "description": "news_for_currents", "children": [
		 {"node_type": "Action Input", "description": "fr", "observation": "none", "children": []}]}]}}`
	answered := `{"answer_generation": {"function": [{"name": "news_for_currents"}], "train_messages": [[
		{"role": "system", "content": "sys"}, {"role": "user", "content": "q"},
		{"role": "assistant", "content": null, "function_call": {"name": "news_for_currents", "arguments": "fr"}}]]}, ` + tree + `}`
	unanswered := `{"answer_generation": {"function": [{"name": "news_for_currents"}], "query": "news in French"}, ` + tree + `}`
	for name, body := range map[string]string{"a.json": answered, "b.json": unanswered} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	code, stdout, errOut := pitstop(t, "predictor", "convert-chat", "--toolbench", dir, "--search-tree", "--unanswered", "--source", "s", "--encoding", "cl100k_base", "--out", out)
	if code != 0 || !strings.Contains(stdout, "wrote 1 trace records of 1 trajectories") || !strings.Contains(errOut, "skipping") {
		t.Fatalf("exit %d: %s%s", code, stdout, errOut)
	}
	recs, err := predictor.ReadTraces(out)
	if err != nil || len(recs) != 1 || recs[0].Program != "b" || !strings.Contains(recs[0].Input.SystemPrompt, "1.currents: ") {
		t.Fatalf("records %+v (%v): want b's one turn with the rebuilt prompt", recs, err)
	}
}

// convert-swe-agent turns a trajectory's timed steps into shell calls, and
// durations --eval replays them against the per-tool running median. The
// trajectory twice: each class's second call is predicted by its median
// exactly (3 of the 5 scored calls).
func TestPredictorDurationsEval(t *testing.T) {
	dir := t.TempDir()
	calls := filepath.Join(dir, "calls.jsonl")
	traj := filepath.Join("..", "..", "predictor", "testdata", "swe-agent-mini.traj")
	code, out, errOut := pitstop(t, "predictor", "convert-swe-agent", "--source", "swe-agent/test", "--out", calls, traj, traj)
	if code != 0 || !strings.Contains(out, "6 records, 6 timed tool calls, from 2 trajectories") {
		t.Fatalf("convert: exit %d: %s%s", code, out, errOut)
	}
	code, out, errOut = pitstop(t, "predictor", "durations", "--traces", calls, "--eval")
	if code != 0 {
		t.Fatalf("eval: exit %d: %s", code, errOut)
	}
	for _, want := range []string{"calls 6 (tools 1, argument classes 3), scored 5", "per-tool running median                    5",
		"per-argument-class estimator (serve)       5", "per-class running median, always           5      60.0%"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	shipped := filepath.Join("..", "..", "predictor", "data", "traces", "swe-agent-demos.jsonl.gz")
	if code, out, errOut := pitstop(t, "predictor", "durations", "--traces", shipped, "--eval"); code != 0 || !strings.Contains(out, "calls 40 (tools 1") {
		t.Fatalf("shipped trace: exit %d: %s%s", code, out, errOut)
	}
	mini := filepath.Join("..", "..", "predictor", "testdata", "mini-swe-agent-mini.traj.json")
	if code, out, errOut := pitstop(t, "predictor", "convert-swe-agent", "--source", "mini/test", "--out", calls, mini, mini); code != 0 || !strings.Contains(out, "8 records, 6 timed tool calls, from 2 trajectories") {
		t.Fatalf("convert mini-swe-agent: exit %d: %s%s", code, out, errOut)
	}
	if code, _, errOut := pitstop(t, "predictor", "durations", "--traces", calls, "--eval", "--out", filepath.Join(dir, "d.json")); code != 2 || !strings.Contains(errOut, "does not go with --eval") {
		t.Fatalf("--eval --out: exit %d, %s", code, errOut)
	}
	if code, _, errOut := pitstop(t, "predictor", "convert-swe-agent", "--out", calls, traj); code != 2 || !strings.Contains(errOut, "--out and --source are required") {
		t.Fatalf("no --source: exit %d, %s", code, errOut)
	}
}
