package report

import (
	"bytes"
	"image/png"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestPlotPNGs(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "plots") // created by Plot
	paths, err := Plot(dir, sampleReport())
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, m := range []string{"e2e_mean", "e2e_p95", "e2e_p99", "ttft_mean", "program_token_latency"} {
		want = append(want, filepath.Join(dir, "infercept-multi-"+m+".png"))
	}
	if !slices.Equal(paths, want) {
		t.Errorf("paths %v, want %v", paths, want)
	}
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(bytes.NewReader(data))
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		if b := img.Bounds(); b.Dx() < 200 || b.Dy() < 100 {
			t.Errorf("%s: tiny image %v", p, b)
		}
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.Contains(e.Name(), ".tmp-") {
			t.Errorf("temp file left: %s", e.Name())
		}
	}
}

func TestPlotDegenerate(t *testing.T) {
	tests := []struct {
		name string
		rep  *Report
	}{
		{"no runs", &Report{Workload: "w"}},
		{"one run of zeros", &Report{Workload: "a/b c", Runs: []Run{{Policy: "x", Rate: 1}}}},
		{"unnamed", &Report{Runs: []Run{{Rate: 2, E2EMeanS: 1}, {Rate: 1, E2EMeanS: 3}}}},
		{"stopped", &Report{Workload: "w", Runs: []Run{{Policy: "a", Rate: 1, E2EMeanS: 1}, {Policy: "a", Rate: 2, E2EMeanS: 9, StoppedAtS: 50},
			{Policy: "b", Rate: 1, StoppedAtS: 40}}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			paths, err := Plot(dir, tc.rep)
			if err != nil {
				t.Fatal(err)
			}
			if len(paths) != 5 {
				t.Fatalf("%d plots, want 5", len(paths))
			}
			for _, p := range paths {
				if filepath.Dir(p) != dir {
					t.Errorf("%s escapes %s", p, dir)
				}
				f, err := os.Open(p)
				if err != nil {
					t.Fatal(err)
				}
				_, err = png.Decode(f)
				f.Close()
				if err != nil {
					t.Errorf("%s: %v", p, err)
				}
			}
		})
	}
}
