package predictor

import "math"

// BlendPriorTokens is the prior error, in tokens, that ProgramBlend gives
// both the model and the program's mean before it has scored them on the
// program's own segments. It sets how fast the blend trusts what it sees:
// with 10 tokens, one segment that the mean got right and the model missed
// by 30 tokens already moves the weight to the mean 10:1. Of 0, 10, 30 and
// 100, 10 gave the lowest MAE on the held-out programs of the training
// sources (docs/results-predictor.md).
const BlendPriorTokens = 10

// ProgramBlend is what a length prediction learns from one program's own
// finished segments: it combines the model's prediction for the next
// segment with the program's mean output so far, each weighted by the
// inverse of its squared error on the program's earlier segments
// (inverse-variance weighting), both errors starting from the prior
// BlendPriorTokens². On a source the model was trained on, the model's
// errors are the smaller and it keeps most of the weight; on one it never
// saw, a program whose outputs the model misses is predicted by its own mean
// after a segment or two. The model itself is not changed, and nothing is
// learnt across programs. The zero value is a program with no segments.
type ProgramBlend struct {
	Segments   int     // segments observed
	SumOutput  float64 // their output tokens
	ModelSqErr float64 // sum of the model's squared errors on segments 2..Segments
	MeanSqErr  float64 // the same for the program's mean so far
}

// Predict blends model, the model's prediction for the program's next
// segment, with the program's mean. Before the program's first segment, or
// when model < 0 (no prediction), it returns model.
func (b ProgramBlend) Predict(model int) int {
	if b.Segments == 0 || model < 0 {
		return model
	}
	c := float64(BlendPriorTokens * BlendPriorTokens)
	w := (b.MeanSqErr + c) / (b.ModelSqErr + b.MeanSqErr + 2*c)
	mean := b.SumOutput / float64(b.Segments)
	return int(math.Round(w*float64(model) + (1-w)*mean))
}

// Observe returns b after a segment of actual output tokens for which the
// model (unblended) predicted model.
func (b ProgramBlend) Observe(model, actual int) ProgramBlend {
	if b.Segments > 0 && model >= 0 {
		mean := b.SumOutput / float64(b.Segments)
		b.ModelSqErr += sq(float64(model - actual))
		b.MeanSqErr += sq(mean - float64(actual))
	}
	b.Segments++
	b.SumOutput += float64(actual)
	return b
}

func sq(x float64) float64 { return x * x }

// BlendByProgram applies ProgramBlend to model predictions pred of recs
// replayed in order: each record's prediction is blended with what its
// program's earlier records showed, then the record is observed. Programs
// are told apart by source and program id; a record with segment 0 starts
// its program afresh and a record without a program id is its own program.
func BlendByProgram(pred []int, recs []TraceRecord) []int {
	out := make([]int, len(pred))
	progs := map[string]ProgramBlend{}
	for i, r := range recs {
		if r.Program == "" {
			out[i] = pred[i]
			continue
		}
		key := r.Source + "\x00" + r.Program
		b := progs[key]
		if r.Segment == 0 {
			b = ProgramBlend{}
		}
		out[i] = b.Predict(pred[i])
		progs[key] = b.Observe(pred[i], r.PreToolOutputTokens)
	}
	return out
}
