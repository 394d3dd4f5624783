package predictor

import (
	"fmt"
	"math"
	"testing"
)

func shellCall(prog string, secs float64) TraceRecord {
	return TraceRecord{Tool: "shell", ToolArgs: fmt.Sprintf(`{"command":"%s x"}`, prog), ToolDurationS: &secs}
}

// Where the program decides the duration (make 60 s, ls 10 ms, alternating),
// a per-tool median is never within 2x of either, and the per-class
// estimators are once they have seen the class (the serve estimator after
// the classWindow/5 scored calls it needs to adopt the class).
func TestEvalDurationsArgumentClassesBeatThePerToolMedian(t *testing.T) {
	var recs []TraceRecord
	for i := range 100 {
		if i%2 == 0 {
			recs = append(recs, shellCall("make", 60))
		} else {
			recs = append(recs, shellCall("ls", 0.01))
		}
	}
	recs = append(recs, TraceRecord{Tool: "search"}) // no duration: not a call to score
	ev := EvalDurations(recs)
	if ev.Calls != 100 || ev.Cold != 1 || ev.Tools != 1 || ev.Classes != 2 {
		t.Fatalf("calls %d cold %d tools %d classes %d, want 100 1 1 2", ev.Calls, ev.Cold, ev.Tools, ev.Classes)
	}
	byName := map[string]DurationScore{}
	for _, s := range ev.Scores {
		if s.N != 99 {
			t.Errorf("%s scored %d calls, want 99", s.Name, s.N)
		}
		byName[s.Name] = s
	}
	// The per-tool median sits at one class until the other has as many
	// calls: it is right only when it equals the call's class exactly
	// (with an even count it is their mean, 30 s, wrong for both).
	if s := byName["per-tool running median"]; s.Within2xRate() > 0.5 || s.MedianLogRatio < math.Ln2 {
		t.Errorf("per-tool median: %+v, want at most half within 2x", s)
	}
	// The always-class median misses only ls's first call (predicted by the
	// per-tool median: make's 60 s).
	if s := byName["per-class running median, always"]; s.Within2x != 98 {
		t.Errorf("per-class median: %+v, want 98 of 99 within 2x", s)
	}
	if s := byName["per-argument-class estimator (serve)"]; s.Within2xRate() < 0.8 || s.MedianLogRatio > 0.01 {
		t.Errorf("serve's class estimator: %+v, want >= 80%% within 2x", s)
	}
	// The long calls are make's 49 scored ones, each predicted at 60 s by
	// its class.
	for _, s := range ev.LongScores {
		if s.N != 49 || s.Name == "per-class running median, always" && (s.Within2x != 49 || s.MedianLogRatio != 0) {
			t.Errorf("long calls: %+v, want 49 scored (all within 2x for the class median)", s)
		}
	}
}

// One program with steady durations: every predictor is within 2x; the
// rate is counted exactly.
func TestEvalDurationsSteadyTool(t *testing.T) {
	var recs []TraceRecord
	for i := range 20 {
		recs = append(recs, shellCall("pytest", 1+0.1*float64(i%3)))
	}
	for _, s := range EvalDurations(recs).Scores {
		if s.N != 19 || s.Within2x != 19 || s.Within2xRate() != 1 {
			t.Errorf("%+v, want 19 of 19 within 2x", s)
		}
	}
	if (DurationScore{}).Within2xRate() != 0 {
		t.Error("empty score's rate is not 0")
	}
}
