package predictor

import (
	"math"
	"slices"
)

// DurationScore is how one duration predictor did on a replayed trace.
type DurationScore struct {
	Name string
	// N is the number of calls scored; Within2x of them were predicted
	// within a factor of 2 of their measured duration.
	N, Within2x int
	// MedianLogRatio is the median |ln(predicted/actual)| (durations floored
	// at 1 ms): 0.69 is a factor of 2.
	MedianLogRatio float64
}

// Within2xRate is Within2x / N (0 when nothing was scored).
func (s DurationScore) Within2xRate() float64 {
	if s.N == 0 {
		return 0
	}
	return float64(s.Within2x) / float64(s.N)
}

// DurationEval is EvalDurations' result.
type DurationEval struct {
	Calls   int // records with a tool and a duration
	Cold    int // of them, a tool's first call: nothing to predict from, not scored
	Tools   int
	Classes int // distinct (tool, ArgumentClass) pairs with a class
	Scores  []DurationScore
	// LongScores are the same predictors scored on the calls that took at
	// least LongCallSeconds: the ones that decide whether a paused
	// program's context is worth keeping.
	LongScores []DurationScore
}

// LongCallSeconds is the duration from which EvalDurations also scores a
// call among the long ones.
const LongCallSeconds = 1.0

// EvalDurations replays the records' tool calls in order, prequentially:
// each call is predicted by every predictor, then learnt by all of them. A
// tool's first call is not scored (no running median exists yet). The
// predictors are the baseline, a per-tool running median (exact,
// over all of the tool's earlier calls); the runtime's per-tool estimator
// (DurationEstimator.PredictDuration, the EWMA blended with the tool's
// prior until it has calls); ClassDurations, what serve uses (the median of
// the call's argument class while it beats the per-tool median on the tool's
// recent calls); and an exact per-class running median used whenever the
// class has a call: what the argument class alone knows, with no floor.
func EvalDurations(recs []TraceRecord) DurationEval {
	type scorer struct {
		name   string
		logs   []float64
		within int
	}
	names := []string{"per-tool running median", "per-tool estimator (EWMA + prior)",
		"per-argument-class estimator (serve)", "per-class running median, always"}
	scorers, long := make([]*scorer, len(names)), make([]*scorer, len(names))
	for i, n := range names {
		scorers[i], long[i] = &scorer{name: n}, &scorer{name: n}
	}
	perTool := NewDurationEstimator(DurationOptions{})
	classes := NewClassDurations(DurationOptions{})
	past := map[string][]float64{} // sorted durations by tool, and by tool NUL class
	var ev DurationEval
	for _, r := range recs {
		if r.Tool == "" || r.ToolDurationS == nil || !validSeconds(*r.ToolDurationS) {
			continue
		}
		actual := *r.ToolDurationS
		class := ArgumentClass(r.ToolArgs)
		ck := classKey(r.Tool, class)
		ev.Calls++
		if past[r.Tool] == nil {
			ev.Tools++
		}
		if class != "" && past[ck] == nil {
			ev.Classes++
		}
		if tool := past[r.Tool]; len(tool) == 0 {
			ev.Cold++
		} else {
			classMed := sortedMedian(tool)
			if cl := past[ck]; class != "" && len(cl) > 0 {
				classMed = sortedMedian(cl)
			}
			preds := []float64{sortedMedian(tool), perTool.PredictDuration(r.Tool), classes.Predict(r.Tool, r.ToolArgs), classMed}
			for i, p := range preds {
				l := logRatio(p, actual)
				for _, s := range []*scorer{scorers[i], long[i]} {
					if s == long[i] && actual < LongCallSeconds {
						continue
					}
					s.logs = append(s.logs, l)
					if l <= math.Ln2+1e-12 {
						s.within++
					}
				}
			}
		}
		perTool.Observe(r.Tool, actual)
		classes.Observe(r.Tool, r.ToolArgs, actual)
		past[r.Tool] = insertSorted(past[r.Tool], actual)
		if class != "" {
			past[ck] = insertSorted(past[ck], actual)
		}
	}
	score := func(s *scorer) DurationScore {
		ds := DurationScore{Name: s.name, N: len(s.logs), Within2x: s.within}
		if len(s.logs) > 0 {
			slices.Sort(s.logs)
			ds.MedianLogRatio = sortedMedian(s.logs)
		}
		return ds
	}
	for i := range scorers {
		ev.Scores = append(ev.Scores, score(scorers[i]))
		ev.LongScores = append(ev.LongScores, score(long[i]))
	}
	return ev
}

func insertSorted(xs []float64, x float64) []float64 {
	i, _ := slices.BinarySearch(xs, x)
	return slices.Insert(xs, i, x)
}

// sortedMedian is the median of sorted, non-empty xs.
func sortedMedian(xs []float64) float64 {
	n := len(xs)
	if n%2 == 1 {
		return xs[n/2]
	}
	return (xs[n/2-1] + xs[n/2]) / 2
}
