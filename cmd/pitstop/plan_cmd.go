package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/pitstop-llm/pitstop/cluster"
	"github.com/pitstop-llm/pitstop/planner"
)

func init() { subcommands = append(subcommands, newPlanCmd) }

type planFlags struct {
	app       string
	gpus      int
	jsonOut   string
	requests  int
	maxOutput int
	seed      uint64
	objective string
	balancer  string
	search    string
	reach     int
	effort    float64
	run       bool
	profiles  string
	cpu       planCPUFlags
}

func newPlanCmd() *cobra.Command {
	var f planFlags
	cmd := &cobra.Command{
		Use:   "plan --app FILE.json --gpus N",
		Short: "plan a multi-LLM application on a GPU budget (SamuLLM), against the Max- and Min-heuristics; --run executes the plan on the CPU",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return runPlan(cmd, f) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.app, "app", "", "application file (examples/apps/*.json): models, requests, data dependencies")
	fl.IntVar(&f.gpus, "gpus", 0, "GPU budget (with --run: CPU cores, one engine worker each)")
	fl.StringVar(&f.jsonOut, "json", "", "write the schedules as JSON to this file")
	fl.IntVar(&f.requests, "requests", 0, "override the request count of every model that has no input (0: the file's)")
	fl.IntVar(&f.maxOutput, "max-output", 0, "override every model's output limit (0: the file's)")
	fl.Uint64Var(&f.seed, "seed", 0, "seed of the sampled lengths (0: the file's)")
	fl.StringVar(&f.objective, "objective", "model-rates", "what the greedy step maximises per GPU: model-rates (Σ models' remaining FLOPs / time to finish) or stage-work (FLOPs finished within the stage / its duration, the paper read literally)")
	fl.StringVar(&f.balancer, "balancer", planner.DefaultBalancer, "how a plan's DP replicas share a model's requests, in the plan and under --run: "+strings.Join(cluster.Names(), ", ")+" (round-robin: in turn)")
	fl.StringVar(&f.search, "search", "refine", "refine (the greedy's stages improved by moves priced on the whole application) or paper (Algorithm 1 as published)")
	fl.IntVar(&f.reach, "refine-reach", 3, "with --search refine: how many models one move may change at once (1–3)")
	fl.Float64Var(&f.effort, "refine-effort", 1, "with --search refine: engine replays the refinement may add, as a multiple of the greedy's own (0: no cap)")
	fl.StringVar(&f.profiles, "write-profiles", "", "write every model's profile per tensor-parallel degree (derived ones with their assumptions in provenance) as MODEL-tpK.json into this directory")
	fl.BoolVar(&f.run, "run", false, "execute the plan on the CPU executor (the models' cpu_model shapes, dummy weights) with the dynamic scheduler, and report planned against actual")
	addPlanCPUFlags(fl, &f.cpu)
	return cmd
}

// simulator prices app's plans with the flags' balancer.
func (f planFlags) simulator(app *planner.App) (*planner.Simulator, error) {
	s := planner.NewSimulator(app)
	if err := s.UseBalancer(f.balancer); err != nil {
		return nil, usageError{"--balancer: " + err.Error()}
	}
	return s, nil
}

// plan is the search the flags chose.
func (f planFlags) plan(a *planner.App, s *planner.Simulator, gpus int, obj planner.Objective) (*planner.Schedule, error) {
	if f.search == "paper" {
		return planner.Search(a, s, gpus, obj)
	}
	return planner.Refine(a, s, gpus, obj, f.reach, f.effort)
}

