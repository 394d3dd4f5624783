package bench

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pitstop-llm/pitstop/bench/report"
	"github.com/pitstop-llm/pitstop/bench/workload"
	"github.com/pitstop-llm/pitstop/engine/policy"
	"github.com/pitstop-llm/pitstop/engine/sim"
)

// goldenConfig is one line of testdata/golden/<set>.txt: the flags of a
// `pitstop bench --executor sim --seed 1` run of every policy.
type goldenConfig struct {
	name, workload, profile string
	rates                   []float64
	duration, stopAfter     float64
}

// goldenVolatile are the report fields that differ between two runs of the
// same configuration: wall-clock time.
var goldenVolatile = []string{"wall_s"}

// goldenNewer are report fields added after the references were recorded:
// compared where a reference has them, not required where it predates them
// (the per-position breakdown, session 9: a split of latencies the
// references already pin down in total; the prefill and prompt counts,
// session 10: counts beside the recompute the references pin down).
var goldenNewer = []string{"by_position", "prefill_tokens", "prompt_tokens"}

// TestGoldenReports replays each configuration of testdata/golden/quick.txt
// in-process, as `pitstop bench --executor sim --seed 1` does, and compares
// every field of every run's report with the JSON that
// testdata/golden/record.sh recorded with the binary, except wall-clock time.
// The reference numbers are those of the tree before the engine's decisions
// moved into policy hooks (issue 22); they change only where a change is
// intended, and the commit that re-records one says which and why.
// PITSTOP_GOLDEN=full compares the longer set of full.txt (minutes).
func TestGoldenReports(t *testing.T) {
	set := cmp.Or(os.Getenv("PITSTOP_GOLDEN"), "quick")
	configs := readGoldenConfigs(t, filepath.Join("testdata", "golden", set+".txt"))
	for _, c := range configs {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			want := readGoldenReport(t, filepath.Join("testdata", "golden", set, c.name+".json"))
			got := replayGolden(t, c, want)
			compareGolden(t, want, got)
		})
	}
}

// replayGolden runs each (policy, rate) of the recorded report and returns
// the report as `pitstop bench` would have written it.
func replayGolden(t *testing.T, c goldenConfig, want map[string]json.RawMessage) *report.Report {
	t.Helper()
	prof, err := sim.LoadProfile(c.profile)
	if err != nil {
		t.Fatal(err)
	}
	w, err := workload.Load(c.workload, 1)
	if err != nil {
		t.Fatal(err)
	}
	var runs []map[string]json.RawMessage
	if err := json.Unmarshal(want["runs"], &runs); err != nil {
		t.Fatalf("golden runs: %v", err)
	}
	defaults := policy.Options{}.Defaults()
	rep := &report.Report{Workload: w.Name, Executor: "sim", Profile: prof.Name}
	for _, r := range runs {
		var name string
		var rate float64
		if json.Unmarshal(r["policy"], &name) != nil || json.Unmarshal(r["rate"], &rate) != nil {
			t.Fatalf("golden run without policy or rate: %s", r["policy"])
		}
		if !slices.Contains(c.rates, rate) {
			t.Fatalf("golden run at rate %g, the configuration has %v", rate, c.rates)
		}
		pol, err := policy.New(name, policy.Options{})
		if err != nil {
			t.Fatal(err)
		}
		run, err := Run(context.Background(), RunConfig{
			Workload: w, Engine: prof.EngineConfig(), Executor: sim.NewExecutor(prof), Policy: pol, Name: name,
			Rate: rate, Duration: c.duration, Seed: 1, SLOTTFT: defaults.TTFTSLO, SLOTPOT: defaults.TPOTSLO,
			StopAfter: time.Duration(c.stopAfter * float64(time.Second)),
		})
		if err != nil {
			t.Fatalf("%s at rate %g: %v", name, rate, err)
		}
		rep.Runs = append(rep.Runs, run)
	}
	if len(rep.Runs) != len(policy.Names())*len(c.rates) {
		t.Errorf("golden report has %d runs, want every policy (%d) at every rate (%d)", len(rep.Runs), len(policy.Names()), len(c.rates))
	}
	return rep
}

// compareGolden compares the reports as JSON, field by field, through the
// writer `pitstop bench --json` uses.
func compareGolden(t *testing.T, want map[string]json.RawMessage, rep *report.Report) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "got.json")
	if err := report.WriteJSON(path, rep); err != nil {
		t.Fatal(err)
	}
	got := readGoldenReport(t, path)
	for _, k := range []string{"workload", "executor", "profile"} {
		if string(got[k]) != string(want[k]) {
			t.Errorf("%s: got %s, want %s", k, got[k], want[k])
		}
	}
	var wantRuns, gotRuns []map[string]json.RawMessage
	if err := json.Unmarshal(want["runs"], &wantRuns); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(got["runs"], &gotRuns); err != nil {
		t.Fatal(err)
	}
	for i := range min(len(wantRuns), len(gotRuns)) {
		wr, gr := wantRuns[i], gotRuns[i]
		keys := make([]string, 0, len(wr)+len(gr))
		for k := range wr {
			keys = append(keys, k)
		}
		for k := range gr {
			if _, ok := wr[k]; !ok {
				keys = append(keys, k)
			}
		}
		slices.Sort(keys)
		for _, k := range keys {
			if slices.Contains(goldenVolatile, k) {
				continue
			}
			if _, ok := wr[k]; !ok && slices.Contains(goldenNewer, k) {
				continue
			}
			if string(gr[k]) != string(wr[k]) {
				t.Errorf("%s at rate %s: %s = %s, golden %s", wr["policy"], wr["rate"], k, orAbsent(gr[k]), orAbsent(wr[k]))
			}
		}
	}
}

func orAbsent(v json.RawMessage) string {
	if v == nil {
		return "(absent)"
	}
	return string(v)
}

func readGoldenReport(t *testing.T, path string) map[string]json.RawMessage {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return m
}

// readGoldenConfigs parses a configuration list: a name and bench flags per
// line, # comments.
func readGoldenConfigs(t *testing.T, path string) []goldenConfig {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []goldenConfig
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		c, err := parseGoldenConfig(strings.Fields(line))
		if err != nil {
			t.Fatalf("%s: %q: %v", path, line, err)
		}
		out = append(out, c)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(out) == 0 {
		t.Fatalf("%s lists no configuration", path)
	}
	return out
}

func parseGoldenConfig(words []string) (goldenConfig, error) {
	c := goldenConfig{name: words[0]}
	fs := flag.NewFlagSet(c.name, flag.ContinueOnError)
	fs.StringVar(&c.workload, "workload", "", "")
	fs.StringVar(&c.profile, "profile", "", "")
	rates := fs.String("rates", "", "")
	fs.Float64Var(&c.duration, "duration", 0, "")
	fs.Float64Var(&c.stopAfter, "stop-after", 0, "")
	if err := fs.Parse(words[1:]); err != nil {
		return c, err
	}
	if fs.NArg() > 0 || c.workload == "" || c.profile == "" || *rates == "" || c.duration <= 0 {
		return c, fmt.Errorf("want --workload, --profile, --rates and --duration (and optionally --stop-after), got %q", words[1:])
	}
	for _, r := range strings.Split(*rates, ",") {
		x, err := strconv.ParseFloat(r, 64)
		if err != nil {
			return c, fmt.Errorf("rate %q: %w", r, err)
		}
		c.rates = append(c.rates, x)
	}
	return c, nil
}
