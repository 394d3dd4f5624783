package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"golang.org/x/sync/errgroup"

	"github.com/pitstop-llm/pitstop/bench/report"
	"github.com/pitstop-llm/pitstop/bench/workload"
	"github.com/pitstop-llm/pitstop/engine"
	"github.com/pitstop-llm/pitstop/engine/policy"
	"github.com/pitstop-llm/pitstop/engine/sim"
)

// evictionCounter counts the host evictions of the policy it wraps
// (overriding Observe only).
type evictionCounter struct {
	engine.Policy
	evictions int
}

func (p *evictionCounter) Observe(e *engine.Event) {
	if e.Kind == engine.EvIteration {
		p.evictions += e.Iter.HostEvictions
	}
	p.Policy.Observe(e)
}

// hostRules are the two rules compared (policy.Options.HostEviction).
var hostRules = []string{"newcomer", "resume"}

// TestHostEvictionOption: with HostEviction "resume" parked KV gives way to
// newcomers on a full host tier (infercept-multi on a 2 GB host tier); with
// the default nothing does. Every call completes and nothing leaks either way.
func TestHostEvictionOption(t *testing.T) {
	prof, err := sim.LoadProfile("testdata/profiles/a100-40g-gptj-6b-host2g.json")
	if err != nil {
		t.Fatal(err)
	}
	w, err := workload.Load("infercept-multi", 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, rule := range hostRules {
		base, err := policy.New("infercept", policy.Options{HostEviction: rule})
		if err != nil {
			t.Fatal(err)
		}
		pol := &evictionCounter{Policy: base}
		run, err := Run(context.Background(), RunConfig{Workload: w, Engine: prof.EngineConfig(), Executor: sim.NewExecutor(prof),
			Policy: pol, Name: "infercept", Rate: 7, Duration: 60, Seed: 1, CheckEvery: 50})
		if err != nil {
			t.Fatal(err)
		}
		if run.Completed != run.Requests || run.LeakedBlocks != 0 {
			t.Errorf("%s: %d of %d completed, %d leaked", rule, run.Completed, run.Requests, run.LeakedBlocks)
		}
		if (pol.evictions > 0) != (rule == "resume") {
			t.Errorf("%s: %d host evictions", rule, pol.evictions)
		}
	}
	if _, err := policy.New("infercept", policy.Options{HostEviction: "oldest"}); err == nil {
		t.Error("an unknown host eviction rule was accepted")
	}
}

// hostEvictionRow is one run of the experiment.
type hostEvictionRow struct {
	Rule           string  `json:"rule"`
	Policy         string  `json:"policy"`
	Rate           float64 `json:"rate"`
	Seed           int64   `json:"seed"`
	HostEvictions  int     `json:"host_evictions"`
	Completed      int     `json:"completed"`
	Requests       int     `json:"requests"`
	E2EMeanS       float64 `json:"e2e_mean_s"`
	E2EP99S        float64 `json:"e2e_p99_s"`
	ThroughputRPS  float64 `json:"throughput_rps"`
	RecomputeToks  int64   `json:"recompute_tokens"`
	SwapOutBytes   int64   `json:"swap_out_bytes"`
	SwapInBytes    int64   `json:"swap_in_bytes"`
	KVUtilMean     float64 `json:"kv_util_mean"`
	PredictionErr  float64 `json:"prediction_error"`
	StoppedAtS     float64 `json:"stopped_at_s"`
	VirtualSeconds float64 `json:"virtual_s"`
}

// TestHostEvictionExperiment measures host-tier eviction by predicted resume
// time against discarding the newcomer, on a workload whose host tier is the
// bottleneck (docs/results-host-eviction.md). It runs on demand:
//
//	PITSTOP_HOSTEV_OUT=dir go test ./bench -run TestHostEvictionExperiment -v -timeout 2h
//
// Knobs (env): PITSTOP_HOSTEV_WORKLOAD (infercept-multi), _PROFILE
// (testdata/profiles/a100-40g-gptj-6b-host2g.json), _POLICIES
// (infercept,lamps,pitstop), _RATES (5,7), _SEEDS (1,2,3), _DURATION (1800),
// _ERROR (0: oracle tool times; p: truth + N(0, p·truth)).
func TestHostEvictionExperiment(t *testing.T) {
	out := os.Getenv("PITSTOP_HOSTEV_OUT")
	if out == "" {
		t.Skip("set PITSTOP_HOSTEV_OUT to run the host eviction experiment")
	}
	env := func(k, d string) string {
		if v := os.Getenv("PITSTOP_HOSTEV_" + k); v != "" {
			return v
		}
		return d
	}
	num := func(s string) float64 {
		x, err := strconv.ParseFloat(s, 64)
		if err != nil {
			t.Fatal(err)
		}
		return x
	}
	prof, err := sim.LoadProfile(env("PROFILE", "testdata/profiles/a100-40g-gptj-6b-host2g.json"))
	if err != nil {
		t.Fatal(err)
	}
	duration, predErr := num(env("DURATION", "1800")), num(env("ERROR", "0"))
	defaults := policy.Options{}.Defaults()
	type job struct {
		rule, policy string
		rate         float64
		seed         int64
	}
	var jobs []job
	for _, r := range strings.Split(env("RATES", "5,7"), ",") {
		for _, s := range strings.Split(env("SEEDS", "1,2,3"), ",") {
			for _, p := range strings.Split(env("POLICIES", "infercept,lamps,pitstop"), ",") {
				for _, rule := range hostRules {
					jobs = append(jobs, job{rule, p, num(r), int64(num(s))})
				}
			}
		}
	}
	rows := make([]hostEvictionRow, len(jobs))
	var mu sync.Mutex
	loaded := map[int64]*workload.Workload{}
	load := func(seed int64) *workload.Workload {
		mu.Lock()
		defer mu.Unlock()
		if w := loaded[seed]; w != nil {
			return w
		}
		w, err := workload.Load(env("WORKLOAD", "infercept-multi"), seed)
		if err != nil {
			t.Fatal(err)
		}
		loaded[seed] = w
		return w
	}
	var g errgroup.Group
	g.SetLimit(2)
	for i, j := range jobs {
		w := load(j.seed)
		g.Go(func() error {
			base, err := policy.New(j.policy, policy.Options{HostEviction: j.rule})
			if err != nil {
				return err
			}
			pol := &evictionCounter{Policy: base}
			run, err := Run(context.Background(), RunConfig{Workload: w, Engine: prof.EngineConfig(), Executor: sim.NewExecutor(prof),
				Policy: pol, Name: j.policy, Rate: j.rate, Duration: duration, Seed: j.seed, PredictionError: predErr,
				SLOTTFT: defaults.TTFTSLO, SLOTPOT: defaults.TPOTSLO})
			if err != nil {
				return fmt.Errorf("%s %s rate %g seed %d: %w", j.rule, j.policy, j.rate, j.seed, err)
			}
			rows[i] = rowOf(j.rule, run, pol.evictions, predErr)
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		t.Fatal(err)
	}
	data, err := json.MarshalIndent(rows, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(out, "host-eviction.json"), append(data, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("\n%s", hostEvictionTable(rows))
}

func rowOf(rule string, r report.Run, evictions int, predErr float64) hostEvictionRow {
	return hostEvictionRow{Rule: rule, Policy: r.Policy, Rate: r.Rate, Seed: r.Seed, HostEvictions: evictions,
		Completed: r.Completed, Requests: r.Requests, E2EMeanS: r.E2EMeanS, E2EP99S: r.E2EP99S, ThroughputRPS: r.ThroughputRPS,
		RecomputeToks: r.RecomputeTokens, SwapOutBytes: r.SwapOutBytes, SwapInBytes: r.SwapInBytes, KVUtilMean: r.KVUtilMean,
		PredictionErr: predErr, StoppedAtS: r.StoppedAtS, VirtualSeconds: r.VirtualS}
}

// hostEvictionTable prints each (policy, rate) with the mean over seeds of
// both rules side by side, and the change.
func hostEvictionTable(rows []hostEvictionRow) string {
	type key struct {
		policy string
		rate   float64
	}
	type agg struct {
		n                            int
		mean, p99, thr, rec, out, ev float64
	}
	sums := map[key]map[string]*agg{}
	var order []key
	for _, r := range rows {
		k := key{r.Policy, r.Rate}
		if sums[k] == nil {
			sums[k] = map[string]*agg{}
			order = append(order, k)
		}
		a := sums[k][r.Rule]
		if a == nil {
			a = &agg{}
			sums[k][r.Rule] = a
		}
		a.n++
		a.mean += r.E2EMeanS
		a.p99 += r.E2EP99S
		a.thr += r.ThroughputRPS
		a.rec += float64(r.RecomputeToks)
		a.out += float64(r.SwapOutBytes)
		a.ev += float64(r.HostEvictions)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%-10s %5s | %-32s | %-32s | %-32s | %-26s | %-22s | %s\n", "policy", "rate",
		"e2e mean s (newcomer/resume, Δ)", "e2e p99 s", "throughput rps", "recompute Mtok", "swap out GB", "host evictions")
	pct := func(a, b float64) string {
		if a == 0 {
			return "   —"
		}
		return fmt.Sprintf("%+5.1f%%", 100*(b-a)/a)
	}
	for _, k := range order {
		n, r := sums[k]["newcomer"], sums[k]["resume"]
		if n == nil || r == nil {
			continue
		}
		f := func(a *agg, v float64) float64 { return v / math.Max(float64(a.n), 1) }
		fmt.Fprintf(&b, "%-10s %5g | %8.2f %8.2f %s | %8.1f %8.1f %s | %8.4f %8.4f %s | %6.3f %6.3f %s | %6.1f %6.1f | %.0f\n",
			k.policy, k.rate,
			f(n, n.mean), f(r, r.mean), pct(n.mean, r.mean),
			f(n, n.p99), f(r, r.p99), pct(n.p99, r.p99),
			f(n, n.thr), f(r, r.thr), pct(n.thr, r.thr),
			f(n, n.rec)/1e6, f(r, r.rec)/1e6, pct(n.rec, r.rec),
			f(n, n.out)/1e9, f(r, r.out)/1e9,
			f(r, r.ev))
	}
	return b.String()
}
