package planner

import (
	"context"
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
