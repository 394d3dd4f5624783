package report

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

func sampleReport() *Report {
	rep := &Report{Workload: "infercept-multi", Executor: "sim", Profile: "gptj-6b-a100"}
	for _, pol := range []string{"fcfs", "lamps"} {
		for i, rate := range []float64{1, 2, 4} {
			f := float64(i + 1)
			if pol == "lamps" {
				f *= 0.7
			}
			rep.Runs = append(rep.Runs, Run{
				Policy: pol, Rate: rate, Requests: 100 * (i + 1), Completed: 90 * (i + 1),
				E2EMeanS: 2 * f, E2EP50S: 1.8 * f, E2EP99S: 6 * f, TTFTMeanS: 0.1 * f, TTFTP99S: 0.5 * f,
				ThroughputRPS: rate * 0.9, ProgramTokenLatencyS: 0.02 * f,
				SwapOutBytes: 3 << 30, SwapInBytes: 2 << 30, RecomputeTokens: 1234, KVUtilMean: 0.5,
				TPOTMeanS: 0.025, Handling: map[string]int{"swap": 3, "discard": 1},
			})
		}
	}
	return rep
}

func TestJSONContractKeys(t *testing.T) {
	path := filepath.Join(t.TempDir(), "out.json")
	rep := sampleReport()
	if err := WriteJSON(path, rep); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}

	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		t.Fatal(err)
	}
	for _, k := range ContractReportFields {
		if _, ok := raw[k]; !ok {
			t.Errorf("top-level key %q missing", k)
		}
	}
	var runs []map[string]any
	if err := json.Unmarshal(raw["runs"], &runs); err != nil {
		t.Fatal(err)
	}
	if len(runs) != len(rep.Runs) {
		t.Fatalf("%d runs, want %d", len(runs), len(rep.Runs))
	}
	// The §8 contract, spelled out here on purpose (not taken from the code).
	contract := []string{"policy", "rate", "requests", "completed", "e2e_mean_s", "e2e_p50_s",
		"e2e_p99_s", "ttft_mean_s", "ttft_p99_s", "throughput_rps", "program_token_latency_s",
		"swap_out_bytes", "swap_in_bytes", "recompute_tokens", "kv_util_mean", "leaked_blocks"}
	if !slices.Equal(contract, ContractRunFields) {
		t.Errorf("ContractRunFields = %v, want %v", ContractRunFields, contract)
	}
	extras := []string{"tpot_mean_s", "tpot_p99_s", "programs", "programs_completed",
		"program_token_latency_p99_s", "preemptions", "handling", "virtual_s", "wall_s",
		"iterations", "ttft_p50_s", "seed", "duration_s"}
	for _, k := range append(contract, extras...) {
		if _, ok := runs[0][k]; !ok {
			t.Errorf("run key %q missing", k)
		}
	}
	// Every key is either contract or a known extra: the key set is exact.
	names, _ := runFields()
	// A one-engine run omits the cluster fields (bench --replicas), and a
	// run without tool calls the cost of handling decisions, and one that
	// recomputed nothing the split of its recomputation, and one whose
	// collector saw no engine iteration the host tier's figures, and where the
	// calls have no position the per-position breakdown, and where they
	// have no class the per-class one, and an oracle run
	// the predictor section, and one that prefilled nothing its prefill and
	// prompt counts.
	names = slices.DeleteFunc(names, func(n string) bool {
		return slices.Contains([]string{"replicas", "balancer", "prefix_hit_rate", "replica_util", "decision_cost", "recompute_by", "host_tier", "by_position", "by_class", "predictor", "prefill_tokens", "prompt_tokens"}, n)
	})
	var keys []string
	for k := range runs[0] {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	slices.Sort(names)
	if !slices.Equal(keys, names) {
		t.Errorf("run keys %v, want %v", keys, names)
	}

	var back Report
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(&back, rep) {
		t.Errorf("round trip differs:\n%+v\n%+v", back, *rep)
	}
}

func TestJSONEmptyReport(t *testing.T) {
	path := filepath.Join(t.TempDir(), "empty.json")
	if err := WriteJSON(path, &Report{Workload: "w"}); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	if !bytes.Contains(data, []byte(`"runs": []`)) {
		t.Errorf("empty runs should be [], got %s", data)
	}
}

