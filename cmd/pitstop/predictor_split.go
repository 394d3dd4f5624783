package main

import "github.com/pitstop-llm/pitstop/bench"

// Ablations that split serve's prediction error between its two
// predictions (issue 21 Show 3): --predictor serve-length keeps serve's
// length predictions (the model learning online, serve's point step) and
// gives the policies the true tool times; --predictor serve-tool gives the
// true lengths (as the oracle: a point without a distribution) and keeps
// serve's online tool-duration statistics. Against serve and oracle they say
// how much of the gap between the two each prediction makes.
const (
	predictorServeLength = "serve-length"
	predictorServeTool   = "serve-tool"
)

// learnsOnline reports whether --predictor name's length model learns from
// the run's finished segments, as serve's does.
func learnsOnline(name string) bool {
	return name == "serve" || name == predictorServeLength || name == predictorServeTool
}

// splitPredictions drops from p the prediction that --predictor name takes
// from the truth (bench.Predictors leaves a field it has no predictor for at
// the truth); any other name leaves p as it is.
func splitPredictions(p *bench.Predictors, name string) *bench.Predictors {
	if p == nil {
		return nil
	}
	switch name {
	case predictorServeLength:
		p.Duration = nil
	case predictorServeTool:
		p.Length, p.NewStep = nil, nil
	}
	return p
}
