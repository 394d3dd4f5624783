package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pitstop-llm/pitstop/engine/sim"
	"github.com/pitstop-llm/pitstop/models/llama"
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
	noWeights := tinyModelDir(t)
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
		{"unknown engine features", []string{"--engine-features", "vllm"}, []string{`unknown engine features "vllm"`, "same, paper"}},
		{"unknown cache eviction", []string{"--cache-eviction", "lfu"}, []string{`unknown prefix-cache eviction "lfu"`, "lru, second-chance"}},
		{"cache eviction on cpu", []string{"--executor", "cpu", "--cache-eviction", "second-chance"}, []string{"--cache-eviction second-chance", "--executor sim"}},
		{"unknown pitstop handling", []string{"--pitstop-handling", "free"}, []string{`unknown pitstop handling "free"`, "idle-lost"}},
		{"unknown pitstop batch order", []string{"--pitstop-batch", "prefill-first"}, []string{`unknown pitstop batch order "prefill-first"`, "decode-first"}},
		{"unknown pitstop eviction hint", []string{"--pitstop-evict", "belady"}, []string{`unknown pitstop eviction hint "belady"`, "lru, program"}},
		{"unknown pitstop classes", []string{"--pitstop-classes", "tenant"}, []string{`unknown pitstop classes "tenant"`, "class, pooled, class-shared"}},
		{"unknown classes", []string{"--classes", "tenant"}, []string{`unknown --classes "tenant"`, "none, family"}},
		{"unknown program order", []string{"--program-order", "auto-cv"}, []string{`unknown program order "auto-cv"`, "auto (also named gittins-started), gittins-started-call, gittins-started-shown, gittins-started-held, gittins-started-all, call"}},
		{"zero duration", []string{"--duration", "0"}, []string{"invalid duration"}},
		{"stop before the window ends", []string{"--stop-after", "4"}, []string{"invalid --stop-after 4", "at least --duration (5)"}},
		{"unknown predictor", []string{"--predictor", "crystal-ball"}, []string{`unknown predictor "crystal-ball"`, "onnx"}},
		{"noise without the oracle", []string{"--prediction-error", "0.3"}, []string{"--prediction-error 0.3 needs --predictor oracle"}},
		{"zero token scale", []string{"--scale-tokens", "0"}, []string{"invalid --scale-tokens 0"}},
		{"negative time scale", []string{"--scale-time", "-1"}, []string{"invalid --scale-time -1"}},
		{"negative slo", []string{"--slo-ttft", "-1"}, []string{"invalid SLO", "--slo-ttft -1"}},
		{"cpu flag on sim", []string{"--kv-blocks", "8"}, []string{"--kv-blocks", "--executor cpu"}},
		{"fit profile on sim", []string{"--fit-profile", filepath.Join(dir, "p.json")}, []string{"--fit-profile", "--executor cpu"}},
		{"profile on cpu", []string{"--executor", "cpu", "--profile", "a100-40g-gptj-6b"}, []string{"--profile", "--fit-profile"}},
		{"parallel cpu", []string{"--executor", "cpu", "--parallel", "2"}, []string{"--parallel 2", "one at a time"}},
		{"cpu zero kv blocks", []string{"--executor", "cpu", "--kv-blocks", "0"}, []string{"--kv-blocks"}},
		{"cpu unknown clock", []string{"--executor", "cpu", "--clock", "sundial"}, []string{`unknown clock "sundial"`, "measured"}},
		{"cpu unknown model", []string{"--executor", "cpu", "--model", "gpt-5"}, []string{`"gpt-5"`, "llama-5m"}},
		{"cpu model without weights", []string{"--executor", "cpu", "--model", noWeights}, []string{"safetensors"}},
		{"sustained flag without --sustained", []string{"--sustained-seeds", "2"}, []string{"--sustained-seeds", "flag of --sustained"}},
		{"sustained with rates", []string{"--sustained", "--rates", "1"}, []string{"leave out --rates"}},
		{"sustained with stop-after", []string{"--sustained", "--stop-after", "10"}, []string{"leave out --stop-after"}},
		{"sustained zero seeds", []string{"--sustained", "--sustained-seeds", "0"}, []string{"invalid --sustained-seeds 0"}},
		{"sustained warm-up past the window", []string{"--sustained", "--sustained-warmup", "5"}, []string{"invalid --sustained-warmup 5", "--duration 5"}},
		{"sustained zero resolution", []string{"--sustained", "--sustained-resolution", "0"}, []string{"invalid --sustained-resolution 0"}},
		{"sustained max below start", []string{"--sustained", "--sustained-max", "0.5"}, []string{"--sustained-max 0.5"}},
		{"sustained throughput above 1", []string{"--sustained", "--sustained-warmup", "1", "--sustained-min-throughput", "1.2"}, []string{"--sustained-min-throughput 1.2"}},
		{"sustained negative z", []string{"--sustained", "--sustained-warmup", "1", "--sustained-z", "-1"}, []string{"invalid --sustained-z -1"}},
		{"coding flag on another workload", []string{"--coding-tool-calls-mean", "3"}, []string{"--coding-tool-calls-mean", "--workload coding"}},
		{"malformed coding tools", []string{"--workload", "coding", "--coding-tools", "read:1:x:1"}, []string{"invalid --coding-tools"}},
		{"bad fanout option", []string{"--workload", "fanout", "--fanout-parallel-mean", "0"}, []string{"fanout: parallel mean 0"}},
		{"sustained on cpu", []string{"--sustained", "--executor", "cpu"}, []string{"--sustained", "--executor sim"}},
		{"sustained-from without out", []string{"--sustained", "--sustained-from", "s.json"}, []string{"--sustained-from", "--out DIR"}},
		{"cpu fit profile nowhere", []string{"--executor", "cpu", "--fit-profile", filepath.Join(dir, "none", "p.json")}, []string{"none", "does not exist"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			wantBenchBadInput(t, out, append([]string{"bench", "--duration", "5", "--json", out}, c.args...), c.want)
		})
	}
}

