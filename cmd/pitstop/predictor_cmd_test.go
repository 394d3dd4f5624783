package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
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
	for _, want := range []string{"model, online          n=52", "model, online + blend  n=52", "model, not learning    n=52",
		"model + program blend  n=52", "baseline: history", "baseline: history, training median start", "wrote " + csv} {
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
