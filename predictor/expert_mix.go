package predictor

import (
	"math"
	"strconv"
	"sync"
)

// ExpertMixRate sets how fast ExpertMix moves its weight to the expert
// with the lower error: the weight of the model's side is the logistic of
// ExpertMixRate × (history's summed absolute error − the model's) / their
// mean error per segment. At 0.1, an expert that is 10% better per segment
// holds 73% of the weight after 100 segments. Chosen from 0.1, 0.3, 1, 3
// and 10 by the mean ratio to the history baseline's MAE over the held-out
// programs and the leave-one-source-out streams of the training sources
// (the values differ by under 0.2%; docs/results-predictor.md).
const ExpertMixRate = 0.1

// ExpertMix is what a deployment learns across programs about its length
// predictions: how the model's prediction (blended with the program,
// ProgramBlend) compares with the history baseline (the program's mean
// output so far; for a program's first segment the model's training median).
// Each prediction mixes the two distributions (history's a Laplace around
// its point, scaled by its mean absolute error), weighted by their absolute
// errors on the segments the deployment has finished, kept apart for
// programs' first segments and for later ones: on an agent the model never
// saw, a first segment is often better guessed by the median than by the
// model, and the mixture learns it from the programs that came before.
// Before any segment has finished the two weigh the same.
//
// Why by hand: this is two running sums per class and a logistic weight
// (exponentially weighted averaging of two experts); a library would add a
// dependency for a dozen lines. Safe for concurrent use; a nil *ExpertMix
// passes predictions through.
type ExpertMix struct {
	firstTokens int // history's point for a first segment; < 0: first segments are not mixed

	mu   sync.Mutex
	loss [2][2]float64 // per class (first segment, later): summed absolute errors of [model side, history]
	n    [2]int
}

// NewExpertMix starts a mixture that knows nothing yet. firstTokens is the
// history baseline's prediction for a program's first segment (the model's
// training median, TrainMedian); < 0 leaves first segments to the model.
func NewExpertMix(firstTokens int) *ExpertMix { return &ExpertMix{firstTokens: firstTokens} }

// MetaTrainMedian is the length model's metadata key for the median output
// length of its training records (pitstop predictor train writes it).
const MetaTrainMedian = "pitstop.train.median_tokens"

// TrainMedian is the training median in info's metadata, or -1.
func TrainMedian(info *ModelInfo) int {
	if info == nil {
		return -1
	}
	if m, err := strconv.Atoi(info.Metadata[MetaTrainMedian]); err == nil && m >= 0 {
		return m
	}
	return -1
}

// history is the history baseline's point for the next segment of a
// program that b describes, its class, and whether there is one.
func (x *ExpertMix) history(b ProgramBlend) (int, int, bool) {
	if b.Segments == 0 {
		return x.firstTokens, 0, x.firstTokens >= 0
	}
	return int(math.Round(b.Mean())), 1, true
}

// Predict mixes the program-blended prediction (tokens, with distribution
// probs, nil when the predictor has none) for the next segment of the
// program b describes with the history baseline, and returns the mixture's
// median and distribution (a new slice; nil when probs is nil, and then the
// point is the weighted mean).
func (x *ExpertMix) Predict(b ProgramBlend, tokens int, probs []float32, overflowTokens int) (int, []float32) {
	if x == nil || tokens < 0 {
		return tokens, probs
	}
	h, k, ok := x.history(b)
	if !ok {
		return tokens, probs
	}
	x.mu.Lock()
	w, scale := x.weight(k)
	x.mu.Unlock()
	if len(probs) != NumClasses {
		return int(math.Round(w*float64(tokens) + (1-w)*float64(h))), nil
	}
	lap := laplaceBins(float64(h), scale)
	mixed := make([]float32, NumClasses)
	for i := range mixed {
		mixed[i] = float32(w*float64(probs[i]) + (1-w)*float64(lap[i]))
	}
	return LengthQuantile(mixed, 0.5, overflowTokens), mixed
}

// Observe books a finished segment of actual tokens of the program b
// described before it (not yet observed by b), for which the model side
// predicted tokens (blended with the program, before the mixture).
func (x *ExpertMix) Observe(b ProgramBlend, tokens, actual int) {
	if x == nil || tokens < 0 {
		return
	}
	h, k, ok := x.history(b)
	if !ok {
		return
	}
	x.mu.Lock()
	x.loss[k][0] += math.Abs(float64(tokens - actual))
	x.loss[k][1] += math.Abs(float64(h - actual))
	x.n[k]++
	x.mu.Unlock()
}

// weight is the model side's weight in class k and the Laplace scale of
// history's distribution (its mean absolute error; BlendPriorTokens before
// any segment). x.mu is held.
func (x *ExpertMix) weight(k int) (w, scale float64) {
	w, scale = 0.5, float64(BlendPriorTokens)
	if n := float64(x.n[k]); n > 0 {
		lm, lh := x.loss[k][0], x.loss[k][1]
		if avg := (lm + lh) / 2 / n; avg > 0 {
			w = 1 / (1 + math.Exp(-ExpertMixRate*(lh-lm)/avg))
		}
		scale = max(lh/n, 1)
	}
	return w, scale
}

// Weights are the model side's current weights for programs' first
// segments and for later ones (0.5 before any was observed).
func (x *ExpertMix) Weights() (first, later float64) {
	x.mu.Lock()
	defer x.mu.Unlock()
	first, _ = x.weight(0)
	later, _ = x.weight(1)
	return first, later
}
