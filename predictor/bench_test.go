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

// A shipped-model prediction as serve predicts a program's later segments:
// the model, then its served step (ServedStep: blended with the program's
// evidence, mixed with it and the history baseline by order, the HitTrade
// and the window mode).
func BenchmarkPredictLengthBlended(b *testing.B) {
	m := benchModel(b)
	in := sampleInput()
	pb, step := warmServedStep(in)
	b.ReportAllocs()
	for b.Loop() {
		n, probs := m.PredictLength(in)
		step.Predict(pb, in, n, probs, m.OverflowTokens())
	}
}

// warmServedStep is a deployment's served step that has finished 500
// segments of a few classes around in's (the model's distribution a call
// of about 15 tokens or a reply of 40-149, so that the HitTrade has moves
// to score), and a program that has finished 5.
func warmServedStep(in Input) (ProgramBlend, ServedStep) {
	step := NewServedStep(41)
	var pb ProgramBlend
	dist := bimodalDist(0.45)
	for i := range 500 {
		x := in
		x.LastTool, x.LastToolClass = "bash", []string{"prog:cat", "prog:sed", "prog:python", "prog:ls"}[i%4]
		x.History.LastOutputTokens = float64(20 + i%200)
		p := step.Predict(pb, x, 40+i%13, dist, DefaultOverflowTokens)
		actual := 13 + i%4
		if i%3 == 0 {
			actual = 40 + (i*37)%110
		}
		pb = step.Observe(pb, x, p, actual, []string{"search", "book"}[i%2])
		if i%5 == 4 {
			pb = ProgramBlend{}
		}
	}
	return pb, step
}

// What the served step costs serve per segment after the length model: a
// prediction and a finished segment's booking, both on the serving path.
func BenchmarkServedStep(b *testing.B) {
	in := sampleInput()
	in.LastTool, in.LastToolClass = "bash", "prog:sed"
	dist := bimodalDist(0.45)
	b.Run("predict", func(b *testing.B) {
		pb, step := warmServedStep(in)
		b.ReportAllocs()
		for b.Loop() {
			step.Predict(pb, in, 40, dist, DefaultOverflowTokens)
		}
	})
	b.Run("observe", func(b *testing.B) {
		pb, step := warmServedStep(in)
		p := step.Predict(pb, in, 40, dist, DefaultOverflowTokens)
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			step.Observe(pb, in, p, 30+i%11, "search")
			i++
		}
	})
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
