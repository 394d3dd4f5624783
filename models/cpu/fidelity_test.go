package cpu

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/pitstop-llm/pitstop/bench"
	"github.com/pitstop-llm/pitstop/bench/workload"
	"github.com/pitstop-llm/pitstop/engine"
	"github.com/pitstop-llm/pitstop/engine/policy"
	"github.com/pitstop-llm/pitstop/engine/sim"
	"github.com/pitstop-llm/pitstop/models/llama"
)

// smallToolWorkload is a ReAct-shaped workload scaled to a CPU: programs of
// 1-3 chained calls, each call 1-3 segments of decode then a tool.
func smallToolWorkload(seed uint64, programs int) *workload.Workload {
	r := rand.New(rand.NewPCG(seed, 7))
	w := &workload.Workload{Name: "cpu-tools", Description: "small ReAct-shaped tool workload for the CPU fidelity experiment"}
	for p := range programs {
		prog := workload.Program{ID: fmt.Sprintf("p%d", p)}
		calls := 1 + r.IntN(3)
		for c := range calls {
			call := workload.Call{ID: fmt.Sprintf("c%d", c), NewTokens: 16 + r.IntN(96)}
			if c > 0 {
				call.Parents, call.ContinueParent, call.ThinkTime = []string{fmt.Sprintf("c%d", c-1)}, true, 0.05
			}
			segs := 1 + r.IntN(3)
			for s := range segs {
				seg := workload.Segment{Decode: 4 + r.IntN(28)}
				if s < segs-1 {
					seg.Tool, seg.ToolTime, seg.ToolReturn = "t", 0.1+r.Float64()*1.5, 8+r.IntN(24)
				}
				call.Segments = append(call.Segments, seg)
			}
			prog.Calls = append(prog.Calls, call)
		}
		w.Programs = append(w.Programs, prog)
	}
	return w
}

// smallModel is the built-in llama-5m shape.
func smallModel() llama.Config {
	c, _ := llama.Builtin("llama-5m")
	return c
}

func envFloat(name string, def float64) float64 {
	if v, err := strconv.ParseFloat(os.Getenv(name), 64); err == nil {
		return v
	}
	return def
}

