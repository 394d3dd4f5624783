package predictor

import (
	"math"
	"testing"
)

// A class whose lengths cluster in a narrow window and spread elsewhere is
// predicted at the cluster (the mode), where the median of the same
// lengths would miss Acc-5; each class keeps its own window, and a class
// with too few segments backs off to a coarser one.
func TestWindowModesPredictTheDensestWindow(t *testing.T) {
	m := NewWindowModes()
	if _, ok := m.Predict(Input{}); ok {
		t.Fatal("a prediction before any segment finished")
	}
	afterGrep := Input{LastTool: "grep", History: History{Calls: 3, LastOutputTokens: 40}}
	afterTest := Input{LastTool: "pytest", History: History{Calls: 3, LastOutputTokens: 40}}
	// grep: 6 near 30, 5 spread over 200-600 (the median of all 11 is 32).
	for _, n := range []int{28, 29, 30, 31, 32, 33, 200, 300, 400, 500, 600} {
		m.Observe(afterGrep, n)
	}
	for range 9 {
		m.Observe(afterTest, 150)
	}
	if p, _ := m.Predict(afterGrep); p < 27 || p > 34 {
		t.Fatalf("after grep: %d, want the window around 28-33", p)
	}
	if p, _ := m.Predict(afterTest); p != 150 {
		t.Fatalf("after pytest: %d, want 150", p)
	}
	// A tool seen once backs off to the whole stream's window: 150 holds
	// 9 of the 21 lengths.
	m.Observe(Input{LastTool: "ls"}, 900)
	if p, _ := m.Predict(Input{LastTool: "ls"}); p != 150 {
		t.Fatalf("after ls (one segment): %d, want the stream's densest window 150", p)
	}
	recs := []TraceRecord{{PreToolOutputTokens: 10}, {PreToolOutputTokens: 12}, {PreToolOutputTokens: 100}}
	if _, got, _ := ServedPoints([]int{1, 1, 1}, nil, 0, recs, 50); got[0] != 50 || got[1] != 10 || got[2] != 12 {
		t.Fatalf("prequential replay %v, want [50 10 12] (fallback, the first length, then the window nearest the last one that reached the top)", got)
	}
}

// After a shell tool, the window is kept per argument class of the command
// whose result the segment reads: replies after cat and after sed differ,
// and a class with too few segments backs off to the tool's.
func TestWindowModesPerToolClass(t *testing.T) {
	m := NewWindowModes()
	in := func(class string) Input {
		return Input{LastTool: "bash", LastToolClass: class, LastMessage: "<returncode>0</returncode>", History: History{Calls: 2, LastOutputTokens: 60}}
	}
	for range 9 {
		m.Observe(in("prog:cat"), 200)
		m.Observe(in("prog:sed"), 40)
	}
	m.Observe(in("prog:ls"), 90)
	for _, c := range []struct {
		class string
		want  int
	}{{"prog:cat", 200}, {"prog:sed", 40}} {
		if p, _ := m.Predict(in(c.class)); p != c.want {
			t.Errorf("after %s: %d, want %d", c.class, p, c.want)
		}
	}
	// One segment after ls: the tool's window (cat and sed, 9 each: the
	// first to reach the top).
	if p, _ := m.Predict(in("prog:ls")); p != 200 {
		t.Errorf("after ls (one segment): %d, want the tool's densest window 200", p)
	}
}

func TestRankCorrelation(t *testing.T) {
	recs := []TraceRecord{{PreToolOutputTokens: 10}, {PreToolOutputTokens: 20}, {PreToolOutputTokens: 30}, {PreToolOutputTokens: 40}}
	for _, c := range []struct {
		pred []int
		want float64
	}{
		{[]int{1, 2, 3, 1000}, 1},
		{[]int{4, 3, 2, 1}, -1},
		{[]int{1, 1, 2, 2}, 2 / math.Sqrt(5)}, // ties share their mean rank
	} {
		if got := RankCorrelation(c.pred, recs); math.Abs(got-c.want) > 1e-9 {
			t.Errorf("%v: %v, want %v", c.pred, got, c.want)
		}
	}
	if !math.IsNaN(RankCorrelation([]int{1}, recs[:1])) {
		t.Error("one record: want NaN")
	}
}
