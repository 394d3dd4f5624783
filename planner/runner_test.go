package planner

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/pitstop-llm/pitstop/engine"
)

// sleepExecutor takes a fixed wall time per iteration, like a device that
// is never faster or slower than that.
type sleepExecutor struct{ per time.Duration }

func (x sleepExecutor) Step(b *engine.Batch) (time.Duration, error) {
	time.Sleep(x.per)
	return x.per, nil
}

func sleepLoader(per map[string]time.Duration, load time.Duration) Loader {
	return func(m *Model, tp int) (engine.Executor, engine.Config, error) {
		time.Sleep(load)
		return sleepExecutor{per[m.Name]}, m.byTP[tp].profile.EngineConfig(), nil
	}
}

func TestRunnerRunsThePlanAndReplans(t *testing.T) {
	spec, dir := tinySpec(t)
	for i := range spec.Models {
		spec.Models[i].Profile = "flat-profile.json"
		spec.Models[i].WeightsBytes = 1e9
		spec.Models[i].LoadS = 0.02
		spec.Models[i].TP = []int{1}
		spec.Models[i].Requests /= 4
	}
	spec.Models[0].Requests = 40
	plannedApp, err := BuildApp(spec, dir, 1)
	if err != nil {
		t.Fatal(err)
	}
	plan, err := Search(plannedApp, NewSimulator(plannedApp), 2, ModelRates)
	if err != nil {
		t.Fatal(err)
	}
	actual, err := BuildApp(spec, dir, 2) // reality is another draw
	if err != nil {
		t.Fatal(err)
	}
	// a runs three times slower than planned: models finish out of order.
	per := map[string]time.Duration{"a": 3 * time.Millisecond, "b": time.Millisecond, "c": time.Millisecond}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	rep, err := NewRunner(actual, plan, 2, sleepLoader(per, 20*time.Millisecond)).Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Models) != 3 || rep.ActualS <= 0 || rep.PlannedS <= 0 {
		t.Fatalf("report %+v", rep)
	}
	launched := map[string]bool{}
	for _, l := range rep.Launches {
		launched[l.Model] = true
		if l.DP*l.TP > 2 {
			t.Fatalf("launch %+v above the 2-GPU budget", l)
		}
	}
	for _, m := range rep.Models {
		if !launched[m.Model] || m.ActualS <= 0 || m.ActualS > rep.ActualS {
			t.Fatalf("model %+v: not launched or finish outside the run", m)
		}
	}
	// c reads b: it cannot finish before b.
	fin := map[string]float64{}
	for _, m := range rep.Models {
		fin[m.Model] = m.ActualS
	}
	if fin["c"] < fin["b"] {
		t.Fatalf("c finished at %.3f s before its input b at %.3f s", fin["c"], fin["b"])
	}
	t.Logf("planned %.3f s, actual %.3f s, launches %+v", rep.PlannedS, rep.ActualS, rep.Launches)
}

// The dynamic scheduler re-plans at each finish: when a finishes, the next
// stage gives b two replicas (b is stopped and relaunched); when b is the
// one that finishes first instead, a keeps its GPU to the end (stage 1 was
// its last) and stage 2's plan for b is moot.
func TestRunnerFollowsFinishesNotThePlannedOrder(t *testing.T) {
	spec, dir := tinySpec(t)
	spec.Models = spec.Models[:2]
	for i := range spec.Models {
		spec.Models[i].Profile = "flat-profile.json"
		spec.Models[i].WeightsBytes = 1e9
		spec.Models[i].TP = []int{1}
		spec.Models[i].Requests = 30
	}
	a, err := BuildApp(spec, dir, 1)
	if err != nil {
		t.Fatal(err)
	}
	plan := &Schedule{Total: time.Second, Stages: []Stage{
		{Pairs: []Pair{{0, Plan{1, 1}}, {1, Plan{1, 1}}}, Finished: []int{0}},
		{Pairs: []Pair{{1, Plan{2, 1}}}, Finished: []int{1}},
	}}
	run := func(per map[string]time.Duration) *RunReport {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		rep, err := NewRunner(a, plan, 2, sleepLoader(per, 5*time.Millisecond)).Run(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return rep
	}
	launches := func(rep *RunReport) (out []Launch) {
		for _, l := range rep.Launches {
			l.AtS = 0
			out = append(out, l)
		}
		return out
	}
	// As planned: a first, then b relaunched on two replicas.
	rep := run(map[string]time.Duration{"a": 200 * time.Microsecond, "b": 5 * time.Millisecond})
	want := []Launch{{Model: "a", DP: 1, TP: 1, Stage: 1}, {Model: "b", DP: 1, TP: 1, Stage: 1}, {Model: "b", DP: 2, TP: 1, Stage: 2}}
	if got := launches(rep); !slices.Equal(got, want) {
		t.Fatalf("launches %+v, want %+v", got, want)
	}
	if rep.Models[1].Preempted != 1 {
		t.Fatalf("b preempted %d times, want once (for its new plan)", rep.Models[1].Preempted)
	}
	// Out of order: b first; a runs on to its end, nothing is relaunched.
	rep = run(map[string]time.Duration{"a": 5 * time.Millisecond, "b": 200 * time.Microsecond})
	want = want[:2]
	if got := launches(rep); !slices.Equal(got, want) {
		t.Fatalf("out of order: launches %+v, want %+v", got, want)
	}
	if rep.Models[0].ActualS < rep.Models[1].ActualS {
		t.Fatalf("a finished at %.3f s before b at %.3f s", rep.Models[0].ActualS, rep.Models[1].ActualS)
	}
}