// wantBenchBadInput runs pitstop with args, which name out as the report,
// and checks that it refuses them: exit status 2, one line on stderr that
// mentions each of want, nothing on stdout, no report written.
func wantBenchBadInput(t *testing.T, out string, args, want []string) {
	t.Helper()
	code, stdout, stderr := pitstop(t, args...)
	if code != 2 {
		t.Fatalf("exit status %d, want 2 (stderr %q)", code, stderr)
	}
	if n := strings.Count(strings.TrimSpace(stderr), "\n"); n != 0 {
		t.Fatalf("error is %d lines, want one: %q", n+1, stderr)
	}
	for _, w := range want {
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
}

// --sustained searches each policy's highest sustained rate and writes the
// table, the JSON (per policy and per seed) and the plot.
func TestBenchSustained(t *testing.T) {
	dir := t.TempDir()
	js := filepath.Join(dir, "s.json")
	code, stdout, stderr := pitstop(t, "bench", "--sustained", "--workload", "infercept-single", "--policies", "fcfs,pitstop",
		"--duration", "300", "--sustained-warmup", "30", "--sustained-drain", "60", "--sustained-seeds", "2",
		"--sustained-start", "4", "--sustained-resolution", "1", "--parallel", "2", "--json", js, "--out", dir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, "sustained_rate") || !strings.Contains(stdout, "pitstop") || !strings.Contains(stderr, "sustained search fcfs seed 2") {
		t.Fatalf("stdout %q, stderr %q", stdout, stderr)
	}
	b, err := os.ReadFile(js)
	if err != nil {
		t.Fatal(err)
	}
	var rep struct {
		WindowS  float64 `json:"window_s"`
		PoolSeed *int64  `json:"pool_seed"`
		Policies []struct {
			Policy        string   `json:"policy"`
			SustainedRate *float64 `json:"sustained_rate"`
			Seeds         []struct {
				Seed          int64    `json:"seed"`
				SustainedRate *float64 `json:"sustained_rate"`
				Trials        []json.RawMessage
			} `json:"seeds"`
		} `json:"policies"`
	}
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	if rep.WindowS != 300 || len(rep.Policies) != 2 {
		t.Fatalf("report: window %g, %d policies", rep.WindowS, len(rep.Policies))
	}
	if rep.PoolSeed == nil || *rep.PoolSeed != 1 {
		t.Fatalf("report: pool seed %v, want bench's --seed 1", rep.PoolSeed)
	}
	for _, p := range rep.Policies {
		if p.SustainedRate == nil || len(p.Seeds) != 2 || p.Seeds[0].Seed != 1 || p.Seeds[1].Seed != 2 {
			t.Fatalf("%s: %+v", p.Policy, p)
		}
		for _, sd := range p.Seeds {
			if sd.SustainedRate == nil || len(sd.Trials) < 2 {
				t.Fatalf("%s seed %d: rate %v after %d trials", p.Policy, sd.Seed, sd.SustainedRate, len(sd.Trials))
			}
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "infercept-single-sustained_rate.png")); err != nil {
		t.Fatal(err)
	}
	// The saved report's plots redrawn, with latency against rate per policy.
	again := filepath.Join(dir, "again")
	code, stdout, stderr = pitstop(t, "bench", "--sustained", "--sustained-from", js, "--out", again)
	if code != 0 {
		t.Fatalf("--sustained-from: exit %d: %s", code, stderr)
	}
	for _, f := range []string{"infercept-single-sustained_rate.png", "infercept-single-sustained-e2e_mean.png", "infercept-single-sustained-e2e_p99.png"} {
		if _, err := os.Stat(filepath.Join(again, f)); err != nil {
			t.Fatalf("--sustained-from (stdout %q): %v", stdout, err)
		}
	}
	if code, _, stderr = pitstop(t, "bench", "--sustained", "--sustained-from", filepath.Join(dir, "none.json"), "--out", again); code == 0 || !strings.Contains(stderr, "none.json") {
		t.Fatalf("--sustained-from a missing file: exit %d, stderr %q", code, stderr)
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
	readJSON(t, js, &rep)
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

// --engine-features reaches the engine: lamps runs with the prefix cache by
// default (the report says "same") and without it under "paper", where a
// program's next call recomputes the context its last call left behind.
func TestBenchEngineFeatures(t *testing.T) {
	dir := t.TempDir()
	recomputed := map[string]int64{}
	for _, mode := range []string{"", "paper"} {
		js := filepath.Join(dir, "r"+mode+".json")
		args := []string{"bench", "--workload", "infercept-multi", "--policies", "lamps", "--rates", "2", "--duration", "60", "--json", js}
		if mode != "" {
			args = append(args, "--engine-features", mode)
		}
		code, stdout, stderr := pitstop(t, args...)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		var rep struct {
			EngineFeatures string `json:"engine_features"`
			Runs           []struct {
				Recompute int64 `json:"recompute_tokens"`
			}
		}
		readJSON(t, js, &rep)
		want := mode
		if want == "" {
			want = "same"
		}
		if rep.EngineFeatures != want || !strings.Contains(stdout, "engine features: "+want) {
			t.Fatalf("report says engine features %q, want %q (stdout %q)", rep.EngineFeatures, want, stdout)
		}
		recomputed[want] = rep.Runs[0].Recompute
	}
	if recomputed["paper"] <= recomputed["same"] {
		t.Fatalf("lamps recomputed %d tokens without the prefix cache and %d with it: the cache saved nothing", recomputed["paper"], recomputed["same"])
	}
}

// --cache-eviction reaches the engine: on mixed at a load where the prefix
// cache evicts, second-chance keeps reused contexts longer, so vllm-opt
// prefills fewer tokens than with lru, and the report names the order.
func TestBenchCacheEviction(t *testing.T) {
	dir := t.TempDir()
	prefilled := map[string]int64{}
	for _, ev := range []string{"lru", "second-chance"} {
		js := filepath.Join(dir, ev+".json")
		code, _, stderr := pitstop(t, "bench", "--workload", "mixed", "--profile", "a100-40g-gptj-6b", "--policies", "vllm-opt",
			"--rates", "1", "--duration", "60", "--cache-eviction", ev, "--json", js)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		var rep struct {
			CacheEviction string `json:"cache_eviction"`
			Runs          []struct {
				Prefill int64 `json:"prefill_tokens"`
			}
		}
		readJSON(t, js, &rep)
		want := ev
		if ev == "lru" {
			want = "" // the default leaves the report as it was
		}
		if rep.CacheEviction != want {
			t.Fatalf("report says cache eviction %q, want %q", rep.CacheEviction, want)
		}
		prefilled[ev] = rep.Runs[0].Prefill
	}
	if prefilled["second-chance"] >= prefilled["lru"] {
		t.Fatalf("prefilled %d tokens with second-chance and %d with lru: the reused contexts were not kept longer", prefilled["second-chance"], prefilled["lru"])
	}
}

// TestBenchSLOFlags: SLO attainment is judged against --slo-ttft and
// --slo-tpot, each defaulting to the sola policy's SLO.
func TestBenchSLOFlags(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		args       []string
		ttft, tpot float64
	}{
		{nil, 0.4, 0.15},
		{[]string{"--sola-ttft", "0.9"}, 0.9, 0.15},
		{[]string{"--sola-ttft", "0.9", "--slo-ttft", "2", "--slo-tpot", "0.2"}, 2, 0.2},
	} {
		js := filepath.Join(dir, "r.json")
		args := append([]string{"bench", "--workload", "azure-conv", "--policies", "fcfs,sola", "--rates", "1",
			"--duration", "20", "--profile", "a100-80g-llama3-8b", "--json", js}, c.args...)
		code, stdout, stderr := pitstop(t, args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", c.args, code, stderr)
		}
		if !strings.Contains(stdout, "slo_att") || !strings.Contains(stdout, fmt.Sprintf("T_TTFT=%g s, T_TPOT=%g s", c.ttft, c.tpot)) {
			t.Errorf("%v: table lacks the SLOs or slo_att:\n%s", c.args, stdout)
		}
		var rep struct {
			Runs []struct {
				Requests   int
				TTFT       float64 `json:"slo_ttft_s"`
				TPOT       float64 `json:"slo_tpot_s"`
				Attainment float64 `json:"slo_attainment"`
			}
		}
		readJSON(t, js, &rep)
		for _, r := range rep.Runs {
			if r.TTFT != c.ttft || r.TPOT != c.tpot || r.Requests == 0 || !(r.Attainment > 0) {
				t.Errorf("%v: run %+v, want SLOs %g/%g and some attainment", c.args, r, c.ttft, c.tpot)
			}
		}
	}
}

// tinyModelDir writes the config.json of a tiny Llama (no weights: load it
// with --load-format dummy) and returns its directory.
func tinyModelDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	c, _ := llama.Builtin("llama-5m")
	c.HiddenSize, c.IntermediateSize, c.NumLayers, c.NumHeads, c.NumKVHeads, c.HeadDim, c.VocabSize = 32, 64, 2, 4, 2, 8, 256
	if err := c.Save(filepath.Join(dir, "config.json")); err != nil {
		t.Fatal(err)
	}
	return dir
}

// benchReport is the part of the JSON report the tests read.
type benchReport struct {
	Workload, Executor, Profile string
	Runs                        []struct {
		Policy       string
		Rate         float64
		Requests     int
		Completed    int
		E2EMeanS     float64 `json:"e2e_mean_s"`
		LeakedBlocks int     `json:"leaked_blocks"`
	}
}

func readReport(t *testing.T, path string) benchReport {
	t.Helper()
	var rep benchReport
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &rep); err != nil {
		t.Fatal(err)
	}
	return rep
}

