package predictor

import (
	"math"
	"sync"
	"testing"
)

// On a stream where the model misses first segments by 60 tokens and the
// training median is right, the mixture moves first segments to history;
// on later segments, where the model alone is right and the program's mean
// far off, it moves them to the model.
func TestExpertMixLearnsWhichExpertPerClass(t *testing.T) {
	const median = 40
	x := NewExpertMix(median)
	// Before anything finished the cross-source prior holds: history ahead
	// of the model on a first segment (an even mix of the two would be 70).
	if n, _, _ := x.Predict(ProgramBlend{}, 100, nil, 0); n <= median || n >= 70 {
		t.Fatalf("before anything finished: %d, want between the median %d and the even mix 70", n, median)
	}
	later := ProgramBlend{}.Observe(100, 40, "")
	for range 400 {
		x.Observe(ProgramBlend{}, 100, 100, 40) // first segment: model 100, actual = the median
		x.Observe(later, 300, 170, 300+7)       // later: the model right, blend and mean (40) off
	}
	first, lw := x.Weights()
	if first[ExpertHistory] < 0.95 || lw[ExpertModel] < 0.95 {
		t.Fatalf("weights first %.3f, later %.3f: want history for first segments, the model for later", first, lw)
	}
	if n, _, _ := x.Predict(ProgramBlend{}, 100, nil, 0); n > 45 {
		t.Fatalf("first segment: %d, want near the median 40", n)
	}
	if n, _, _ := x.Predict(later, 300, nil, 0); n < 285 {
		t.Fatalf("later segment: %d, want near the model's 300", n)
	}
}

// A fresh mixture weighs its experts by what they scored on agents the
// model had not seen (crossSourcePrior): on first segments history ahead of
// the model, the blend (which is the model there) not counted twice; on
// later ones the blend, then history, then the model alone. Evidence from
// finished segments outweighs the prior: after first segments that the
// model predicts exactly and history misses, the model leads.
func TestExpertMixCrossSourcePrior(t *testing.T) {
	for _, x := range []*ExpertMix{NewExpertMix(40), OrderScored(40)} {
		first, later := x.Weights()
		if first[ExpertBlend] != 0 || !(first[ExpertHistory] > first[ExpertModel] && first[ExpertModel] > 0) {
			t.Fatalf("fresh, first segments: weights %.3f, want history > model > 0 and no blend", first)
		}
		if !(later[ExpertBlend] > later[ExpertHistory] && later[ExpertHistory] > later[ExpertModel] && later[ExpertModel] > 0) {
			t.Fatalf("fresh, later segments: weights %.3f, want blend > history > model > 0", later)
		}
		for i := range 200 {
			actual := 10 + 7*(i%9) // lengths that vary, so that pairs are ordered
			x.Observe(ProgramBlend{}, actual, actual, actual)
		}
		if first, _ = x.Weights(); first[ExpertModel] < 0.9 {
			t.Fatalf("after 200 first segments the model got exactly: weights %.3f, want the model's above 0.9", first)
		}
	}
}

// With distributions the mixture is a distribution that sums to one, and
// the experts that hold the weight keep their sharp prediction.
func TestExpertMixDistribution(t *testing.T) {
	x := NewExpertMix(40)
	b := ProgramBlend{}.Observe(125, 125, "t")
	for range 200 {
		x.Observe(b, 125, 125, 125)
	}
	probs := make([]float32, NumClasses)
	probs[BinOf(125)] = 1
	n, mixed, blended := x.Predict(b, 125, probs, 1000)
	if BinOf(n) != BinOf(125) || BinOf(blended) != BinOf(125) {
		t.Fatalf("model and blend exact so far: %d (blend %d), want bin %d", n, blended, BinOf(125))
	}
	var sum float64
	for _, p := range mixed {
		sum += float64(p)
	}
	if math.Abs(sum-1) > 1e-3 {
		t.Fatalf("mixture sums to %v", sum)
	}
	if probs[BinOf(125)] != 1 {
		t.Fatal("Predict changed the caller's distribution")
	}
}

