package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// planApp writes an application file of two models, a feeding b, with the
// example lengths; edit changes it before it is written.
func planApp(t *testing.T, edit func(models []map[string]any)) string {
	t.Helper()
	lengths, err := filepath.Abs("../../examples/apps/lengths")
	if err != nil {
		t.Fatal(err)
	}
	model := func(name string) map[string]any {
		return map[string]any{"name": name, "profile": "a100-80g-llama3-8b", "weights_bytes": 16.1e9, "load_s": 13, "tp": []int{1, 2},
			"requests": 200, "prompt_lengths": filepath.Join(lengths, "short-prompt.json"),
			"output_lengths": filepath.Join(lengths, "azure-conv-output.json"), "max_output": 128}
	}
	models := []map[string]any{model("a"), model("b")}
	models[1]["inputs"] = []map[string]any{{"from": "a"}}
	if edit != nil {
		edit(models)
	}
	data, err := json.Marshal(map[string]any{"name": "test", "seed": 1, "models": models})
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "app.json")
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestPlanPrintsStagesAndWritesJSON(t *testing.T) {
	app := planApp(t, nil)
	out := filepath.Join(t.TempDir(), "plan.json")
	profiles := t.TempDir()
	code, stdout, stderr := pitstop(t, "plan", "--app", app, "--gpus", "4", "--json", out, "--write-profiles", profiles)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, w := range []string{"samullm+refine: estimated", "max-heuristic: estimated", "min-heuristic: estimated", "end to end:"} {
		if !strings.Contains(stdout, w) {
			t.Fatalf("output lacks %q:\n%s", w, stdout)
		}
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		GPUs      int `json:"gpus"`
		Schedules []struct {
			Method string  `json:"method"`
			TotalS float64 `json:"total_s"`
			Stages []struct {
				GPUs   int `json:"gpus"`
				Models []struct {
					Model string `json:"model"`
				} `json:"models"`
			} `json:"stages"`
		} `json:"schedules"`
	}
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatal(err)
	}
	derived, err := os.ReadFile(filepath.Join(profiles, "b-tp2.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(derived), "Derived by planner.DeriveTP for tensor parallelism 2") {
		t.Fatalf("b-tp2.json does not say how it was derived:\n%s", derived)
	}
	if got.GPUs != 4 || len(got.Schedules) != 3 {
		t.Fatalf("json: %s", data)
	}
	for _, s := range got.Schedules {
		if s.TotalS <= 0 || len(s.Stages) == 0 {
			t.Fatalf("%s: total %g, %d stages", s.Method, s.TotalS, len(s.Stages))
		}
		for _, st := range s.Stages {
			if st.GPUs > 4 || len(st.Models) == 0 {
				t.Fatalf("%s: stage of %d GPUs with %d models", s.Method, st.GPUs, len(st.Models))
			}
		}
	}
	// --search paper is Algorithm 1 as published; the refined search
	// starts from its stages and never ends later.
	paperOut := filepath.Join(t.TempDir(), "paper.json")
	code, stdout, stderr = pitstop(t, "plan", "--app", app, "--gpus", "4", "--search", "paper", "--json", paperOut)
	if code != 0 || !strings.Contains(stdout, "samullm: estimated") {
		t.Fatalf("--search paper: exit %d: %s%s", code, stdout, stderr)
	}
	refined := got.Schedules[0].TotalS
	data, err = os.ReadFile(paperOut)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatal(err)
	}
	if got.Schedules[0].Method != "samullm" || got.Schedules[0].TotalS < refined {
		t.Fatalf("paper's search %s %.2f s, refined %.2f s", got.Schedules[0].Method, got.Schedules[0].TotalS, refined)
	}
}

func TestPlanBadInput(t *testing.T) {
	cases := []struct {
		name string
		args []string
		want []string
	}{
		{"no app", []string{"--gpus", "2"}, []string{"--app is required"}},
		{"no gpus", []string{"--app", planApp(t, nil)}, []string{"--gpus must be positive"}},
		{"cycle", []string{"--gpus", "2", "--app", planApp(t, func(m []map[string]any) {
			m[0]["inputs"] = []map[string]any{{"from": "b"}}
		})}, []string{"model ", "cycle", "a → b"}},
		{"no profile", []string{"--gpus", "2", "--app", planApp(t, func(m []map[string]any) { delete(m[1], "profile") })}, []string{"model b", "no profile"}},
		{"more GPUs per plan than the budget", []string{"--gpus", "1", "--app", planApp(t, func(m []map[string]any) { m[1]["tp"] = []int{2} })}, []string{"model b", "needs 2 GPUs", "budget is 1"}},
		{"objective", []string{"--gpus", "2", "--objective", "fast", "--app", planApp(t, nil)}, []string{`unknown objective "fast"`}},
		{"balancer", []string{"--gpus", "2", "--balancer", "random", "--app", planApp(t, nil)}, []string{`--balancer: unknown balancer "random"`, "least-tokens"}},
		{"search", []string{"--gpus", "2", "--search", "best", "--app", planApp(t, nil)}, []string{`--search "best": valid are refine, paper`}},
		{"reach", []string{"--gpus", "2", "--refine-reach", "4", "--app", planApp(t, nil)}, []string{"--refine-reach must be 1–3"}},
		{"effort", []string{"--gpus", "2", "--refine-effort", "-1", "--app", planApp(t, nil)}, []string{"--refine-effort not negative"}},
		{"missing file", []string{"--gpus", "2", "--app", "/nonexistent/app.json"}, []string{"/nonexistent/app.json"}},
		{"run without cpu_model", []string{"--gpus", "1", "--run", "--app", planApp(t, nil)}, []string{"model a", "cpu_model"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := pitstop(t, append([]string{"plan"}, tc.args...)...)
			if code != 2 {
				t.Fatalf("exit %d, want 2: %s", code, stderr)
			}
			if strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
				t.Fatalf("error is not one line: %q", stderr)
			}
			for _, w := range tc.want {
				if !strings.Contains(stderr, w) {
					t.Fatalf("error %q does not say %q", stderr, w)
				}
			}
		})
	}
}
