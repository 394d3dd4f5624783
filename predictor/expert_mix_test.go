package predictor

import (
	"math"
	"sync"
	"testing"
)

// On a stream where the model's side misses first segments by 60 tokens
// and the training median is right, the mixture moves first segments to
// the median, and leaves later segments, where the model is right, to the
// model.
func TestExpertMixLearnsWhichExpertPerClass(t *testing.T) {
	const median = 40
	x := NewExpertMix(median)
	if n, _ := x.Predict(ProgramBlend{}, 100, nil, 0); n != 70 {
		t.Fatalf("before anything finished: %d, want the even mix 70", n)
	}
	var later ProgramBlend
	later = later.Observe(100, 40, "")
	for range 200 {
		x.Observe(ProgramBlend{}, 100, 40) // first segment: model 100, actual = median
		x.Observe(later, 300, 300+7)       // later: model 300, history (40) far off
	}
	first, lw := x.Weights()
	if first > 0.05 || lw < 0.95 {
		t.Fatalf("weights first %.3f later %.3f, want the median for first segments, the model for later", first, lw)
	}
	if n, _ := x.Predict(ProgramBlend{}, 100, nil, 0); n > 45 {
		t.Fatalf("first segment: %d, want near the median 40", n)
	}
	if n, _ := x.Predict(later, 300, nil, 0); n < 285 {
		t.Fatalf("later segment: %d, want near the model's 300", n)
	}
}

// With distributions the mixture is a distribution that sums to one, and a
// model side that holds the weight keeps its sharp prediction.
func TestExpertMixDistribution(t *testing.T) {
	x := NewExpertMix(40)
	var b ProgramBlend
	b = b.Observe(125, 125, "t")
	for range 50 {
		x.Observe(b, 125, 125)
	}
	probs := make([]float32, NumClasses)
	probs[BinOf(125)] = 1
	n, mixed := x.Predict(b, 125, probs, 1000)
	if BinOf(n) != BinOf(125) {
		t.Fatalf("model exact so far: %d, want bin %d", n, BinOf(125))
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

// Without a training median, first segments are the model's alone; a nil
// mixture passes everything through.
func TestExpertMixWithoutMedianAndNil(t *testing.T) {
	x := NewExpertMix(-1)
	x.Observe(ProgramBlend{}, 100, 5)
	if n, _ := x.Predict(ProgramBlend{}, 100, nil, 0); n != 100 {
		t.Fatalf("no median: %d, want the model's 100", n)
	}
	var nilMix *ExpertMix
	nilMix.Observe(ProgramBlend{}, 1, 2)
	if n, p := nilMix.Predict(ProgramBlend{}, 77, nil, 0); n != 77 || p != nil {
		t.Fatalf("nil mixture: %d %v", n, p)
	}
}

// Serve predicts and learns from several goroutines (run with -race).
func TestExpertMixConcurrent(t *testing.T) {
	x := NewExpertMix(40)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			var b ProgramBlend
			for i := range 200 {
				x.Predict(b, 50+g, nil, 0)
				x.Observe(b, 50+g, 60)
				b = b.Observe(50, 60+i%3, "t")
			}
		})
	}
	wg.Wait()
	if first, later := x.Weights(); first == 0.5 && later == 0.5 {
		t.Fatal("nothing was learnt")
	}
}
