package policy

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"

	"github.com/pitstop-llm/pitstop/bench"
	"github.com/pitstop-llm/pitstop/bench/workload"
	"github.com/pitstop-llm/pitstop/engine"
	"github.com/pitstop-llm/pitstop/engine/sim"
)

// sloRecorder wraps a policy to record each call's TTFT and TPOT (the bench
// report has no SLO attainment yet). It overrides only Observe, passing
// every event on, so the policy runs exactly as it would alone.
type sloRecorder struct {
	engine.Policy
	arrival map[engine.SeqID]time.Duration
	first   map[engine.SeqID]time.Duration
	last    map[engine.SeqID]time.Duration
	paused  map[engine.SeqID]time.Duration // tool time, excluded from TPOT
	pauseAt map[engine.SeqID]time.Duration
	ttft    []float64
	tpot    []float64
}

func newSLORecorder(p engine.Policy) *sloRecorder {
	return &sloRecorder{Policy: p, arrival: map[engine.SeqID]time.Duration{}, first: map[engine.SeqID]time.Duration{},
		last: map[engine.SeqID]time.Duration{}, paused: map[engine.SeqID]time.Duration{}, pauseAt: map[engine.SeqID]time.Duration{}}
}

func (r *sloRecorder) Observe(e *engine.Event) {
	r.Policy.Observe(e)
	if e.Seq == nil {
		return
	}
	id := e.Seq.ID()
	switch e.Kind {
	case engine.EvArrived:
		r.arrival[id] = e.Time
	case engine.EvToken:
		if e.Seq.Generated() == 1 {
			r.first[id] = e.Time
		}
		r.last[id] = e.Time
	case engine.EvPaused:
		r.pauseAt[id] = e.Time
	case engine.EvResumed:
		r.paused[id] += e.Time - r.pauseAt[id]
	case engine.EvFinished:
		if e.Err == nil && !e.Seq.Cancelled() {
			r.ttft = append(r.ttft, (r.first[id] - r.arrival[id]).Seconds())
			tpot := 0.0
			if n := e.Seq.Generated(); n > 1 {
				tpot = (r.last[id] - r.first[id] - r.paused[id]).Seconds() / float64(n-1)
			}
			r.tpot = append(r.tpot, tpot)
		}
		delete(r.arrival, id)
		delete(r.first, id)
		delete(r.last, id)
		delete(r.paused, id)
		delete(r.pauseAt, id)
	}
}

// attainment is the share of calls with TTFT ≤ ttft and TPOT ≤ tpot.
func (r *sloRecorder) attainment(ttft, tpot float64) float64 {
	if len(r.ttft) == 0 {
		return 0
	}
	ok := 0
	for i := range r.ttft {
		if r.ttft[i] <= ttft && r.tpot[i] <= tpot {
			ok++
		}
	}
	return float64(ok) / float64(len(r.ttft))
}

type sloRun struct {
	Policy     string  `json:"policy"`
	Rate       float64 `json:"rate"`
	Calls      int     `json:"calls"`
	Attainment float64 `json:"slo_attainment"`
	TTFTOK     float64 `json:"ttft_ok"`
	TPOTOK     float64 `json:"tpot_ok"`
	E2EMean    float64 `json:"e2e_mean_s"`
	TTFTMean   float64 `json:"ttft_mean_s"`
	TPOTMean   float64 `json:"tpot_mean_s"`
	KVUtil     float64 `json:"kv_util_mean"`
	Recompute  int64   `json:"recompute_tokens"`
}

func envOr(k, d string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return d
}

func floats(t *testing.T, s string) []float64 {
	var out []float64
	for _, f := range strings.Split(s, ",") {
		x, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, x)
	}
	return out
}