func TestWriteJSONNonFinite(t *testing.T) {
	path := filepath.Join(t.TempDir(), "nan.json")
	rep := &Report{Runs: []Run{{Policy: "x", E2EMeanS: math.NaN(), TTFTP99S: math.Inf(1), WallS: math.Inf(-1)}}}
	if err := WriteJSON(path, rep); err != nil {
		t.Fatal(err)
	}
	var back Report
	data, _ := os.ReadFile(path)
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	if r := back.Runs[0]; r.E2EMeanS != 0 || r.TTFTP99S != 0 || r.WallS != 0 {
		t.Errorf("non-finite not zeroed: %+v", r)
	}
	if !math.IsNaN(rep.Runs[0].E2EMeanS) {
		t.Error("WriteJSON changed its input")
	}
}

func TestWriteErrorsLeaveNoFile(t *testing.T) {
	base := t.TempDir()
	missing := filepath.Join(base, "no", "such", "dir")
	for name, write := range map[string]func(string, *Report) error{"json": WriteJSON, "csv": WriteCSV} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(missing, "out."+name)
			err := write(path, sampleReport())
			if err == nil {
				t.Fatal("no error writing into a missing dir")
			}
			if !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("error %v does not wrap fs.ErrNotExist", err)
			}
			if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("file left behind: %v", err)
			}
		})
	}
	if err := WriteJSON(filepath.Join(base, "nil.json"), nil); err == nil {
		t.Error("nil report: no error")
	}
	entries, _ := os.ReadDir(base)
	if len(entries) != 0 {
		t.Errorf("files left in %s: %v", base, entries)
	}
}

func TestWriteReplacesAtomically(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out.json")
	if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := WriteJSON(path, sampleReport()); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("want only out.json, got %v", entries)
	}
	data, _ := os.ReadFile(path)
	if !json.Valid(data) {
		t.Errorf("not JSON: %s", data)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o644 {
		t.Errorf("mode %v, want 0644", fi.Mode().Perm())
	}
}

func TestCSV(t *testing.T) {
	path := filepath.Join(t.TempDir(), "out.csv")
	rep := sampleReport()
	if err := WriteCSV(path, rep); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1+len(rep.Runs) {
		t.Fatalf("%d rows, want %d", len(rows), 1+len(rep.Runs))
	}
	header := rows[0]
	if !slices.Equal(header, CSVHeader()) {
		t.Errorf("header %v != CSVHeader %v", header, CSVHeader())
	}
	// Header: workload, executor, profile, then the contract names in order, then extras.
	want := append([]string{"workload", "executor", "profile"}, ContractRunFields...)
	if !slices.Equal(header[:len(want)], want) {
		t.Errorf("header starts %v, want %v", header[:len(want)], want)
	}
	col := func(name string) int { return slices.Index(header, name) }
	row := rows[1]
	checks := map[string]string{
		"workload": "infercept-multi", "policy": "fcfs", "rate": "1", "requests": "100",
		"e2e_mean_s": "2", "swap_out_bytes": "3221225472", "handling": "discard=1;swap=3",
	}
	for k, v := range checks {
		if i := col(k); i < 0 || row[i] != v {
			t.Errorf("column %s = %q, want %q", k, row[i], v)
		}
	}
}

func TestWriteTable(t *testing.T) {
	var buf bytes.Buffer
	WriteTable(&buf, sampleReport())
	out := buf.String()
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	if len(lines) != 2+6 {
		t.Fatalf("%d lines, want 8:\n%s", len(lines), out)
	}
	if !strings.Contains(lines[0], "workload=infercept-multi") {
		t.Errorf("title line %q", lines[0])
	}
	for _, h := range []string{"policy", "rate", "done/req", "e2e_mean", "e2e_p50", "e2e_p95", "e2e_p99", "ttft_mean",
		"ttft_p99", "tpot_ms", "prog_tok_lat", "thr_rps", "kv_util", "swap_GB", "recompute", "leaked"} {
		if !strings.Contains(lines[1], h) {
			t.Errorf("header lacks %s: %q", h, lines[1])
		}
	}
	// Right-aligned columns: every row has the header's width.
	for _, l := range lines[2:] {
		if len(l) != len(lines[1]) {
			t.Errorf("row width %d != header width %d:\n%s\n%s", len(l), len(lines[1]), lines[1], l)
		}
	}
	if !strings.Contains(lines[2], "90/100") || !strings.Contains(lines[2], "3.22/2.15") || !strings.Contains(lines[2], "50.0%") {
		t.Errorf("row %q lacks completed/requests, swap GB or kv util", lines[2])
	}
}