// TestFidelity is the simulation-fidelity experiment (issue 5, item 5): run
// a small tool workload on the CPU executor (virtual clock advanced by each
// iteration's measured time; tools wait on that clock), fit a profile from the
// measured iterations, replay the same workload, seed and rate with the
// simulator on the fitted profile, and compare mean end-to-end latency.
// It takes minutes, so it runs only with PITSTOP_FIDELITY=1:
//
//	PITSTOP_FIDELITY=1 go test -run TestFidelity -v -timeout 30m ./models/cpu/
//
// PITSTOP_FIDELITY_MODEL=100m uses the ~100M model instead of the ~4.6M one;
// PITSTOP_FIDELITY_RATE and _DURATION set the arrivals (programs/s, s);
// PITSTOP_FIDELITY_WORKLOAD names a bench workload to use instead of the
// built-in small one, PITSTOP_FIDELITY_KV_BLOCKS the device KV blocks (160);
// PITSTOP_FIDELITY_OUT names a directory for the fitted profile and reports.
func TestFidelity(t *testing.T) {
	if os.Getenv("PITSTOP_FIDELITY") == "" {
		t.Skip("set PITSTOP_FIDELITY=1 to run the fidelity experiment")
	}
	cfgM := smallModel()
	if os.Getenv("PITSTOP_FIDELITY_MODEL") == "100m" {
		cfgM = Model100M()
	}
	rate := envFloat("PITSTOP_FIDELITY_RATE", 1)
	duration := envFloat("PITSTOP_FIDELITY_DURATION", 60)
	outDir := os.Getenv("PITSTOP_FIDELITY_OUT")
	if outDir == "" {
		outDir = t.TempDir()
	}
	m := llama.NewDummy(cfgM, 1)
	w := smallToolWorkload(3, 64)
	if name := os.Getenv("PITSTOP_FIDELITY_WORKLOAD"); name != "" {
		var err error
		if w, err = workload.Load(name, 1); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Validate(); err != nil {
		t.Fatal(err)
	}
	kvBlocks := int(envFloat("PITSTOP_FIDELITY_KV_BLOCKS", 160))
	ecfg := engine.Config{MaxBatchedTokens: 256, MaxSeqs: 32, SwapBlocksPerIter: 0}
	for _, pol := range []string{"fcfs", "infercept"} {
		x, err := New(m, Options{NumBlocks: kvBlocks, BlockSize: 16, HostBlocks: 4 * kvBlocks, WrapTokens: true})
		if err != nil {
			t.Fatal(err)
		}
		// Calibration: warms up, and gives the handling decisions a cost model.
		ci, cs, err := x.Calibrate(0, ecfg.MaxBatchedTokens, 20*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		calib, _, err := x.Profile("cpu-calibrated", ecfg, ci, cs)
		if err != nil {
			t.Fatal(err)
		}
		cfg := x.EngineConfig(ecfg)
		cfg.Cost = calib.HandlingCost()
		p, _ := policy.New(pol, policy.Options{})
		t0 := time.Now()
		real, err := bench.Run(context.Background(), bench.RunConfig{Workload: w, Engine: cfg, Executor: x, Policy: p,
			Name: pol, Rate: rate, Duration: duration, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		wall := time.Since(t0)
		fitted, st, err := x.Profile("cpu-fitted-"+pol, ecfg, x.Samples(), x.SwapSamples())
		if err != nil {
			t.Fatal(err)
		}
		js, _ := json.MarshalIndent(fitted, "", "  ")
		os.WriteFile(filepath.Join(outDir, "cpu-fitted-"+pol+".json"), js, 0o644)
		js, _ = json.Marshal(map[string]any{"iterations": x.Samples(), "swaps": x.SwapSamples(), "calibration": ci})
		os.WriteFile(filepath.Join(outDir, "samples-"+pol+".json"), js, 0o644)

		scfg := engine.Config{
			NumBlocks: fitted.NumBlocks(), BlockSize: fitted.BlockSize, HostBlocks: fitted.HostBlocks(),
			MaxBatchedTokens: fitted.MaxBatchedTokens, MaxSeqs: fitted.MaxSeqs, SwapBlocksPerIter: fitted.Swap.BlocksPerIter,
			Cost: calib.HandlingCost(), HostBlockBytes: fitted.BlockBytes(),
		}
		p, _ = policy.New(pol, policy.Options{})
		simRun, err := bench.Run(context.Background(), bench.RunConfig{Workload: w, Engine: scfg, Executor: sim.NewExecutor(fitted), Policy: p,
			Name: pol, Rate: rate, Duration: duration, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		rel := simRun.E2EMeanS/real.E2EMeanS - 1
		t.Logf("%s: cpu run (%v wall, %d iterations, %d calls): e2e mean %.3f s, p99 %.3f s, ttft mean %.3f s; sim on the fitted profile: e2e mean %.3f s, p99 %.3f s, ttft mean %.3f s; e2e mean error %+.1f%%",
			pol, wall.Round(time.Second), real.Iterations, real.Completed, real.E2EMeanS, real.E2EP99S, real.TTFTMeanS, simRun.E2EMeanS, simRun.E2EP99S, simRun.TTFTMeanS, 100*rel)
		t.Logf("%s: fit %+v: R² %.4f, mean |error| per iteration %.1f%%, total busy-time error %+.2f%%", pol, fitted.Iter, st.R2, 100*st.MeanAbsPctErr, 100*st.TotalErr)
		js, _ = json.MarshalIndent(map[string]any{"cpu": real, "sim": simRun, "fit": st, "e2e_mean_rel_err": rel}, "", "  ")
		os.WriteFile(filepath.Join(outDir, "fidelity-"+pol+".json"), js, 0o644)
		if math.Abs(rel) > 0.10 {
			t.Errorf("%s: simulated mean e2e latency off by %+.1f%% (> 10%%)", pol, 100*rel)
		}
	}
}
