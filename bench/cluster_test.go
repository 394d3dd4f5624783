package bench

import (
	"context"
	"math"
	"slices"
	"testing"

	"github.com/pitstop-llm/pitstop/bench/report"
	"github.com/pitstop-llm/pitstop/bench/workload"
	"github.com/pitstop-llm/pitstop/cluster"
	"github.com/pitstop-llm/pitstop/engine"
	"github.com/pitstop-llm/pitstop/engine/policy"
	"github.com/pitstop-llm/pitstop/engine/sim"
	"github.com/pitstop-llm/pitstop/predictor"
)

func clusterConfig(t *testing.T, w *workload.Workload, profiles []*sim.Profile, pol, bal string, rate float64) ClusterConfig {
	t.Helper()
	b, err := cluster.New(bal, cluster.Options{})
	if err != nil {
		t.Fatal(err)
	}
	reps := ProfileReplicas(profiles, func() engine.Policy { p, _ := policy.New(pol, policy.Options{}); return p })
	cfg := ClusterConfig{Run: RunConfig{Workload: w, Name: pol, Rate: rate, Duration: 20, Seed: 3, CheckEvery: 1}, Replicas: reps, Balancer: b}
	return cfg
}

// One replica on the shared timeline replays as one engine does. Not to the
// iteration: one engine runs a timer set by a timer callback at its next
// iteration boundary (a program's first call starts one iteration after
// the program arrives), the shared timeline runs it at once.
func TestClusterOfOneMatchesOneEngine(t *testing.T) {
	w := dagWorkload()
	for _, blocks := range []int{64, 4096} {
		prof, ecfg := smallProfile(t, blocks)
		pol, _ := policy.New("pitstop", policy.Options{})
		single, err := Run(context.Background(), RunConfig{Workload: w, Engine: ecfg, Executor: sim.NewExecutor(prof),
			Policy: pol, Name: "pitstop", Rate: 2, Duration: 20, Seed: 3, CheckEvery: 1})
		if err != nil {
			t.Fatal(err)
		}
		cfg := clusterConfig(t, w, []*sim.Profile{prof}, "pitstop", "round-robin", 2)
		multi, err := RunCluster(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		if multi.Replicas != 1 || multi.Balancer != "round-robin" || len(multi.ReplicaUtil) != 1 {
			t.Fatalf("cluster fields %d %q %v", multi.Replicas, multi.Balancer, multi.ReplicaUtil)
		}
		near := func(a, b float64) bool { return math.Abs(a-b) <= 0.05*math.Max(math.Abs(a), math.Abs(b)) }
		if single.Completed != multi.Completed || single.TokensGenerated != multi.TokensGenerated ||
			!near(single.E2EMeanS, multi.E2EMeanS) || !near(single.VirtualS, multi.VirtualS) || !near(float64(single.Iterations), float64(multi.Iterations)) {
			t.Fatalf("%d blocks: one engine %+v\ncluster of one %+v", blocks, single, multi)
		}
	}
}

func TestClusterCompletesEveryCallWithEveryBalancer(t *testing.T) {
	w := dagWorkload()
	prof, _ := smallProfile(t, 128)
	for _, bal := range cluster.Names() {
		cfg := clusterConfig(t, w, []*sim.Profile{prof, prof, prof}, "plas", bal, 3)
		run, err := RunCluster(context.Background(), cfg)
		if err != nil {
			t.Fatalf("%s: %v", bal, err)
		}
		if run.Requests == 0 || run.Completed != run.Requests || run.LeakedBlocks != 0 || run.ProgramsCompleted != run.Programs {
			t.Fatalf("%s: %d of %d calls, %d of %d programs, %d leaked", bal, run.Completed, run.Requests, run.ProgramsCompleted, run.Programs, run.LeakedBlocks)
		}
		busy := 0
		for _, u := range run.ReplicaUtil {
			if u < 0 || u > 1 {
				t.Fatalf("%s: utilisation %v out of [0,1]", bal, run.ReplicaUtil)
			}
			if u > 0 {
				busy++
			}
		}
		if busy < 2 {
			t.Fatalf("%s: only %d of 3 replicas worked: %v", bal, busy, run.ReplicaUtil)
		}
		// The join and children continue their parent's context: a
		// balancer that keeps programs together hits the cache.
		if (bal == "prefix" || bal == "pitstop") && run.PrefixHitRate <= 0 {
			t.Fatalf("%s: prefix-hit rate %g", bal, run.PrefixHitRate)
		}
	}
}

// The sustained-rate search runs over replicas (RunTrial): an overloaded
// trial ends at its verdict on the shared timeline, and two replicas
// sustain more than one.
func TestSustainedSearchOverReplicas(t *testing.T) {
	w := dagWorkload()
	prof, ecfg := smallProfile(t, 256)
	rates := map[int]float64{}
	for _, n := range []int{1, 2} {
		s := tinySearch(t)
		s.Policies, s.Seeds, s.Resolution = []string{"plas/least-used"}, []int64{1}, 0.5
		s.NewRun = func(string, float64, int64) (RunConfig, error) {
			return RunConfig{Workload: w, Engine: ecfg, Name: "plas", CheckEvery: 1}, nil
		}
		s.RunTrial = func(ctx context.Context, series string, rc RunConfig) (report.Run, error) {
			if series != "plas/least-used" {
				t.Errorf("trial of series %q", series)
			}
			cfg := clusterConfig(t, w, slices.Repeat([]*sim.Profile{prof}, n), "plas", "least-used", rc.Rate)
			cfg.Run = rc
			return RunCluster(ctx, cfg)
		}
		res, err := s.Run(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		sd := res[0].Seeds[0]
		if !(sd.SustainedRate > 0) || !(sd.Unsustained > sd.SustainedRate) {
			t.Fatalf("%d replicas: sustained %g, unsustained %g", n, sd.SustainedRate, sd.Unsustained)
		}
		for _, tr := range sd.Trials {
			if tr.Run.Replicas != n {
				t.Fatalf("%d replicas: a trial ran on %d", n, tr.Run.Replicas)
			}
			if !tr.Sustained && tr.Run.Stopped() && tr.Run.StoppedAtS >= s.Rule.Window+s.Rule.Drain {
				t.Fatalf("%d replicas: overloaded trial at %g ran to %g s (%s); its verdict was known after the window", n, tr.Rate, tr.Run.StoppedAtS, tr.Reason)
			}
		}
		rates[n] = sd.SustainedRate
	}
	if !(rates[2] > 1.5*rates[1]) {
		t.Fatalf("sustained rate on 1 replica %g, on 2 %g: want near twice", rates[1], rates[2])
	}
}

// fixedLength predicts every segment at n tokens and records its inputs.
type fixedLength struct {
	n      int
	inputs []predictor.Input
}

func (f *fixedLength) PredictLength(in predictor.Input) (int, []float32) {
	f.inputs = append(f.inputs, in)
	return f.n, nil
}

// seenCalls records the calls a balancer is asked to place.
type seenCalls struct {
	cluster.RoundRobin
	calls []cluster.Call
}

func (b *seenCalls) Pick(c *cluster.Call, s *cluster.State) int {
	b.calls = append(b.calls, *c)
	return b.RoundRobin.Pick(c, s)
}

// With the run's predictors (bench --predictor serve, the default) the
// balancer sees what a router in front of serve would: the length model's
// forecast from the prompt, no oracle decode, tool time or program remainder.
func TestClusterBalancerSeesThePredictorsNotTheTruth(t *testing.T) {
	w := dagWorkload()
	prof, _ := smallProfile(t, 256)
	length := &fixedLength{n: 77}
	cfg := clusterConfig(t, w, []*sim.Profile{prof, prof}, "plas", "round-robin", 2)
	seen := &seenCalls{}
	cfg.Balancer = seen
	cfg.Run.Predictors = &Predictors{Length: length, Duration: predictor.NewDurationEstimator(predictor.DurationOptions{})}
	if _, err := RunCluster(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	if len(seen.calls) == 0 {
		t.Fatal("no call placed")
	}
	for _, c := range seen.calls {
		if c.PredictedDecode != 77 || c.PredictedToolS != 0 || c.ProgramRemaining != 0 {
			t.Fatalf("balancer saw %+v, want the model's 77 tokens and nothing of the truth", c)
		}
	}
	placed := 0
	for _, in := range length.inputs {
		for _, c := range seen.calls {
			if in.PromptTokens == c.PromptTokens {
				placed++
				break
			}
		}
	}
	if placed < len(seen.calls) {
		t.Fatalf("the model was asked about %d of %d placements' prompts", placed, len(seen.calls))
	}
	// The oracle (no predictors) gives the truth: some call decodes other than 77.
	cfg = clusterConfig(t, w, []*sim.Profile{prof, prof}, "plas", "round-robin", 2)
	oracle := &seenCalls{}
	cfg.Balancer = oracle
	if _, err := RunCluster(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(oracle.calls, func(c cluster.Call) bool { return c.PredictedDecode != 77 && c.ProgramRemaining > 0 }) {
		t.Fatal("oracle placements carry no truth")
	}
}

// The chat workload exercises both branches of Autellix's Algorithm 2: calls
// of at most 2,048 prompt tokens (least used) and longer ones (pinned).
// The shares are what docs/results-cluster.md reports (go test -v).
func TestChatCallsOnBothSidesOfAutellixCutOff(t *testing.T) {
	w, err := workload.Chat(1)
	if err != nil {
		t.Fatal(err)
	}
	calls, short, tokens, shortTokens, history := 0, 0, 0, 0, 0
	for _, p := range w.Programs {
		ctx := 0 // every chat call continues the previous one
		for _, c := range p.Calls {
			prompt := ctx + c.NewTokens
			calls++
			tokens += prompt
			history += ctx
			if prompt <= 2048 {
				short++
				shortTokens += prompt
			}
			ctx = prompt + c.Segments[0].Decode
		}
	}
	callShare, tokenShare := float64(short)/float64(calls), float64(shortTokens)/float64(tokens)
	t.Logf("chat (seed 1): %d calls, %.1f%% of them <= 2048 prompt tokens carrying %.1f%% of the prompt tokens; history is %.1f%% of prompt tokens",
		calls, 100*callShare, 100*tokenShare, 100*float64(history)/float64(tokens))
	if callShare < 0.2 || callShare > 0.8 || tokenShare >= callShare {
		t.Fatalf("short calls: %.2f of calls, %.2f of tokens: Algorithm 2's two branches are not both exercised", callShare, tokenShare)
	}
}

// On chat, whose programs are single-threaded, ATLAS is PLAS (NewATLAS's
// doc): the same cluster replay under either gives the same run, so the
// chat results of policy plas stand for atlas (docs/results-cluster.md).
func TestATLASIsPLASOnChatReplicas(t *testing.T) {
	w, err := workload.Chat(1)
	if err != nil {
		t.Fatal(err)
	}
	prof, err := sim.LoadProfile("a100-80g-llama3-8b")
	if err != nil {
		t.Fatal(err)
	}
	runs := map[string]report.Run{}
	for _, pol := range []string{"plas", "atlas"} {
		cfg := clusterConfig(t, w, []*sim.Profile{prof, prof}, pol, "autellix", 1)
		cfg.Run.Duration = 10
		run, err := RunCluster(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		runs[pol] = run
	}
	p, a := runs["plas"], runs["atlas"]
	if p.Completed == 0 || p.Completed != a.Completed || p.TokensGenerated != a.TokensGenerated || p.Iterations != a.Iterations ||
		p.E2EMeanS != a.E2EMeanS || p.E2EP99S != a.E2EP99S || p.PrefixHitRate != a.PrefixHitRate {
		t.Fatalf("plas %+v\natlas %+v", p, a)
	}
}
