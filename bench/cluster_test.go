package bench

import (
	"context"
	"math"
	"testing"

	"github.com/pitstop-llm/pitstop/bench/workload"
	"github.com/pitstop-llm/pitstop/cluster"
	"github.com/pitstop-llm/pitstop/engine"
	"github.com/pitstop-llm/pitstop/engine/policy"
	"github.com/pitstop-llm/pitstop/engine/sim"
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
