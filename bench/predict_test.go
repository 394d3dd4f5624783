package bench

import (
	"context"
	"testing"

	"github.com/pitstop-llm/pitstop/engine"
	"github.com/pitstop-llm/pitstop/engine/policy"
	"github.com/pitstop-llm/pitstop/engine/sim"
	"github.com/pitstop-llm/pitstop/handling"
	"github.com/pitstop-llm/pitstop/predictor"
)

// spyPolicy records the forecasts a policy would see.
type spyPolicy struct {
	engine.Policy
	seen []engine.Forecast
}

func (p *spyPolicy) Priority(v *engine.View, s *engine.Sequence) engine.Priority {
	if s.Generated() == 0 && s.State() == engine.Waiting {
		p.seen = append(p.seen, s.Forecast())
	}
	return p.Policy.Priority(v, s)
}

func (p *spyPolicy) Handle(v *engine.View, s *engine.Sequence) handling.Kind {
	return p.Policy.Handle(v, s)
}

func TestPredictorsReplaceTheOracle(t *testing.T) {
	prof, cfg := smallProfile(t, 4096)
	base, _ := policy.New("fcfs", policy.Options{})
	spy := &spyPolicy{Policy: base}
	durations := predictor.NewDurationEstimator(predictor.DurationOptions{Fallback: 7})
	_, err := Run(context.Background(), RunConfig{Workload: dagWorkload(), Engine: cfg, Executor: sim.NewExecutor(prof),
		Policy: spy, Name: "spy", Rate: 1, Duration: 3, Seed: 1,
		Predictors: &Predictors{Length: predictor.HistoryPredictor{Default: 42}, Duration: durations}})
	if err != nil {
		t.Fatal(err)
	}
	if len(spy.seen) == 0 {
		t.Fatal("the policy saw no forecast")
	}
	first := spy.seen[0]
	if !first.HasTruth || first.Truth.Decode != 10 {
		t.Fatalf("truth of the root call's first segment = %+v, want 10 tokens", first.Truth)
	}
	if first.Predicted.Decode != 42 {
		t.Fatalf("predicted decode %d, want the history predictor's default 42", first.Predicted.Decode)
	}
	if first.Predicted.ToolTime != 7 {
		t.Fatalf("predicted tool time %g before any tool ran, want the estimator's fallback 7", first.Predicted.ToolTime)
	}
	if got := durations.PredictDuration("t"); got == 7 {
		t.Fatal("the duration statistics learnt nothing from the run's tool calls")
	}
}

// inputSpy records what a length predictor is asked.
type inputSpy struct{ ins []predictor.Input }

func (s *inputSpy) PredictLength(in predictor.Input) (int, []float32) {
	s.ins = append(s.ins, in)
	return 10, nil
}

// The length predictor never learns the tool a segment will call: every
// segment of a program is offered the same tools, whether it ends in a tool
// call or in the reply, and only the segment after a tool call sees it (as
// the last message's tool).
func TestPredictorsDoNotLeakTheSegmentsTool(t *testing.T) {
	prof, cfg := smallProfile(t, 4096)
	pol, _ := policy.New("fcfs", policy.Options{})
	spy := &inputSpy{}
	_, err := Run(context.Background(), RunConfig{Workload: dagWorkload(), Engine: cfg, Executor: sim.NewExecutor(prof),
		Policy: pol, Name: "spy", Rate: 1, Duration: 3, Seed: 1,
		Predictors: &Predictors{Length: spy}})
	if err != nil {
		t.Fatal(err)
	}
	if len(spy.ins) == 0 {
		t.Fatal("the length predictor was never asked")
	}
	afterTool := 0
	for _, in := range spy.ins {
		if len(in.ToolNames) != 1 || in.ToolNames[0] != "t" {
			t.Fatalf("offered tools %q, want the program's [t] for every segment", in.ToolNames)
		}
		if in.LastTool == "t" {
			afterTool++
		}
	}
	if afterTool == 0 {
		t.Fatal("no segment saw the tool whose result it resumes after")
	}
}

// learnSpy is an online length predictor that records what it learns.
type learnSpy struct {
	inputSpy
	learnt []predictor.TraceRecord
}

func (s *learnSpy) Learn(r predictor.TraceRecord) { s.learnt = append(s.learnt, r) }

