package planner

import (
	"strings"
	"testing"
	"time"

	"github.com/pitstop-llm/pitstop/engine/sim"
)

// The placer counts a round on its replica until it is done, so
// least-tokens sends the next call where the least work is in flight.
func TestPlacerCountsWorkUntilDone(t *testing.T) {
	p, err := newPlacer("least-tokens", 2)
	if err != nil {
		t.Fatal(err)
	}
	if got := p.place(0, 0, 100, 100); got != 0 {
		t.Fatalf("first call on replica %d, want 0", got)
	}
	if got := p.place(0, 1, 10, 10); got != 1 {
		t.Fatalf("second call on replica %d, want 1 (0 holds 200 tokens)", got)
	}
	if got := p.place(0, 2, 10, 10); got != 1 {
		t.Fatalf("third call on replica %d, want 1 (40 tokens against 200)", got)
	}
	p.done(0, 0, 100, 100, true)
	if got := p.place(time.Second, 3, 10, 10); got != 0 {
		t.Fatalf("after replica 0 finished, call on replica %d, want 0", got)
	}
	if _, err := newPlacer("random", 2); err == nil || !strings.Contains(err.Error(), "least-tokens") {
		t.Fatalf("unknown balancer: err = %v, want one naming the valid ones", err)
	}
}

// Round-robin on the shared timeline gives the old split's numbers
// exactly: replica j replays items j, j+DP, … on its own engine.
func TestRoundRobinReplaysTheOldSplit(t *testing.T) {
	a := ensemblingApp(t)
	for _, dp := range []int{2, 3} {
		for _, m := range a.Models[:2] {
			s := NewSimulator(a)
			s.direct = true
			if err := s.UseBalancer("round-robin"); err != nil {
				t.Fatal(err)
			}
			items := all(m)
			for k := range items {
				items[k].ready = time.Duration(k) * 7 * time.Millisecond // due in index order
			}
			p := Plan{DP: dp, TP: m.tps[0]}
			got, err := s.run(m, p, true, items)
			if err != nil {
				t.Fatal(err)
			}
			pp := m.byTP[p.TP]
			want := &runResult{items: items, done: make([][]time.Duration, len(items))}
			for rep := range dp {
				var idx []int
				for k := rep; k < len(items); k += dp {
					idx = append(idx, k)
				}
				if err := s.replay(m, s.engineConfig(m, pp.profile), sim.NewExecutor(pp.profile), pp.load, items, idx, want); err != nil {
					t.Fatal(err)
				}
			}
			for k := range items {
				if len(got.done[k]) != len(want.done[k]) {
					t.Fatalf("%s dp%d item %d: %d rounds, want %d", m.Name, dp, k, len(got.done[k]), len(want.done[k]))
				}
				for j := range got.done[k] {
					if got.done[k][j] != want.done[k][j] {
						t.Fatalf("%s dp%d item %d round %d: finished at %v, the old split at %v", m.Name, dp, k, j, got.done[k][j], want.done[k][j])
					}
				}
			}
		}
	}
}

// On a DP-2 stage whose requests alternate large and small, round-robin
// puts every large one on one replica; least-tokens spreads them and
// finishes no later.
func TestLeastTokensBalancesSkewedRequests(t *testing.T) {
	a := ensemblingApp(t)
	up := a.Models[0]
	up.reqs = nil
	for i := range 40 {
		out := 4
		if i%2 == 0 {
			out = 400
		}
		up.reqs = append(up.reqs, request{chunk: []int{10}, out: []int{out}})
	}
	end := map[string]time.Duration{}
	for _, b := range []string{"round-robin", "least-tokens"} {
		s := NewSimulator(a)
		s.direct = true
		if err := s.UseBalancer(b); err != nil {
			t.Fatal(err)
		}
		r, err := s.run(up, Plan{DP: 2, TP: up.tps[0]}, false, all(up))
		if err != nil {
			t.Fatal(err)
		}
		end[b] = r.end
	}
	if end["least-tokens"] > end["round-robin"] {
		t.Fatalf("least-tokens ends at %v, later than round-robin's %v", end["least-tokens"], end["round-robin"])
	}
	t.Logf("round-robin %v, least-tokens %v", end["round-robin"], end["least-tokens"])
}

func ensemblingApp(t *testing.T) *App {
	t.Helper()
	spec, dir, err := ReadApp("../examples/apps/ensembling.json")
	if err != nil {
		t.Fatal(err)
	}
	a, err := BuildApp(spec, dir, 1)
	if err != nil {
		t.Fatal(err)
	}
	return a
}
