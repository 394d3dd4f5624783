package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/pitstop-llm/pitstop/engine"
	"github.com/pitstop-llm/pitstop/engine/sim"
	"github.com/pitstop-llm/pitstop/models/cpu"
	"github.com/pitstop-llm/pitstop/models/llama"
	"github.com/pitstop-llm/pitstop/planner"
)

// planCPUFlags size the engines of `plan --run`: every replica is a CPU
// engine with one kernel worker per "GPU" of its plan.
type planCPUFlags struct {
	kvBlocks    int
	blockSize   int
	maxBatched  int
	maxSeqs     int
	calibrate   time.Duration
	profileDir  string
	modelSeed   uint64
	fitRequests int
}

func addPlanCPUFlags(fl *pflag.FlagSet, f *planCPUFlags) {
	fl.IntVar(&f.kvBlocks, "kv-blocks", 256, "--run: device KV blocks of each engine")
	fl.IntVar(&f.blockSize, "block-size", 16, "--run: tokens per KV block")
	fl.IntVar(&f.maxBatched, "max-batched-tokens", 256, "--run: token budget per iteration")
	fl.IntVar(&f.maxSeqs, "max-seqs", 32, "--run: sequences per iteration")
	fl.DurationVar(&f.calibrate, "calibrate", 5*time.Second, "--run: time budget of each model shape's calibration, whose fitted profile prices the plan (0: the whole grid)")
	fl.StringVar(&f.profileDir, "profile-dir", "", "--run: where the fitted profiles of this machine are written (default: a temporary directory)")
	fl.Uint64Var(&f.modelSeed, "model-seed", 1, "--run: seed of the dummy weights")
	fl.IntVar(&f.fitRequests, "fit-requests", 100, "--run: requests of each CPU shape's first model replayed before planning, on --gpus engines at once; their measured iterations join the calibration's in the fitted profile (0: calibration only)")
}

