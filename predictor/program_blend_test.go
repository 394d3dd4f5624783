package predictor

import "testing"

func TestProgramBlendFollowsWhicheverPredictedTheProgram(t *testing.T) {
	// The model says 20 for every segment of a program that writes 100:
	// after two segments the mean (exact) outweighs the model.
	var b ProgramBlend
	if got := pt(b.Predict(20, nil, 0)); got != 20 {
		t.Fatalf("first segment: %d, want the model's 20", got)
	}
	for range 3 {
		b = b.Observe(20, 100, "")
	}
	if got := pt(b.Predict(20, nil, 0)); got < 95 {
		t.Fatalf("after 3 segments of 100 that the model called 20: %d, want ≥ 95", got)
	}
	// A program whose lengths alternate 10, 90 while the model gets each
	// exactly right: the mean (50) misses by 40 each time, so the model keeps
	// the weight.
	var a ProgramBlend
	for i := range 6 {
		n := 10 + 80*(i%2)
		a = a.Observe(n, n, "")
	}
	if got := pt(a.Predict(10, nil, 0)); got > 13 {
		t.Fatalf("model exact, mean off by 40: %d, want ≤ 13 (the model's 10)", got)
	}
	if got := pt(a.Predict(-1, nil, 0)); got != -1 {
		t.Fatalf("no model prediction: %d, want -1", got)
	}
}

func TestBlendByProgram(t *testing.T) {
	h := func(calls int) Input { return Input{History: History{Calls: calls}} }
	recs := []TraceRecord{
		{Source: "s", Program: "p", Segment: 0, PreToolOutputTokens: 100},
		{Source: "s", Program: "q", Segment: 0, PreToolOutputTokens: 7},
		{Source: "s", Program: "p", Segment: 1, Input: h(1), PreToolOutputTokens: 100},
		{Source: "s", Program: "p", Segment: 2, Input: h(2), PreToolOutputTokens: 100},
		{Source: "s", Program: "p", Segment: 3, Input: h(3), PreToolOutputTokens: 100},
		{Source: "s", Program: "p", Segment: 4, PreToolOutputTokens: 10},              // p's conversation restarts
		{Source: "s", Program: "p", Segment: 5, Input: h(1), PreToolOutputTokens: 10}, // and continues
		{Source: "s", Program: "p", Segment: 0, PreToolOutputTokens: 100},             // p starts again
		{Source: "s", PreToolOutputTokens: 100},                                       // no program
	}
	pred := []int{20, 20, 20, 20, 20, 20, 20, 20, 20}
	got := BlendByProgram(pred, nil, 0, recs, nil)
	if got[0] != 20 || got[1] != 20 || got[7] != 20 || got[8] != 20 {
		t.Fatalf("first segments and program-less records must keep the model's 20: %v", got)
	}
	if !(got[2] > 20 && got[2] < 100) {
		t.Fatalf("second segment of p: %d, want a blend of 20 and p's mean 100", got[2])
	}
	if got[4] < 95 {
		t.Fatalf("fourth segment of p: %d, want ≥ 95 (q's 7 must not count)", got[4])
	}
	if !Restarts(recs[5]) || Restarts(recs[4]) || Restarts(recs[0]) {
		t.Fatal("Restarts: want only the segment after p's first with an empty history")
	}
	if got[5] != 20 {
		t.Fatalf("p's restart: %d, want the model's 20 (a first segment: the 100s before it are another conversation's)", got[5])
	}
	if got[6] > 20 {
		t.Fatalf("segment after p's restart: %d, want a blend of 20 and the restart's 10 (the 100s before it must not count)", got[6])
	}
}

func pt(n int, _ []float32) int { return n }

// With distributions, a sharp model that predicted the program keeps its
// exact prediction (the mixture's median stays at its peak), and a model
// that missed gives way to the program's mean.
func TestProgramBlendMixesDistributions(t *testing.T) {
	peak := func(tokens int) []float32 {
		p := make([]float32, NumClasses)
		p[BinOf(tokens)] = 1
		return p
	}
	var good ProgramBlend
	for range 4 {
		good = good.Observe(45, 45+(good.Segments%2)*2, "")
	}
	n, dist := good.Predict(45, peak(45), 1000)
	if BinOf(n) != BinOf(45) || len(dist) != NumClasses {
		t.Fatalf("model right so far: %d, want bin %d kept", n, BinOf(45))
	}
	var sum float32
	for _, p := range dist {
		sum += p
	}
	if sum < 0.999 || sum > 1.001 {
		t.Fatalf("blended distribution sums to %v", sum)
	}
	var bad ProgramBlend
	for range 4 {
		bad = bad.Observe(45, 300, "")
	}
	if n, _ := bad.Predict(45, peak(45), 1000); n < 280 || n > 320 {
		t.Fatalf("model off by 255 tokens on every segment: %d, want near the mean 300", n)
	}
}

// A program whose replies after "search" are 200 tokens and after "book"
// 20: once each tool's reply was seen, the blend follows the mean after the
// same tool, where the program's mean (110) would miss both by 90.
func TestProgramBlendPerLastTool(t *testing.T) {
	var b ProgramBlend
	b = b.Observe(100, 50, "search") // the first segment, then the program calls search
	for range 3 {
		b = b.Observe(100, 200, "book") // after search: 200, then calls book
		b = b.Observe(100, 20, "search")
	}
	if b.LastTool != "search" {
		t.Fatalf("last tool %q, want search", b.LastTool)
	}
	if got := pt(b.Predict(100, nil, 0)); got < 180 {
		t.Fatalf("after search: %d, want near 200", got)
	}
	after := b.Observe(100, 200, "book")
	if got := pt(after.Predict(100, nil, 0)); got > 40 {
		t.Fatalf("after book: %d, want near 20", got)
	}
	// Observe returns a new value: the earlier copy still predicts after search.
	if got := pt(b.Predict(100, nil, 0)); got < 180 {
		t.Fatalf("earlier copy changed: %d", got)
	}
	// A tool never seen before in the program: the whole program's mean.
	unseen := after.Observe(100, 20, "refund")
	if got := pt(unseen.Predict(100, nil, 0)); got < 80 || got > 140 {
		t.Fatalf("after a new tool: %d, want near the program's blend", got)
	}
}
