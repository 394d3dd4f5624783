package main

import (
	"testing"

	"github.com/pitstop-llm/pitstop/predictor"
)

func TestSplitPredictionsDropsTheOneTakenFromTheTruth(t *testing.T) {
	for _, c := range []struct {
		name             string
		length, duration bool
	}{
		{"serve", true, true},
		{predictorServeLength, true, false},
		{predictorServeTool, false, true},
	} {
		p := splitPredictions(newPredictors(predictor.HistoryPredictor{Default: 50}, true), c.name)
		if p == nil {
			t.Fatalf("%s: no predictors", c.name)
		}
		if (p.Length != nil) != c.length || (p.Duration != nil) != c.duration {
			t.Errorf("%s: length model %v, duration statistics %v; want %v, %v",
				c.name, p.Length != nil, p.Duration != nil, c.length, c.duration)
		}
		if c.name == predictorServeTool && p.NewStep != nil {
			t.Errorf("%s: the point step is kept without a length model", c.name)
		}
	}
	if splitPredictions(nil, predictorServeTool) != nil {
		t.Error("the oracle (no predictors) gained some")
	}
}

func TestTheSplitPredictorsLearnOnlineAsServe(t *testing.T) {
	for name, want := range map[string]bool{"serve": true, predictorServeLength: true, predictorServeTool: true,
		"onnx": false, "history": false, "oracle": false} {
		if learnsOnline(name) != want {
			t.Errorf("learnsOnline(%q) = %v, want %v", name, !want, want)
		}
	}
}
