package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestMain lets tests run the real binary: with PITSTOP_TEST_MAIN set, the
// test binary behaves as pitstop itself.
func TestMain(m *testing.M) {
	if os.Getenv("PITSTOP_TEST_MAIN") == "1" {
		os.Exit(run(os.Args[1:]))
	}
	os.Exit(m.Run())
}

// pitstop runs the CLI in a child process and returns its exit status,
// stdout and stderr.
func pitstop(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "PITSTOP_TEST_MAIN=1")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return code, out.String(), errb.String()
}

func TestBenchBadInput(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte(`{"r1": [{"prompt_tokens": "x"}]`), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "r.json")
	cases := []struct {
		name string
		args []string
		want []string // substrings of the one-line error
	}{
		{"unknown workload", []string{"--workload", "nope"}, []string{`unknown workload "nope"`, "infercept-multi"}},
		{"unknown policy", []string{"--policies", "fcfs,nope"}, []string{`unknown policy "nope"`, "infercept"}},
		{"unknown profile", []string{"--profile", "tpu"}, []string{`unknown profile "tpu"`, "a100-40g-gptj-6b"}},
		{"negative rate", []string{"--rates", "1,-3"}, []string{"invalid rate -3"}},
		{"rate not a number", []string{"--rates", "abc"}, []string{"abc"}},
		{"malformed trace", []string{"--trace", bad}, []string{"bad.json"}},
		{"missing trace", []string{"--trace", filepath.Join(dir, "none.json")}, []string{"none.json"}},
		{"unknown executor", []string{"--executor", "tpu"}, []string{`unknown executor "tpu"`}},
		{"zero duration", []string{"--duration", "0"}, []string{"invalid duration"}},
		{"unknown predictor", []string{"--predictor", "crystal-ball"}, []string{`unknown predictor "crystal-ball"`, "onnx"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			args := append([]string{"bench", "--duration", "5", "--json", out}, c.args...)
			code, stdout, stderr := pitstop(t, args...)
			if code != 2 {
				t.Fatalf("exit status %d, want 2 (stderr %q)", code, stderr)
			}
			if n := strings.Count(strings.TrimSpace(stderr), "\n"); n != 0 {
				t.Fatalf("error is %d lines, want one: %q", n+1, stderr)
			}
			for _, w := range c.want {
				if !strings.Contains(stderr, w) {
					t.Fatalf("error %q does not mention %q", stderr, w)
				}
			}
			if stdout != "" {
				t.Fatalf("bad input printed output: %q", stdout)
			}
			if _, err := os.Stat(out); !os.IsNotExist(err) {
				t.Fatalf("bad input left an output file (stat err %v)", err)
			}
		})
	}
}

func TestBenchWritesReports(t *testing.T) {
	dir := t.TempDir()
	js, csv := filepath.Join(dir, "r.json"), filepath.Join(dir, "r.csv")
	code, stdout, stderr := pitstop(t, "bench", "--workload", "infercept-single", "--policies", "fcfs,infercept",
		"--rates", "1,2", "--duration", "30", "--json", js, "--csv", csv, "--out", filepath.Join(dir, "plots"))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, "infercept") {
		t.Fatalf("no table on stdout: %q", stdout)
	}
	var rep struct {
		Workload string
		Runs     []struct {
			Policy       string
			Rate         float64
			Requests     int
			Completed    int
			LeakedBlocks int `json:"leaked_blocks"`
		}
	}
	data, err := os.ReadFile(js)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Workload != "infercept-single" || len(rep.Runs) != 4 {
		t.Fatalf("report has workload %q and %d runs, want infercept-single and 4", rep.Workload, len(rep.Runs))
	}
	for _, r := range rep.Runs {
		if r.Requests == 0 || r.Completed != r.Requests || r.LeakedBlocks != 0 {
			t.Fatalf("run %+v: want every request completed and no leak", r)
		}
	}
	pngs, _ := filepath.Glob(filepath.Join(dir, "plots", "*.png"))
	if len(pngs) == 0 {
		t.Fatal("no plots written")
	}
	if _, err := os.Stat(csv); err != nil {
		t.Fatal(err)
	}
}
