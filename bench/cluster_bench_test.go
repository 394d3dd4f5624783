package bench

import (
	"context"
	"slices"
	"testing"

	"github.com/pitstop-llm/pitstop/bench/workload"
	"github.com/pitstop-llm/pitstop/cluster"
	"github.com/pitstop-llm/pitstop/engine"
	"github.com/pitstop-llm/pitstop/engine/policy"
	"github.com/pitstop-llm/pitstop/engine/sim"
)

// BenchmarkClusterChat replays 300 s of chat on 8 replicas of
// a100-80g-llama3-8b with the pitstop balancer: the replay speed of Show 4
// of issue 13 (docs/results-cluster.md), small enough to profile
// (go test -run XXX -bench ClusterChat -cpuprofile cpu.out ./bench/).
func BenchmarkClusterChat(b *testing.B) {
	w, err := workload.Chat(1)
	if err != nil {
		b.Fatal(err)
	}
	benchCluster(b, w, 8, func() cluster.Balancer { return cluster.NewPitstop() }, 3)
}

// BenchmarkClusterMCTS replays 300 s of mcts on 4 replicas of
// a100-80g-llama3-8b at 1 program/s with the autellix balancer: the
// 4-replica mcts trial of issue 13's sustained searches, the slowest replay
// there (an mcts program is 160 calls), cut to 300 s to profile
// (go test -run XXX -bench ClusterMCTS -cpuprofile cpu.out ./bench/).
func BenchmarkClusterMCTS(b *testing.B) {
	w, err := workload.MCTS(1)
	if err != nil {
		b.Fatal(err)
	}
	benchCluster(b, w, 4, func() cluster.Balancer { return cluster.NewAutellix(2048) }, 1)
}

// benchCluster replays 300 s of w at rate on n replicas of
// a100-80g-llama3-8b under plas, placed by a new balancer each replay.
func benchCluster(b *testing.B, w *workload.Workload, n int, balancer func() cluster.Balancer, rate float64) {
	prof, err := sim.LoadProfile("a100-80g-llama3-8b")
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		reps := ProfileReplicas(slices.Repeat([]*sim.Profile{prof}, n), func() engine.Policy {
			p, _ := policy.New("plas", policy.Options{})
			return p
		})
		run, err := RunCluster(context.Background(), ClusterConfig{Replicas: reps, Balancer: balancer(),
			Run: RunConfig{Workload: w, Name: "plas", Rate: rate, Duration: 300, Seed: 1}})
		if err != nil || run.Completed == 0 {
			b.Fatalf("%v (%d calls done)", err, run.Completed)
		}
	}
}