// TestBenchCPU runs bench on the CPU executor end to end with a tiny
// dummy-weights model and a scaled-down workload, writes the fitted profile,
// and replays the same workload on the simulator with that profile.
func TestBenchCPU(t *testing.T) {
	dir := t.TempDir()
	model := tinyModelDir(t)
	prof, js, simJS := filepath.Join(dir, "fit.json"), filepath.Join(dir, "cpu.json"), filepath.Join(dir, "sim.json")
	work := []string{"--workload", "infercept-multi", "--scale-tokens", "0.1", "--scale-time", "0.01",
		"--policies", "fcfs,infercept", "--rates", "4", "--duration", "2"}
	t0 := time.Now()
	code, stdout, stderr := pitstop(t, append([]string{"bench", "--executor", "cpu", "--model", model, "--load-format", "dummy",
		"--kv-blocks", "24", "--host-blocks", "64", "--calibrate", "1s", "--fit-profile", prof, "--json", js}, work...)...)
	if code != 0 {
		t.Fatalf("bench --executor cpu: exit %d: %s", code, stderr)
	}
	t.Logf("cpu bench took %v:\n%s", time.Since(t0).Round(time.Millisecond), stdout)
	for _, w := range []string{"executor cpu", "fitted profile " + prof} {
		if !strings.Contains(stdout, w) {
			t.Fatalf("stdout does not say %q: %s", w, stdout)
		}
	}
	rep := readReport(t, js)
	if rep.Executor != "cpu" || rep.Workload != "infercept-multi-tok0.1-time0.01" || len(rep.Runs) != 2 {
		t.Fatalf("report: executor %q, workload %q, %d runs; want cpu, the scaled workload, 2", rep.Executor, rep.Workload, len(rep.Runs))
	}
	for _, r := range rep.Runs {
		if r.Requests == 0 || r.Completed != r.Requests || r.LeakedBlocks != 0 || !(r.E2EMeanS > 0) {
			t.Fatalf("cpu run %+v: want every request completed, positive latency, no leak", r)
		}
	}
	p, err := sim.LoadProfile(prof)
	if err != nil {
		t.Fatalf("the fitted profile does not load: %v", err)
	}
	if p.NumBlocks() != 24 || p.HostBlocks() != 64 || p.Iter.Base+p.Iter.PrefillToken+p.Iter.DecodeSeq <= 0 {
		t.Fatalf("fitted profile: %d blocks, %d host blocks, iteration cost %+v", p.NumBlocks(), p.HostBlocks(), p.Iter)
	}
	code, _, stderr = pitstop(t, append([]string{"bench", "--executor", "sim", "--profile", prof, "--json", simJS}, work...)...)
	if code != 0 {
		t.Fatalf("sim replay of the fitted profile: exit %d: %s", code, stderr)
	}
	srep := readReport(t, simJS)
	for i, r := range srep.Runs {
		if r.Requests != rep.Runs[i].Requests || r.Completed != r.Requests || r.LeakedBlocks != 0 {
			t.Fatalf("sim run %+v against cpu run %+v: want the same requests, all completed", r, rep.Runs[i])
		}
	}

	// The measured clock: engine time advances by each step's measured
	// time, so the run ends as soon as its compute is done.
	code, _, stderr = pitstop(t, append([]string{"bench", "--executor", "cpu", "--model", model, "--load-format", "dummy",
		"--kv-blocks", "24", "--calibrate", "200ms", "--clock", "measured", "--json", js}, work...)...)
	if code != 0 {
		t.Fatalf("bench --executor cpu --clock measured: exit %d: %s", code, stderr)
	}
	for _, r := range readReport(t, js).Runs {
		if r.Requests == 0 || r.Completed != r.Requests || r.LeakedBlocks != 0 {
			t.Fatalf("measured-clock run %+v: want every request completed and no leak", r)
		}
	}
}

// readJSON decodes the JSON file at path into v.
func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatal(err)
	}
}
