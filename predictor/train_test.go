package predictor

import (
	"bytes"
	"image/png"
	"math"
	"path/filepath"
	"slices"
	"testing"
)

func TestBins(t *testing.T) {
	for tokens, bin := range map[int]int{-3: 0, 0: 0, 9: 0, 10: 1, 499: 49, 500: OverflowBin, 5000: OverflowBin} {
		if got := BinOf(tokens); got != bin {
			t.Errorf("BinOf(%d) = %d, want %d", tokens, got, bin)
		}
	}
	if BinTokens(0, 700) != 5 || BinTokens(49, 700) != 495 || BinTokens(OverflowBin, 700) != 700 {
		t.Fatal("BinTokens")
	}
}

func TestTrainDeterministicAndLearns(t *testing.T) {
	recs := toyRecords(300, 1)
	a, overA, err := TrainLengthModel(recs, TrainOptions{Hidden: 16, Epochs: 40, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	b, _, _ := TrainLengthModel(recs, TrainOptions{Hidden: 16, Epochs: 40, Seed: 3})
	if !slices.Equal(a.W1, b.W1) || !slices.Equal(a.W2, b.W2) {
		t.Fatal("same seed, different weights")
	}
	if overA < 800 || overA > 803 {
		t.Fatalf("overflow tokens %d, want the median of the 800–803 overflow records", overA)
	}
	test := toyRecords(200, 2)
	pred, _ := PredictAll(GoClassifier{MLP: a, OverflowTokens: overA}, test)
	rep, err := Evaluate(pred, test)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Acc5 < 0.95 {
		t.Fatalf("toy task: Acc-5 %.2f, want ≥ 0.95", rep.Acc5)
	}
}

func TestTrainErrors(t *testing.T) {
	if _, err := Train(nil, nil, FeatureDim, NumClasses, TrainOptions{}); err == nil {
		t.Error("no examples: no error")
	}
	x := [][]float32{make([]float32, 3)}
	if _, err := Train(x, []int{0, 1}, 3, 2, TrainOptions{}); err == nil {
		t.Error("label count mismatch: no error")
	}
	if _, err := Train(x, []int{5}, 3, 2, TrainOptions{}); err == nil {
		t.Error("class out of range: no error")
	}
	if _, err := Train(x, []int{0}, 4, 2, TrainOptions{}); err == nil {
		t.Error("wrong width: no error")
	}
	if _, err := MarshalONNX(NewMLP(10, 4, NumClasses, 1), 600, nil); err == nil {
		t.Error("export of a model with the wrong input width: no error")
	}
}

func TestSplitTraces(t *testing.T) {
	recs := toyRecords(500, 4)
	for i := range recs {
		recs[i].Program = string(rune('a' + i%50)) // 50 programs of 10 segments
	}
	train, test, err := SplitTraces(recs, 0.8, 1)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, r := range train {
		seen[r.Program] = true
	}
	for _, r := range test {
		if seen[r.Program] {
			t.Fatalf("program %s on both sides of the split", r.Program)
		}
	}
	if f := float64(len(train)) / float64(len(recs)); f < 0.6 || f > 0.95 {
		t.Fatalf("training fraction %.2f", f)
	}
	train2, _, _ := SplitTraces(recs, 0.8, 1)
	if len(train2) != len(train) {
		t.Fatal("split not deterministic")
	}
	if _, _, err := SplitTraces(recs, 1, 1); err == nil {
		t.Fatal("split 1: no error")
	}
	if _, _, err := SplitTraces(recs[:1], 0.5, 1); err == nil {
		t.Fatal("one record: no error")
	}
}

func TestEvaluate(t *testing.T) {
	recs := []TraceRecord{
		{PreToolOutputTokens: 12}, // bin 1
		{PreToolOutputTokens: 40}, // bin 4
		{PreToolOutputTokens: 40},
		{PreToolOutputTokens: 900}, // overflow
	}
	pred := []int{15, 45, 75, 700}
	r, err := Evaluate(pred, recs)
	if err != nil {
		t.Fatal(err)
	}
	// errors: 3, 5, 35, 200 tokens; 0, 0, 3, 0 bins.
	if r.Acc5 != 0.5 || r.Acc15 != 0.5 || r.MAETokens != 60.75 || r.MAEBins != 0.75 || r.BinAcc != 0.75 {
		t.Fatalf("%+v", r)
	}
	if r.PerBin[4].N != 2 || r.PerBin[4].Acc5 != 0.5 || r.Confusion[4][7] != 1 || r.Confusion[OverflowBin][OverflowBin] != 1 {
		t.Fatalf("per bin %+v", r.PerBin[4])
	}
	if _, err := Evaluate(pred[:1], recs); err == nil {
		t.Fatal("length mismatch: no error")
	}
	if _, err := Evaluate(nil, nil); err == nil {
		t.Fatal("no records: no error")
	}
	var buf bytes.Buffer
	r.WriteSummary(&buf, "x")
	r.WritePerBin(&buf)
	if buf.Len() == 0 {
		t.Fatal("no report text")
	}
	path := filepath.Join(t.TempDir(), "confusion.png")
	if err := r.WriteConfusionPNG(path); err != nil {
		t.Fatal(err)
	}
	var img bytes.Buffer
	if err := png.Encode(&img, r.ConfusionImage()); err != nil {
		t.Fatal(err)
	}
	if _, err := png.Decode(&img); err != nil {
		t.Fatal(err)
	}
	if err := r.WriteConfusionPNG(filepath.Join(t.TempDir(), "no", "dir.png")); err == nil {
		t.Fatal("unwritable plot path: no error")
	}
}

func TestSoftmaxArgmax(t *testing.T) {
	p := make([]float32, 3)
	Softmax([]float32{1000, 1000, -1000}, p)
	if math.Abs(float64(p[0])-0.5) > 1e-6 || p[2] != 0 {
		t.Fatalf("softmax %v", p)
	}
	if Argmax([]float32{1, 3, 3}) != 1 {
		t.Fatal("argmax tie")
	}
}

func TestLengthDistribution(t *testing.T) {
	probs := make([]float32, NumClasses)
	probs[2], probs[4], probs[OverflowBin] = 0.25, 0.5, 0.25
	for _, c := range []struct {
		q    float64
		want int
	}{{0.1, 24}, {0.25, 30}, {0.5, 45}, {0.74, 49}, {0.9, 700}} {
		if got := LengthQuantile(probs, c.q, 700); got != c.want {
			t.Errorf("quantile %v = %d, want %d", c.q, got, c.want)
		}
	}
	if e := ExpectedLength(probs, 700); math.Abs(e-(0.25*25+0.5*45+0.25*700)) > 1e-9 {
		t.Errorf("expected length %v", e)
	}
}
