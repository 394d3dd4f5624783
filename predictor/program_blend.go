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
// finished segments. The model's distribution for the next segment is mixed
// with a distribution around the program's mean output so far (Laplace,
// with the mean's own RMS error on the program as its spread), each weighted
// by the inverse of its squared error on the program's earlier segments
// (inverse-variance weighting), both errors starting from the prior
// BlendPriorTokens²; the point prediction is the mixture's median. On a
// source the model was trained on, its errors are the smaller and it keeps
// most of the weight (and its sharp predictions stay sharp: the median of a
// mixture in which a peaked model weighs more than half stays at its peak);
// on one it never saw, a program whose outputs the model misses is
// predicted by its own mean after a segment or two. The model is not
// changed, and nothing is learnt across programs. The zero value is a
// program with no segments.
type ProgramBlend struct {
	Segments   int     // segments observed
	SumOutput  float64 // their output tokens
	ModelSqErr float64 // sum of the model's squared errors on segments 2..Segments
	MeanSqErr  float64 // the same for the program's mean so far
}

// modelWeight is the weight of the model against the program's mean.
func (b ProgramBlend) modelWeight() float64 {
	c := float64(BlendPriorTokens * BlendPriorTokens)
	return (b.MeanSqErr + c) / (b.ModelSqErr + b.MeanSqErr + 2*c)
}

// Predict blends the model's prediction for the program's next segment
// (model tokens, the median of probs; probs may be nil) with the program's
// mean, and returns the blend and its distribution (a new slice; nil when
// probs is nil, and then the point is the weighted mean of the two points).
// Before the program's first segment, or when model < 0 (no prediction), it
// returns model and probs.
func (b ProgramBlend) Predict(model int, probs []float32, overflowTokens int) (int, []float32) {
	if b.Segments == 0 || model < 0 {
		return model, probs
	}
	w := b.modelWeight()
	mean := b.SumOutput / float64(b.Segments)
	if len(probs) != NumClasses {
		return int(math.Round(w*float64(model) + (1-w)*mean)), nil
	}
	// The mean's spread: its RMS error on this program so far (prior
	// BlendPriorTokens), as a Laplace scale (RMS = √2 · scale).
	scored := float64(b.Segments - 1)
	scale := math.Sqrt((b.MeanSqErr+BlendPriorTokens*BlendPriorTokens)/(scored+1)) / math.Sqrt2
	mixed := make([]float32, NumClasses)
	prev := 0.0 // the Laplace CDF at the bin's lower edge (mass below 0 goes to bin 0)
	for k := range mixed {
		cdf := 1.0
		if k < OverflowBin {
			cdf = laplaceCDF(float64((k+1)*BinWidth), mean, scale)
		}
		mixed[k] = float32(w*float64(probs[k]) + (1-w)*(cdf-prev))
		prev = cdf
	}
	return LengthQuantile(mixed, 0.5, overflowTokens), mixed
}

func laplaceCDF(x, mu, scale float64) float64 {
	if x < mu {
		return 0.5 * math.Exp((x-mu)/scale)
	}
	return 1 - 0.5*math.Exp(-(x-mu)/scale)
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

// ProgramBlends keeps a ProgramBlend per program of a replayed trace.
// Programs are told apart by source and program id; a record with segment 0
// starts its program afresh and a record without a program id is its own
// program.
type ProgramBlends map[string]ProgramBlend

func blendKey(r TraceRecord) string { return r.Source + "\x00" + r.Program }

// Predict blends the model's prediction for r (pred, with its distribution
// probs, which may be nil) with what r's program showed so far.
func (m ProgramBlends) Predict(r TraceRecord, pred int, probs []float32, overflowTokens int) int {
	if r.Program == "" || r.Segment == 0 {
		return pred
	}
	n, _ := m[blendKey(r)].Predict(pred, probs, overflowTokens)
	return n
}

// Observe books r's actual length, for which the model predicted pred.
func (m ProgramBlends) Observe(r TraceRecord, pred int) {
	if r.Program == "" {
		return
	}
	b := m[blendKey(r)]
	if r.Segment == 0 {
		b = ProgramBlend{}
	}
	m[blendKey(r)] = b.Observe(pred, r.PreToolOutputTokens)
}

// BlendByProgram applies ProgramBlend to model predictions pred (with
// their distributions probs, which may be nil or hold nil rows) of recs
// replayed in order (ProgramBlends): each record's prediction is blended
// with what its program's earlier records showed, then the record is
// observed.
func BlendByProgram(pred []int, probs [][]float32, overflowTokens int, recs []TraceRecord) []int {
	out := make([]int, len(pred))
	m := ProgramBlends{}
	for i, r := range recs {
		var p []float32
		if i < len(probs) {
			p = probs[i]
		}
		out[i] = m.Predict(r, pred[i], p, overflowTokens)
		m.Observe(r, pred[i])
	}
	return out
}
