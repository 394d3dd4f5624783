package bench

import (
	"context"
	"testing"
	"time"

	"github.com/pitstop-llm/pitstop/bench/report"
	"github.com/pitstop-llm/pitstop/bench/workload"
	"github.com/pitstop-llm/pitstop/engine"
	"github.com/pitstop-llm/pitstop/engine/policy"
	"github.com/pitstop-llm/pitstop/engine/sim"
)

func smallProfile(t *testing.T, blocks int) (*sim.Profile, engine.Config) {
	t.Helper()
	p, err := sim.LoadProfile("a100-40g-gptj-6b")
	if err != nil {
		t.Fatal(err)
	}
	cp := *p
	cp.KVCapacityTokens = blocks * cp.BlockSize
	cp.HostCapacity = int64(blocks/2) * int64(cp.BlockBytes())
	return &cp, engine.Config{
		NumBlocks: cp.NumBlocks(), BlockSize: cp.BlockSize, HostBlocks: cp.HostBlocks(),
		MaxBatchedTokens: cp.MaxBatchedTokens, MaxSeqs: cp.MaxSeqs, Cost: cp.HandlingCost(), HostBlockBytes: cp.BlockBytes(),
	}
}

// dagWorkload: a root call, two parallel children continuing its context,
// and a join call after both.
func dagWorkload() *workload.Workload {
	seg := func(d int, tool float64) []workload.Segment {
		if tool == 0 {
			return []workload.Segment{{Decode: d}}
		}
		return []workload.Segment{{Decode: d, Tool: "t", ToolTime: tool, ToolReturn: 20}, {Decode: d}}
	}
	return &workload.Workload{Name: "dag", Programs: []workload.Program{{ID: "p", Calls: []workload.Call{
		{ID: "root", Thread: "t0", NewTokens: 100, Segments: seg(10, 0.5)},
		{ID: "a", Thread: "t1", Parents: []string{"root"}, ContinueParent: true, NewTokens: 30, Segments: seg(20, 1)},
		{ID: "b", Thread: "t2", Parents: []string{"root"}, ContinueParent: true, NewTokens: 30, Segments: seg(5, 0)},
		{ID: "join", Thread: "t0", Parents: []string{"a", "b"}, ContinueParent: true, ThinkTime: 0.2, NewTokens: 10, Segments: seg(8, 0)},
	}}}}
}

func TestRunCompletesEveryCallWithoutLeaks(t *testing.T) {
	w := dagWorkload()
	for _, name := range policy.Names() {
		for _, blocks := range []int{64, 4096} { // under memory pressure and without
			prof, cfg := smallProfile(t, blocks)
			pol, _ := policy.New(name, policy.Options{})
			run, err := Run(context.Background(), RunConfig{Workload: w, Engine: cfg, Executor: sim.NewExecutor(prof),
				Policy: pol, Name: name, Rate: 2, Duration: 20, Seed: 3, CheckEvery: 1})
			if err != nil {
				t.Fatalf("%s/%d blocks: %v", name, blocks, err)
			}
			if run.Requests == 0 || run.Completed != run.Requests || run.LeakedBlocks != 0 {
				t.Fatalf("%s/%d blocks: %d of %d completed, %d leaked", name, blocks, run.Completed, run.Requests, run.LeakedBlocks)
			}
			if run.ProgramsCompleted != run.Programs || run.Programs == 0 {
				t.Fatalf("%s: %d of %d programs completed", name, run.ProgramsCompleted, run.Programs)
			}
			// 4 calls per program, each segment's decode counted once.
			if want := int64(run.Programs) * (10 + 10 + 20 + 20 + 5 + 8); run.TokensGenerated != want {
				t.Fatalf("%s: %d tokens generated, want %d", name, run.TokensGenerated, want)
			}
		}
	}
}