// Without a training median, first segments mix the model and the blend
// only (which are the same there) until a first segment has finished; then
// history's point is the running median of the finished first segments.
// A nil mixture is the program blend.
func TestExpertMixWithoutMedianAndNil(t *testing.T) {
	x := NewExpertMix(-1)
	if n, _, _ := x.Predict(ProgramBlend{}, 100, nil, 0); n != 100 {
		t.Fatalf("no median, nothing finished: %d, want the model's 100", n)
	}
	if first, _ := x.Weights(); first[ExpertHistory] != 0 {
		t.Fatalf("no median: history weighs %v on first segments", first[ExpertHistory])
	}
	for range 100 {
		x.Observe(ProgramBlend{}, 100, 100, 5)
	}
	if first, _ := x.Weights(); first[ExpertHistory] < 0.9 {
		t.Fatalf("after 100 first segments of 5 tokens: history weighs %v, want most", first[ExpertHistory])
	}
	if n, _, _ := x.Predict(ProgramBlend{}, 100, nil, 0); n > 15 {
		t.Fatalf("first segment: %d, want near the finished first segments' 5", n)
	}
	var nilMix *ExpertMix
	nilMix.Observe(ProgramBlend{}, 1, 1, 2)
	b := ProgramBlend{}.Observe(20, 100, "")
	want, _ := b.Predict(20, nil, 0)
	if n, p, blended := nilMix.Predict(b, 20, nil, 0); n != want || p != nil || blended != want {
		t.Fatalf("nil mixture: %d %v %d, want the blend's %d", n, p, blended, want)
	}
}

// Serve predicts and learns from several goroutines (run with -race).
func TestExpertMixConcurrent(t *testing.T) {
	testExpertMixConcurrent(t, "absolute errors", NewExpertMix(40))
	testExpertMixConcurrent(t, "order errors", OrderScored(40))
}

func testExpertMixConcurrent(t *testing.T, scoring string, x *ExpertMix) {
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			var b ProgramBlend
			for i := range 200 {
				_, _, blended := x.Predict(b, 50+g+i%3, nil, 0)
				x.Observe(b, 50+g+i%3, blended, 60+i%3)
				b = b.Observe(50, 60+i%3, "t")
			}
		})
	}
	wg.Wait()
	if first, later := x.Weights(); first[0] == later[0] && first[0] == 1.0/3 {
		t.Fatalf("%s: nothing was learnt", scoring)
	}
}

// Where the expert with the lower absolute error orders segments worse, the
// two scorings part: first segments alternate between 30 and 50 tokens, the
// model says 60 more (in order, 60 off) and history the median 40 (10 off,
// every pair tied). NewExpertMix moves the weight to history, OrderScored
// to the model, and its prediction follows the model's order.
func TestExpertMixOrderScored(t *testing.T) {
	abs, ord := NewExpertMix(40), OrderScored(40)
	for i := range 200 {
		actual := 30 + 20*(i%2)
		for _, x := range []*ExpertMix{abs, ord} {
			x.Observe(ProgramBlend{}, actual+60, actual+60, actual)
		}
	}
	if a, _ := abs.Weights(); a[ExpertHistory] < 0.95 {
		t.Fatalf("absolute errors: history weighs %.3f, want most (10 tokens off against 60)", a[ExpertHistory])
	}
	o, _ := ord.Weights()
	if o[ExpertHistory] > 0.05 {
		t.Fatalf("order errors: history weighs %.3f, want little (every pair tied)", o[ExpertHistory])
	}
	short, _, _ := ord.Predict(ProgramBlend{}, 90, nil, 0)
	long, _, _ := ord.Predict(ProgramBlend{}, 110, nil, 0)
	if short >= long {
		t.Fatalf("order-scored predictions %d for the model's 90 and %d for its 110: want the model's order", short, long)
	}
	if n, _, _ := abs.Predict(ProgramBlend{}, 90, nil, 0); n > 45 {
		t.Fatalf("absolute-scored prediction %d, want near history's 40", n)
	}
}