// An online length predictor learns every finished segment, with the input
// it was asked about and the tokens the segment generated.
func TestPredictorsTeachAnOnlineLengthModel(t *testing.T) {
	prof, cfg := smallProfile(t, 4096)
	pol, _ := policy.New("fcfs", policy.Options{})
	spy := &learnSpy{}
	_, err := Run(context.Background(), RunConfig{Workload: dagWorkload(), Engine: cfg, Executor: sim.NewExecutor(prof),
		Policy: pol, Name: "spy", Rate: 1, Duration: 3, Seed: 1,
		Predictors: &Predictors{Length: spy}})
	if err != nil {
		t.Fatal(err)
	}
	// dagWorkload's program: root (10 + 10 tokens), a (20 + 20), b (5), join (8).
	want := map[int]int{10: 2, 20: 2, 5: 1, 8: 1}
	got := map[int]int{}
	for _, r := range spy.learnt {
		got[r.PreToolOutputTokens]++
		if r.Tool == "t" && r.Input.LastTool == "t" {
			t.Fatalf("a segment learnt with its own tool as the last message's: %+v", r)
		}
	}
	for n, c := range want {
		if got[n] < c || got[n]%c != 0 {
			t.Fatalf("learnt output lengths %v, want multiples of %v per program", got, want)
		}
	}
}

// probSpy predicts a fixed distribution.
type probSpy struct{}

func (probSpy) PredictLength(predictor.Input) (int, []float32) {
	p := make([]float32, predictor.NumClasses)
	p[1], p[3] = 0.5, 0.5
	return 20, p
}

// Policies see the length model's distribution and the tool duration's
// quantiles, not only the point predictions.
func TestPredictorsExposeDistributions(t *testing.T) {
	prof, cfg := smallProfile(t, 4096)
	base, _ := policy.New("fcfs", policy.Options{})
	spy := &spyPolicy{Policy: base}
	durations := predictor.NewDurationEstimator(predictor.DurationOptions{})
	for range 5 {
		durations.Observe("t", 2)
	}
	_, err := Run(context.Background(), RunConfig{Workload: dagWorkload(), Engine: cfg, Executor: sim.NewExecutor(prof),
		Policy: spy, Name: "spy", Rate: 1, Duration: 3, Seed: 1,
		Predictors: &Predictors{Length: probSpy{}, Duration: durations}})
	if err != nil {
		t.Fatal(err)
	}
	first := spy.seen[0]
	d := first.Dist
	if d == nil || len(d.LengthProbs) != predictor.NumClasses || d.LengthProbs[3] != 0.5 || d.LengthBinWidth != predictor.BinWidth {
		t.Fatalf("distribution %+v", d)
	}
	if len(d.ToolTimeQuantiles) != 2 || d.ToolTimeQuantiles[0] != 2 || d.ToolTimeLevels[0] != 0.5 {
		t.Fatalf("tool time quantiles %v at %v, want the median 2 s", d.ToolTimeQuantiles, d.ToolTimeLevels)
	}
}

// constLength predicts n tokens for every segment.
type constLength int

func (c constLength) PredictLength(predictor.Input) (int, []float32) { return int(c), nil }

// As in serve, a length predictor that misses a program's segments by far
// gives way to the program's own mean for its later calls
// (predictor.ProgramBlend).
func TestPredictorsBlendWithTheProgram(t *testing.T) {
	prof, cfg := smallProfile(t, 4096)
	base, _ := policy.New("fcfs", policy.Options{})
	spy := &spyPolicy{Policy: base}
	_, err := Run(context.Background(), RunConfig{Workload: dagWorkload(), Engine: cfg, Executor: sim.NewExecutor(prof),
		Policy: spy, Name: "spy", Rate: 1, Duration: 3, Seed: 1,
		Predictors: &Predictors{Length: constLength(500)}})
	if err != nil {
		t.Fatal(err)
	}
	if len(spy.seen) < 2 || spy.seen[0].Predicted.Decode != 500 {
		t.Fatalf("forecasts %+v: want the predictor's 500 for the program's first call", spy.seen)
	}
	low := 500
	for _, f := range spy.seen {
		low = min(low, f.Predicted.Decode)
	}
	if low > 100 {
		t.Fatalf("lowest forecast %d tokens: later calls of a program of ~10-token segments still predicted near 500", low)
	}
}