// runPlanCPU fits a profile of this machine for each model's CPU shape,
// plans the application with it, runs the plan on CPU engines (reality:
// another draw of the lengths) and reports planned against actual.
func runPlanCPU(cmd *cobra.Command, f planFlags, spec *planner.AppSpec, dir string, obj planner.Objective) error {
	c := f.cpu
	if c.kvBlocks < 2 || c.blockSize <= 0 || c.maxBatched <= 0 || c.maxSeqs <= 0 || c.calibrate < 0 || c.fitRequests < 0 {
		return usagef("--kv-blocks (>= 2), --block-size, --max-batched-tokens and --max-seqs must be positive, --calibrate and --fit-requests not negative")
	}
	out := cmd.OutOrStdout()
	pdir := c.profileDir
	if pdir == "" {
		var err error
		if pdir, err = os.MkdirTemp("", "pitstop-plan-"); err != nil {
			return err
		}
		defer os.RemoveAll(pdir)
	} else if st, err := os.Stat(pdir); err != nil || !st.IsDir() {
		return usagef("--profile-dir %s: not a directory", pdir)
	}
	// A profile of this machine per CPU shape: fitted to a grid of
	// calibration batches and to a replay of the first model of that shape
	// on its own sampled requests (one worker: one "GPU").
	type shapeFit struct {
		model *llama.Model
		path  string
		iters []sim.IterSample
		swaps []sim.SwapSample
		load  float64
	}
	fits := map[string]*shapeFit{}
	ecfg := engine.Config{MaxBatchedTokens: c.maxBatched, MaxSeqs: c.maxSeqs}
	newExec := func(m *llama.Model, workers int) (*cpu.Executor, error) {
		return cpu.New(m, cpu.Options{NumBlocks: c.kvBlocks, BlockSize: c.blockSize, Workers: workers, WrapTokens: true})
	}
	writeFit := func(shape string, sf *shapeFit) error {
		x, err := newExec(sf.model, 1)
		if err != nil {
			return err
		}
		p, st, err := x.Profile("cpu-"+shape, ecfg, sf.iters, sf.swaps)
		if err != nil {
			return err
		}
		data, _ := json.MarshalIndent(p, "", "  ")
		fmt.Fprintf(out, "fitted %s on %d iterations (R² %.3f, mean |error| %.1f%%, total %+.1f%%); load %.3f s\n", sf.path, st.Samples, st.R2, 100*st.MeanAbsPctErr, 100*st.TotalErr, sf.load)
		return os.WriteFile(sf.path, append(data, '\n'), 0o644)
	}
	for i := range spec.Models {
		ms := &spec.Models[i]
		shape := ms.CPUModel
		if shape == "" {
			return usagef("model %s: no cpu_model for --run (built-in shapes: %s)", ms.Name, llama.BuiltinHelp())
		}
		cfg, ok := llama.Builtin(shape)
		if !ok {
			return usagef("model %s: cpu_model %q is not a built-in shape (%s)", ms.Name, shape, llama.BuiltinHelp())
		}
		sf := fits[shape]
		if sf == nil {
			t0 := time.Now()
			sf = &shapeFit{model: llama.NewDummy(cfg, c.modelSeed), path: filepath.Join(pdir, "cpu-"+shape+".json")}
			x, err := newExec(sf.model, 1)
			if err != nil {
				return err
			}
			sf.load = time.Since(t0).Seconds()
			if sf.iters, sf.swaps, err = x.Calibrate(0, c.maxBatched, c.calibrate); err != nil {
				return err
			}
			if err := writeFit(shape, sf); err != nil {
				return err
			}
			fits[shape] = sf
		}
		ms.Profile, ms.ProfileTP, ms.TP, ms.MaxDP = sf.path, 1, []int{1}, 0
		ms.LoadS = sf.load
		ms.WeightsBytes = 2 * float64(cfg.Params())
	}
	app, err := planner.BuildApp(spec, dir, spec.Seed)
	if err != nil {
		return usageError{err.Error()}
	}
	if err := planner.Check(app, f.gpus); err != nil {
		return usageError{err.Error()}
	}
	if c.fitRequests > 0 {
		// Every model of a shape replays its share of --fit-requests, so
		// that the fit sees the app's mix of lengths. As many engines
		// replay at once as the plan may run (--gpus): on a CPU, unlike on
		// separate GPUs, engines that run together slow each other down
		// (shared cores, caches and memory bandwidth, and here other
		// users' load), and the profile should price the device as the
		// plan will use it.
		byShape := map[string][]*planner.Model{}
		for _, m := range app.Models {
			byShape[m.Spec().CPUModel] = append(byShape[m.Spec().CPUModel], m)
		}
		for shape, models := range byShape {
			sf := fits[shape]
			share := (c.fitRequests + len(models) - 1) / len(models)
			for _, m := range models {
				xs := make([]*cpu.Executor, f.gpus)
				errs := make([]error, f.gpus)
				var wg sync.WaitGroup
				for i := range xs {
					if xs[i], err = newExec(sf.model, 1); err != nil {
						return err
					}
					wg.Add(1)
					go func() {
						defer wg.Done()
						_, errs[i] = planner.NewSimulator(app).Replay(m, xs[i].EngineConfig(ecfg), xs[i], share)
					}()
				}
				wg.Wait()
				for i, x := range xs {
					if errs[i] != nil {
						return errs[i]
					}
					sf.iters = append(sf.iters, x.Samples()...)
				}
			}
			if err := writeFit(shape, sf); err != nil {
				return err
			}
		}
		if app, err = planner.BuildApp(spec, dir, spec.Seed); err != nil {
			return err
		}
	}
	sim, err := f.simulator(app)
	if err != nil {
		return err
	}
	plan, err := f.plan(app, sim, f.gpus, obj)
	if err != nil {
		return err
	}
	planRep := app.Report(plan)
	fmt.Fprint(out, planRep)
	actual, err := planner.BuildApp(spec, dir, spec.Seed+1)
	if err != nil {
		return err
	}
	load := func(m *planner.Model, tp int) (engine.Executor, engine.Config, error) {
		cfg, _ := llama.Builtin(m.Spec().CPUModel)
		x, err := cpu.New(llama.NewDummy(cfg, c.modelSeed), cpu.Options{NumBlocks: c.kvBlocks, BlockSize: c.blockSize, Workers: tp, WrapTokens: true, KeepSamples: -1})
		if err != nil {
			return nil, engine.Config{}, err
		}
		return x, x.EngineConfig(engine.Config{MaxBatchedTokens: c.maxBatched, MaxSeqs: c.maxSeqs}), nil
	}
	runner := planner.NewRunner(actual, plan, f.gpus, load)
	if err := runner.UseBalancer(f.balancer); err != nil {
		return usageError{"--balancer: " + err.Error()}
	}
	rep, err := runner.Run(context.Background())
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "run on the CPU executor (lengths drawn again with seed %d):\n", spec.Seed+1)
	for _, l := range rep.Launches {
		fmt.Fprintf(out, "  %7.2f s  launch %s dp%d×tp%d (stage %d)\n", l.AtS, l.Model, l.DP, l.TP, l.Stage)
	}
	for _, m := range rep.Models {
		fmt.Fprintf(out, "  %-12s planned finish %7.2f s, actual %7.2f s, %d requests, preempted %d times\n", m.Model, m.PlannedS, m.ActualS, m.Requests, m.Preempted)
	}
	fmt.Fprintf(out, "planned %.2f s, actual %.2f s: error %+.1f%%\n", rep.PlannedS, rep.ActualS, 100*(rep.PlannedS/rep.ActualS-1))
	if f.jsonOut != "" {
		data, err := json.MarshalIndent(map[string]any{"app": spec.Name, "gpus": f.gpus, "objective": obj.String(), "plan": planRep, "run": rep}, "", "  ")
		if err != nil {
			return err
		}
		return os.WriteFile(f.jsonOut, append(data, '\n'), 0o644)
	}
	return nil
}