// processCPU is the CPU time (user and system) this process has used: on
// a shared machine a search's wall time says as much about the other load
// as about the search.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func runPlan(cmd *cobra.Command, f planFlags) error {
	if f.app == "" {
		return usagef("--app is required: an application file such as examples/apps/ensembling.json")
	}
	if f.gpus <= 0 {
		return usagef("--gpus must be positive, got %d", f.gpus)
	}
	if f.requests < 0 || f.maxOutput < 0 {
		return usagef("--requests and --max-output must not be negative (got %d, %d)", f.requests, f.maxOutput)
	}
	obj, err := planner.ParseObjective(f.objective)
	if err != nil {
		return usageError{err.Error()}
	}
	if _, err := cluster.New(f.balancer, cluster.Options{}); err != nil {
		return usageError{"--balancer: " + err.Error()}
	}
	if f.search != "refine" && f.search != "paper" {
		return usagef("--search %q: valid are refine, paper", f.search)
	}
	if f.reach < 1 || f.reach > 3 || f.effort < 0 {
		return usagef("--refine-reach must be 1–3 and --refine-effort not negative (got %d, %g)", f.reach, f.effort)
	}
	if f.jsonOut != "" {
		if st, err := os.Stat(filepath.Dir(f.jsonOut)); err != nil || !st.IsDir() {
			return usagef("cannot write %s: directory %s does not exist", f.jsonOut, filepath.Dir(f.jsonOut))
		}
	}
	if f.profiles != "" {
		if st, err := os.Stat(f.profiles); err != nil || !st.IsDir() {
			return usagef("--write-profiles %s: not a directory", f.profiles)
		}
	}
	spec, dir, err := planner.ReadApp(f.app)
	if err != nil {
		return usageError{err.Error()}
	}
	for i := range spec.Models {
		m := &spec.Models[i]
		if f.requests > 0 && len(m.Inputs) == 0 {
			m.Requests = f.requests
		}
		if f.maxOutput > 0 {
			m.MaxOutput = f.maxOutput
		}
	}
	if f.seed != 0 {
		spec.Seed = f.seed
	}
	if f.run {
		return runPlanCPU(cmd, f, spec, dir, obj)
	}
	app, err := planner.BuildApp(spec, dir, spec.Seed)
	if err != nil {
		return usageError{err.Error()}
	}
	if err := planner.Check(app, f.gpus); err != nil {
		return usageError{err.Error()}
	}
	out := cmd.OutOrStdout()
	if f.profiles != "" {
		for _, m := range app.Models {
			for tp, p := range m.Profiles() {
				data, err := json.MarshalIndent(p, "", "  ")
				if err != nil {
					return err
				}
				if err := os.WriteFile(filepath.Join(f.profiles, fmt.Sprintf("%s-tp%d.json", m.Name, tp)), append(data, '\n'), 0o644); err != nil {
					return err
				}
			}
		}
	}
	fmt.Fprintf(out, "app %s: %d models, %d GPUs, objective %s, balancer %s\n", spec.Name, len(app.Models), f.gpus, obj, f.balancer)
	// Each method prices its stages with a simulator of its own, so that
	// its search time counts every simulation it needs (none reuses
	// another's).
	sims := 0
	busy := 0.0
	var reports []planner.ScheduleReport
	for _, method := range []func(*planner.App, *planner.Simulator, int) (*planner.Schedule, error){
		func(a *planner.App, s *planner.Simulator, g int) (*planner.Schedule, error) {
			return f.plan(a, s, g, obj)
		},
		planner.MaxHeuristic, planner.MinHeuristic,
	} {
		sim, err := f.simulator(app)
		if err != nil {
			return err
		}
		cpu0 := processCPU()
		sc, err := method(app, sim, f.gpus)
		if err != nil {
			return err
		}
		r := app.Report(sc)
		r.SearchCPUS = (processCPU() - cpu0).Seconds()
		reports = append(reports, r)
		sims += sim.Runs
		busy += sim.Busy.Seconds()
	}
	for _, r := range reports {
		fmt.Fprint(out, r)
	}
	fmt.Fprintf(out, "end to end: %s %.1f s; %s %.1f s (%.2fx); %s %.1f s (%.2fx); %d engine simulations in %.1f s of simulator time\n",
		reports[0].Method, reports[0].EndToEndS,
		reports[1].Method, reports[1].EndToEndS, reports[1].EndToEndS/reports[0].EndToEndS,
		reports[2].Method, reports[2].EndToEndS, reports[2].EndToEndS/reports[0].EndToEndS,
		sims, busy)
	if f.jsonOut != "" {
		data, err := json.MarshalIndent(map[string]any{"app": spec.Name, "gpus": f.gpus, "objective": obj.String(), "schedules": reports}, "", "  ")
		if err != nil {
			return err
		}
		if err := os.WriteFile(f.jsonOut, append(data, '\n'), 0o644); err != nil {
			return err
		}
	}
	return nil
}
