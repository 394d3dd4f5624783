package bench

import (
	"context"
	"testing"

	"github.com/pitstop-llm/pitstop/engine/policy"
	"github.com/pitstop-llm/pitstop/engine/sim"
	"github.com/pitstop-llm/pitstop/predictor"
)

// firstForecast runs dagWorkload with ps and returns the first forecast
// the policy saw.
func firstForecast(t *testing.T, ps *Predictors) spyForecast {
	t.Helper()
	prof, cfg := smallProfile(t, 4096)
	base, _ := policy.New("fcfs", policy.Options{})
	spy := &spyPolicy{Policy: base}
	if _, err := Run(context.Background(), RunConfig{Workload: dagWorkload(), Engine: cfg, Executor: sim.NewExecutor(prof),
		Policy: spy, Name: "spy", Rate: 1, Duration: 3, Seed: 1, Predictors: ps}); err != nil {
		t.Fatal(err)
	}
	if len(spy.seen) == 0 {
		t.Fatal("the policy saw no forecast")
	}
	f := spy.seen[0]
	return spyForecast{decode: f.Predicted.Decode, tool: f.Predicted.ToolTime, trueDecode: f.Truth.Decode,
		trueTool: f.Truth.ToolTime, hasTool: f.Truth.HasTool, dist: f.Dist != nil}
}

type spyForecast struct {
	decode, trueDecode int
	tool, trueTool     float64
	hasTool, dist      bool
}

// The ablations --predictor serve-length and serve-tool rely on this: a
// prediction Predictors has no predictor for stays at the truth.
func TestPredictorsKeepTheTruthOfWhatTheyDoNotPredict(t *testing.T) {
	toolOnly := firstForecast(t, &Predictors{Duration: predictor.NewDurationEstimator(predictor.DurationOptions{Fallback: 7})})
	if !toolOnly.hasTool {
		t.Fatal("the root call's first segment has no tool call: the test needs one")
	}
	if toolOnly.decode != toolOnly.trueDecode || toolOnly.dist {
		t.Fatalf("without a length model: decode %d (dist %v), want the truth %d and no distribution",
			toolOnly.decode, toolOnly.dist, toolOnly.trueDecode)
	}
	if toolOnly.tool != 7 || toolOnly.trueTool == 7 {
		t.Fatalf("without a length model: tool time %g (truth %g), want the estimator's fallback 7", toolOnly.tool, toolOnly.trueTool)
	}
	lengthOnly := firstForecast(t, &Predictors{Length: predictor.HistoryPredictor{Default: 42}})
	if lengthOnly.decode != 42 || lengthOnly.trueDecode == 42 {
		t.Fatalf("without duration statistics: decode %d (truth %d), want the history predictor's 42", lengthOnly.decode, lengthOnly.trueDecode)
	}
	if lengthOnly.tool != lengthOnly.trueTool {
		t.Fatalf("without duration statistics: tool time %g, want the truth %g", lengthOnly.tool, lengthOnly.trueTool)
	}
}
