package predictor

import "testing"

func benchModel(b *testing.B) *Model {
	b.Helper()
	requireORT(b)
	m, err := LoadDefault()
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { m.Close() })
	return m
}

// One prediction at batch 1: featurize, ONNX Runtime run, softmax, argmax.
func BenchmarkPredictLengthBatch1(b *testing.B) {
	m := benchModel(b)
	in := sampleInput()
	b.ReportAllocs()
	for b.Loop() {
		m.PredictLength(in)
	}
}

// 64 predictions in one ONNX Runtime run; ns/op is for the whole batch.
func BenchmarkPredictBatch64(b *testing.B) {
	m := benchModel(b)
	ins := make([]Input, 64)
	for i, r := range toyRecords(64, 11) {
		ins[i] = r.Input
	}
	ins[0] = sampleInput()
	out := make([]int, len(ins))
	b.ReportAllocs()
	for b.Loop() {
		if err := m.PredictBatch(ins, out); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/64, "ns/prediction")
}

// The Go forward pass of the same model, for comparison.
func BenchmarkGoForward(b *testing.B) {
	info, err := ParseONNX(DefaultModelBytes())
	if err != nil {
		b.Fatal(err)
	}
	g := GoClassifier{MLP: info.MLP, OverflowTokens: info.OverflowTokens}
	in := sampleInput()
	b.ReportAllocs()
	for b.Loop() {
		g.PredictLength(in)
	}
}

// A shipped-model prediction blended with the program's evidence and mixed
// with it and the history baseline, as serve predicts a program's later
// segments (OrderScored over the model and its ProgramBlend).
func BenchmarkPredictLengthBlended(b *testing.B) {
	m := benchModel(b)
	in := sampleInput()
	var pb ProgramBlend
	mix := OrderScored(41)
	for i := range 5 {
		_, _, blended := mix.Predict(pb, 40, nil, 0)
		mix.Observe(pb, 40, blended, 30+10*i)
		pb = pb.Observe(40, 30+10*i, []string{"search", "book"}[i%2])
	}
	led := warmModeLed(in)
	b.ReportAllocs()
	for b.Loop() {
		n, probs := m.PredictLength(in)
		point, _, _ := mix.Predict(pb, n, probs, m.OverflowTokens())
		led.Predict(in, point)
	}
}

// warmModeLed is a ModeLed that has finished 500 segments of a few classes
// around in's.
func warmModeLed(in Input) *ModeLed {
	led := NewModeLed(41)
	for i := range 500 {
		x := in
		x.LastTool, x.LastToolClass = "bash", []string{"prog:cat", "prog:sed", "prog:python", "prog:ls"}[i%4]
		x.History.LastOutputTokens = float64(20 + i%200)
		_, mode := led.Predict(x, 40+i%13)
		led.Observe(x, 40+i%13, mode, 10+(i*37)%300)
	}
	return led
}

// What the window modes and the choice by order cost serve per segment:
// a prediction (after the mixture's) and a finished segment's booking,
// both on the serving path.
func BenchmarkModeLed(b *testing.B) {
	in := sampleInput()
	in.LastTool, in.LastToolClass = "bash", "prog:sed"
	b.Run("predict", func(b *testing.B) {
		led := warmModeLed(in)
		b.ReportAllocs()
		for b.Loop() {
			led.Predict(in, 40)
		}
	})
	b.Run("observe", func(b *testing.B) {
		led := warmModeLed(in)
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			led.Observe(in, 40+i%7, 38+i%5, 30+i%11)
			i++
		}
	})
}

// What a finished segment costs the mixture (serve books one per segment),
// by scoring: the order score pairs it with the orderWindow before it.
func BenchmarkExpertMixObserve(b *testing.B) {
	for _, c := range []struct {
		name string
		mix  *ExpertMix
	}{{"absolute", NewExpertMix(41)}, {"order", OrderScored(41)}} {
		b.Run(c.name, func(b *testing.B) {
			pb := ProgramBlend{}.Observe(40, 35, "search")
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				c.mix.Observe(pb, 40+i%7, 38+i%5, 30+i%11)
				i++
			}
		})
	}
}