// TestSLOAttainment is the SOLA experiment (issue 3, Show 4), run on
// demand: PITSTOP_SLO_OUT=dir go test ./engine/policy -run TestSLOAttainment
// -v. Knobs (env): PITSTOP_SLO_WORKLOAD, _PROFILE, _RATES, _DURATION,
// _POLICIES, _TTFT, _TPOT (seconds; also given to sola), _SEED. Writes
// <workload>-slo.json and <workload>-slo_attainment.png into the directory.
func TestSLOAttainment(t *testing.T) {
	out := os.Getenv("PITSTOP_SLO_OUT")
	if out == "" {
		t.Skip("set PITSTOP_SLO_OUT to run the SLO experiment")
	}
	wname := envOr("PITSTOP_SLO_WORKLOAD", "azure-conv")
	prof, err := sim.LoadProfile(envOr("PITSTOP_SLO_PROFILE", "a100-80g-llama3-8b"))
	if err != nil {
		t.Fatal(err)
	}
	rates := floats(t, envOr("PITSTOP_SLO_RATES", "1,2,4"))
	dur := floats(t, envOr("PITSTOP_SLO_DURATION", "600"))[0]
	ttft := floats(t, envOr("PITSTOP_SLO_TTFT", "0.4"))[0]
	tpot := floats(t, envOr("PITSTOP_SLO_TPOT", "0.15"))[0]
	seed, _ := strconv.ParseInt(envOr("PITSTOP_SLO_SEED", "1"), 10, 64)
	pols := strings.Split(envOr("PITSTOP_SLO_POLICIES", "fcfs,vllm-opt,sola,pitstop"), ",")
	w, err := workload.Load(wname, seed)
	if err != nil {
		t.Fatal(err)
	}
	var runs []sloRun
	for _, rate := range rates {
		for _, name := range pols {
			pol, err := New(name, Options{TTFTSLO: ttft, TPOTSLO: tpot})
			if err != nil {
				t.Fatal(err)
			}
			rec := newSLORecorder(pol)
			cfg := engine.Config{NumBlocks: prof.NumBlocks(), BlockSize: prof.BlockSize, HostBlocks: prof.HostBlocks(),
				MaxBatchedTokens: prof.MaxBatchedTokens, MaxSeqs: prof.MaxSeqs, SwapBlocksPerIter: prof.Swap.BlocksPerIter,
				Cost: prof.HandlingCost(), HostBlockBytes: prof.BlockBytes()}
			run, err := bench.Run(context.Background(), bench.RunConfig{Workload: w, Engine: cfg, Executor: sim.NewExecutor(prof),
				Policy: rec, Name: name, Rate: rate, Duration: dur, Seed: seed})
			if err != nil {
				t.Fatal(err)
			}
			r := sloRun{Policy: name, Rate: rate, Calls: len(rec.ttft), Attainment: rec.attainment(ttft, tpot),
				TTFTOK: rec.attainment(ttft, 1e18), TPOTOK: rec.attainment(1e18, tpot),
				E2EMean: run.E2EMeanS, TTFTMean: run.TTFTMeanS, TPOTMean: run.TPOTMeanS, KVUtil: run.KVUtilMean, Recompute: run.RecomputeTokens}
			t.Logf("%-9s rate %5g: %5d calls, SLO attainment %5.1f%% (TTFT ok %5.1f%%, TPOT ok %5.1f%%), e2e %.3g s, ttft %.3g s, tpot %.3g s, kv %.0f%%",
				name, rate, r.Calls, 100*r.Attainment, 100*r.TTFTOK, 100*r.TPOTOK, r.E2EMean, r.TTFTMean, r.TPOTMean, 100*r.KVUtil)
			runs = append(runs, r)
		}
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	data, _ := json.MarshalIndent(map[string]any{"workload": wname, "profile": prof.Name, "ttft_slo_s": ttft, "tpot_slo_s": tpot,
		"duration_s": dur, "seed": seed, "runs": runs}, "", "  ")
	if err := os.WriteFile(filepath.Join(out, wname+"-slo.json"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	p := plot.New()
	p.Title.Text = fmt.Sprintf("%s on %s: SLO attainment (TTFT ≤ %g s, TPOT ≤ %g s)", wname, prof.Name, ttft, tpot)
	p.X.Label.Text = "rate (requests/s)"
	p.Y.Label.Text = "attainment"
	var lines []any
	for _, name := range pols {
		var pts plotter.XYs
		for _, r := range runs {
			if r.Policy == name {
				pts = append(pts, plotter.XY{X: r.Rate, Y: r.Attainment})
			}
		}
		slices.SortFunc(pts, func(a, b plotter.XY) int { return int(a.X*1000 - b.X*1000) })
		lines = append(lines, name, pts)
	}
	if err := plotutil.AddLinePoints(p, lines...); err != nil {
		t.Fatal(err)
	}
	if err := p.Save(8*vg.Inch, 5*vg.Inch, filepath.Join(out, wname+"-slo_attainment.png")); err != nil {
		t.Fatal(err)
	}
}