// The prefix cache must turn a program's continued context into hits: with
// vllm-opt the children and the join re-prefill far fewer tokens than fcfs.
func TestPrefixSharingAcrossCalls(t *testing.T) {
	w := dagWorkload()
	prof, cfg := smallProfile(t, 4096)
	iters := map[string]int{}
	for _, name := range []string{"fcfs", "vllm-opt"} {
		pol, _ := policy.New(name, policy.Options{})
		run, err := Run(context.Background(), RunConfig{Workload: w, Engine: cfg, Executor: sim.NewExecutor(prof), Policy: pol, Name: name, Rate: 0.2, Duration: 30, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		iters[name] = run.Iterations
	}
	if iters["vllm-opt"] >= iters["fcfs"] {
		t.Fatalf("prefix caching did not save work: %v iterations", iters)
	}
}

func TestTimestampedArrivals(t *testing.T) {
	w := &workload.Workload{Name: "ts", Timestamped: true}
	for i, at := range []float64{0, 1, 2, 3, 10} {
		w.Programs = append(w.Programs, workload.Program{ID: string(rune('a' + i)), Arrival: at,
			Calls: []workload.Call{{ID: "c", NewTokens: 50, SharedPrefix: []uint64{7}, SharedPrefixBlock: 32, Segments: []workload.Segment{{Decode: 3}}}}})
	}
	prof, cfg := smallProfile(t, 1024)
	pol, _ := policy.New("vllm-opt", policy.Options{})
	run, err := Run(context.Background(), RunConfig{Workload: w, Engine: cfg, Executor: sim.NewExecutor(prof), Policy: pol, Name: "x", Duration: 5, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if run.Requests != 4 || run.Completed != 4 {
		t.Fatalf("%d requests, %d completed; want the 4 arrivals inside the 5 s window", run.Requests, run.Completed)
	}
}

func TestRunRejectsBadConfig(t *testing.T) {
	prof, cfg := smallProfile(t, 64)
	pol, _ := policy.New("fcfs", policy.Options{})
	for _, rc := range []RunConfig{
		{Workload: dagWorkload(), Rate: -1, Duration: 10},
		{Workload: dagWorkload(), Rate: 1, Duration: 0},
		{Workload: &workload.Workload{Name: "empty"}, Rate: 1, Duration: 10},
	} {
		rc.Engine, rc.Executor, rc.Policy = cfg, sim.NewExecutor(prof), pol
		if _, err := Run(context.Background(), rc); err == nil {
			t.Fatalf("config %+v was accepted", rc)
		}
	}
}

// On the real clock the run ends when the last program finishes.
func TestRunOnRealClockEnds(t *testing.T) {
	prof, cfg := smallProfile(t, 4096)
	pol, _ := policy.New("infercept", policy.Options{})
	w := dagWorkload()
	for i := range w.Programs[0].Calls { // keep wall time short: millisecond tools
		c := &w.Programs[0].Calls[i]
		c.ThinkTime = 0
		for j := range c.Segments {
			c.Segments[j].ToolTime /= 100
		}
	}
	run, err := Run(context.Background(), RunConfig{Workload: w, Engine: cfg, Executor: sim.NewExecutor(prof), Clock: engine.NewRealClock(),
		Policy: pol, Name: "real", Rate: 20, Duration: 0.2, Seed: 2})
	if err != nil {
		t.Fatal(err)
	}
	if run.Completed != run.Requests || run.Requests == 0 {
		t.Fatalf("%d of %d completed", run.Completed, run.Requests)
	}
}

// TestRunSLOAttainment: the run is judged against RunConfig's SLOs, and a
// call's tool pause does not count towards its TPOT (5 s at a tool over 19
// token gaps would be 0.26 s per token).
func TestRunSLOAttainment(t *testing.T) {
	w := &workload.Workload{Name: "tool", Programs: []workload.Program{{ID: "p", Calls: []workload.Call{
		{ID: "c", Thread: "t0", NewTokens: 50, Segments: []workload.Segment{{Decode: 10, Tool: "t", ToolTime: 5, ToolReturn: 10}, {Decode: 10}}},
	}}}}
	prof, cfg := smallProfile(t, 4096)
	for _, tc := range []struct {
		ttft, tpot float64
		want       float64
	}{{10, 0.1, 1}, {1e-6, 0.1, 0}, {10, 1e-6, 0}, {0, 0, 0}} {
		pol, _ := policy.New("fcfs", policy.Options{})
		run, err := Run(context.Background(), RunConfig{Workload: w, Engine: cfg, Executor: sim.NewExecutor(prof),
			Policy: pol, Name: "fcfs", Rate: 0.5, Duration: 20, Seed: 1, SLOTTFT: tc.ttft, SLOTPOT: tc.tpot})
		if err != nil {
			t.Fatal(err)
		}
		if run.Requests == 0 || run.SLOAttainment != tc.want || run.SLOTTFTS != tc.ttft {
			t.Errorf("SLO %g/%g: attainment %v of %d requests (SLO %g), want %v", tc.ttft, tc.tpot, run.SLOAttainment, run.Requests, run.SLOTTFTS, tc.want)
		}
	}
}

// A run past its load ends at StopAfter, marked stopped, with the calls
// still running not counted as leaks and the block invariants intact.
func TestRunStopAfterEndsACollapsedRun(t *testing.T) {
	prof, cfg := smallProfile(t, 64)
	pol, _ := policy.New("fcfs", policy.Options{})
	run, err := Run(context.Background(), RunConfig{Workload: dagWorkload(), Engine: cfg, Executor: sim.NewExecutor(prof),
		Policy: pol, Name: "fcfs", Rate: 200, Duration: 20, Seed: 3, StopAfter: 21 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if !run.Stopped() || run.StoppedAtS < 21 || run.StoppedAtS > 22 {
		t.Fatalf("stopped at %v s, want at 21 s", run.StoppedAtS)
	}
	if run.ProgramsCompleted >= run.Programs || run.LeakedBlocks != 0 {
		t.Fatalf("%d of %d programs completed, %d leaked; want a cut-short run without leaks", run.ProgramsCompleted, run.Programs, run.LeakedBlocks)
	}
	// A run that finishes before StopAfter is not marked.
	pol, _ = policy.New("fcfs", policy.Options{})
	run, err = Run(context.Background(), RunConfig{Workload: dagWorkload(), Engine: cfg, Executor: sim.NewExecutor(prof),
		Policy: pol, Name: "fcfs", Rate: 1, Duration: 20, Seed: 3, StopAfter: 1000 * time.Second})
	if err != nil || run.Stopped() || run.ProgramsCompleted != run.Programs {
		t.Fatalf("light load: err %v, stopped %v, %d of %d programs", err, run.Stopped(), run.ProgramsCompleted, run.Programs)
	}
}

// The driver names each call's position: the root first, the two children
// one parent's end releases together a burst, the join (released alone,
// after both) later.
func TestRunByPosition(t *testing.T) {
	prof, cfg := smallProfile(t, 4096)
	pol, _ := policy.New("fcfs", policy.Options{})
	run, err := Run(context.Background(), RunConfig{Workload: dagWorkload(), Engine: cfg, Executor: sim.NewExecutor(prof),
		Policy: pol, Name: "fcfs", Rate: 2, Duration: 20, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	n := run.Programs
	want := map[string]int{report.PosFirst: n, report.PosBurst: 2 * n, report.PosLater: n}
	for pos, calls := range want {
		if got := run.ByPosition[pos].Calls; got != calls {
			t.Errorf("%s: %d calls, want %d (%d programs)", pos, got, calls, n)
		}
	}
	if len(run.ByPosition) != len(want) || n == 0 {
		t.Errorf("positions %v, want exactly %v", run.ByPosition, want)
	}
}

// TestPrefillCounts checks the prefill and prompt counters against the
// prefix cache: without it every prompt token is prefilled once (plus
// recompute); with it the calls that continue a cached context prefill less
// than their prompts.
func TestPrefillCounts(t *testing.T) {
	w := dagWorkload()
	prof, cfg := smallProfile(t, 4096)
	for _, name := range []string{"fcfs", "vllm-opt"} {
		pol, _ := policy.New(name, policy.Options{})
		run, err := Run(context.Background(), RunConfig{Workload: w, Engine: cfg, Executor: sim.NewExecutor(prof), Policy: pol, Name: name, Rate: 0.2, Duration: 30, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		fresh := run.PrefillTokens - run.RecomputeTokens
		t.Logf("%s: prompt %d, prefill %d, recompute %d", name, run.PromptTokens, run.PrefillTokens, run.RecomputeTokens)
		if run.Completed != run.Requests || run.PromptTokens == 0 {
			t.Fatalf("%s: %d of %d calls done, prompt tokens %d", name, run.Completed, run.Requests, run.PromptTokens)
		}
		switch name {
		case "fcfs":
			if fresh != run.PromptTokens {
				t.Errorf("fcfs (no prefix cache): prefill %d - recompute %d != prompt tokens %d", run.PrefillTokens, run.RecomputeTokens, run.PromptTokens)
			}
		default:
			if fresh >= run.PromptTokens {
				t.Errorf("%s: prefix cache saved nothing: prefill %d - recompute %d >= prompt tokens %d", name, run.PrefillTokens, run.RecomputeTokens, run.PromptTokens)
			}
		}
	}
}
