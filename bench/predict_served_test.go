package bench

import (
	"context"
	"fmt"
	"testing"

	"github.com/pitstop-llm/pitstop/bench/workload"
	"github.com/pitstop-llm/pitstop/engine/policy"
	"github.com/pitstop-llm/pitstop/engine/sim"
	"github.com/pitstop-llm/pitstop/predictor"
)

// recordingLength is a fixed length model that records the segments the
// run teaches it, with what was predicted for them.
type recordingLength struct {
	constLength
	learnt []predictor.TraceRecord
}

func (r *recordingLength) Learn(rec predictor.TraceRecord) { r.learnt = append(r.learnt, rec) }

// shellPrograms are n programs, one at a time (each arrives long after the
// last finished): a call that runs ls or cat, then answers briefly after
// ls and at length after cat. The tool the answer resumes after tells its
// length; nothing else the mixture sees does.
func shellPrograms(n int) *workload.Workload {
	w := &workload.Workload{Name: "shell", Timestamped: true}
	for i := range n {
		tool, answer := "ls", 3
		if i%2 == 0 {
			tool, answer = "cat", 40
		}
		w.Programs = append(w.Programs, workload.Program{ID: fmt.Sprintf("p%02d", i), Arrival: float64(100 * i),
			Calls: []workload.Call{{ID: "c", Thread: "main", NewTokens: 50, Segments: []workload.Segment{
				{Decode: 5, Tool: tool, ToolTime: 0.1, ToolReturn: 20}, {Decode: answer}}}}})
	}
	return w
}

// bench's serve predictor predicts through serve's own point step: its
// points are those predictor.ServedPoints (what eval --online replays, and
// what serve predicts: runtime's TestServePredictsWhatEvalReplays) gives
// on the same records, including where the window mode is chosen.
func TestServePredictorPredictsWhatServeDoes(t *testing.T) {
	const programs, median = 40, 50
	prof, cfg := smallProfile(t, 4096)
	pol, _ := policy.New("fcfs", policy.Options{})
	model := &recordingLength{constLength: 10}
	preds := &Predictors{Length: model, NewStep: func() predictor.ServedStep { return predictor.NewServedStep(median) }}
	run, err := Run(context.Background(), RunConfig{Workload: shellPrograms(programs), Engine: cfg, Executor: sim.NewExecutor(prof),
		Policy: pol, Name: "served", Duration: 100 * programs, Seed: 1, Predictors: preds})
	if err != nil {
		t.Fatal(err)
	}
	recs := model.learnt
	if len(recs) != 2*programs {
		t.Fatalf("%d segments learnt, want %d", len(recs), 2*programs)
	}
	pred := make([]int, len(recs))
	for i := range pred {
		pred[i] = 10
	}
	mixed, _, served := predictor.ServedPoints(pred, nil, predictor.DefaultOverflowTokens, recs, median)
	modeUsed := 0
	for i, r := range recs {
		if want := max(served[i], 1); r.PredictedTokens != want {
			t.Fatalf("record %d (%s segment %d): bench predicted %d, the replay %d", i, r.Program, r.Segment, r.PredictedTokens, want)
		}
		if served[i] != mixed[i] {
			modeUsed++
		}
	}
	if modeUsed == 0 {
		t.Fatal("the window mode was never chosen: the test does not reach the order-led step")
	}
	if run.Predictor == nil || run.Predictor.Segments != len(recs) || run.Predictor.ModeChosen < modeUsed {
		t.Fatalf("report's predictor section %+v, want %d segments, at least %d by the mode", run.Predictor, len(recs), modeUsed)
	}
}

// As serve has one point step per process, a cluster run has one per
// replica: each replica that predicts makes its own, and the report counts
// every segment predicted.
func TestServePredictorHasOneStepPerReplica(t *testing.T) {
	prof, _ := smallProfile(t, 256)
	cfg := clusterConfig(t, dagWorkload(), []*sim.Profile{prof, prof}, "plas", "round-robin", 2)
	made := 0
	cfg.Run.Predictors = &Predictors{Length: constLength(10), NewStep: func() predictor.ServedStep {
		made++
		return predictor.NewServedStep(50)
	}}
	run, err := RunCluster(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if made != 2 {
		t.Fatalf("%d point steps made for 2 replicas placed round-robin, want 2", made)
	}
	if run.Predictor == nil || run.Predictor.Segments == 0 {
		t.Fatalf("report's predictor section %+v, want the segments predicted", run.Predictor)
	}
}
