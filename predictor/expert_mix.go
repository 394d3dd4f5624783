package predictor

import (
	"math"
	"strconv"
	"sync"
)

// ExpertMixRate sets how fast ExpertMix moves weight to the experts with
// the lower error: each expert weighs exp(−ExpertMixRate × (its summed
// absolute error − the lowest) / the experts' mean error per segment). At
// 0.03, an expert 10% worse per segment than the best keeps half its weight
// after about 230 segments. Chosen from 0.01, 0.03, 0.05, 0.1, 0.3 and 1 by
// the mean ratio to the history baseline's MAE over the held-out programs
// and the leave-one-source-out streams of the training sources
// (docs/results-predictor.md).
const ExpertMixRate = 0.03

// A fresh mixture does not weigh its experts evenly: it starts from what
// they scored on agents the model had not seen, as if it had already
// scored that many segments with those errors (crossSourcePrior). Evidence
// from the deployment's own finished segments adds to it and soon outweighs
// it on a long stream; on a short one (a few programs) the prior decides.
// An even prior trusted the model 2:1 on first segments (the blend is the
// model there) and lost to the history baseline on a short unseen stream
// (ToolBench, 13 programs).
//
// crossSourcePrior is each expert's MAE relative to the experts' mean, per
// class (first segments, later ones), averaged over the two
// leave-one-source-out streams of the shipped model's training sources
// (the model trained on infercept+bfcl replayed over tau, and the one
// trained on tau over infercept+bfcl; `pitstop predictor eval` prints the
// "experts" line it comes from). The prior's segments were chosen by the
// mean MAE ratio to the history baseline on those two streams cut into
// deployments of 13 programs (a fresh mixture each), among the values that
// cost no held-out set of the training sources 1 token of MAE or 0.01 of
// rank correlation (docs/results-predictor.md, session 10).
func crossSourcePrior(k int) (expertPriorSegments float64, relErr [numExperts]float64) {
	if k == 0 { // first segments
		return 300, [numExperts]float64{1.036, 1.036, 0.929}
	}
	return 30, [numExperts]float64{1.279, 0.821, 0.900}
}

// The experts of an ExpertMix.
const (
	ExpertModel   = iota // the length model alone
	ExpertBlend          // the model blended with the program (ProgramBlend)
	ExpertHistory        // the program's mean so far; a first segment: the training median
	numExperts
)

// ExpertNames name the experts, in order.
var ExpertNames = [numExperts]string{"model", "blend", "history"}

// ExpertMix is what a deployment learns across programs about its length
// predictions: how the model alone, the model blended with its program
// (ProgramBlend) and the history baseline (the program's mean output so
// far; for a program's first segment the running median of the first
// segments the deployment has finished, the model's training median before
// any) compare.
// Each prediction mixes their distributions (history's a Laplace around its
// point, scaled by its mean absolute error), weighted by their absolute
// errors on the segments the deployment has finished, kept apart for
// programs' first segments and for later ones: on an agent the model never
// saw, a first segment is often better guessed by the median than by the
// model, and the program's own mean may beat both later on; on one it knows,
// the model alone may beat its blend. Before any segment has finished they
// weigh what they scored on agents the model had not seen (crossSourcePrior);
// on a first segment the blend is the model and is not counted twice.
//
// Absolute errors choose the expert with the lowest MAE, which is not the
// one that ranks segments best: on infercept-multi the model alone has the
// lower MAE for most of a run but orders concurrent segments worse than its
// blend (docs/results-predictor.md, 2026-11-27), and a scheduler ranks.
// OrderScored weighs the experts by the order they got wrong instead; serve
// and bench predict with it (ServedMix: read at the model's shown spread),
// eval reports both.
//
// Why by hand: exponentially weighted averaging of three experts is a few
// running sums and exponentials; a library would add a dependency for a
// dozen lines. Safe for concurrent use; a nil *ExpertMix predicts with the
// program blend alone.
type ExpertMix struct {
	firstTokens int // history's point for a first segment before any finished; < 0: none

	byOrder bool // weigh by order errors (OrderScored), not absolute errors
	spread  bool // the point reads the model at the spread it has shown (CalibrateModelSpread)

	mu     sync.Mutex
	loss   [2][numExperts]float64   // per class (first segment, later): summed absolute errors
	n      [2][numExperts]float64   // the segments each was scored on (history may join late)
	first  P2Quantile               // the lengths of the first segments finished
	order  [2][numExperts]float64   // per class: pairs each expert ordered wrongly (ties half)
	pairs  [2][numExperts]float64   // the pairs each was scored on
	recent [2][orderWindow]finished // per class: the segments finished last, a ring
	seen   [2]int                   // per class: segments put in the ring
}

// orderWindow is how many of the segments finished last a finished segment
// is paired with to score the experts' order.
const orderWindow = 32

// finished is a finished segment as the order score keeps it: the experts'
// points (history's only when it had one) and the actual length.
type finished struct {
	pts         [numExperts]int
	withHistory bool
	actual      int
}

// NewExpertMix starts a mixture that knows nothing yet. firstTokens is the
// history baseline's prediction for a program's first segment until one has
// finished (the model's training median, TrainMedian); < 0 leaves history
// out of first segments until then.
func NewExpertMix(firstTokens int) *ExpertMix {
	return &ExpertMix{firstTokens: firstTokens, first: NewP2Quantile(0.5)}
}

// OrderScored is a mixture like NewExpertMix's that weighs its experts by
// how often they order pairs of finished segments wrongly (each finished
// segment against the orderWindow finished before it in its class; a tie
// counts half) instead of by their absolute errors: the mixture a scheduler
// that ranks by the prediction should read.
func OrderScored(firstTokens int) *ExpertMix {
	x := NewExpertMix(firstTokens)
	x.byOrder = true
	return x
}

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

// points are the experts' predictions for the next segment of the program
// b describes, given the model's and the blend's, and the class.
func (x *ExpertMix) points(b ProgramBlend, model, blended int) ([numExperts]int, int, bool) {
	if b.Segments == 0 {
		h := x.firstTokens
		x.mu.Lock()
		if x.first.N > 0 {
			h = int(math.Round(x.first.Value()))
		}
		x.mu.Unlock()
		return [numExperts]int{model, blended, h}, 0, h >= 0
	}
	return [numExperts]int{model, blended, int(math.Round(b.Mean()))}, 1, true
}

// Predict is the length prediction for the next segment of the program b
// describes, from the model's (model tokens, with distribution probs, nil
// when the predictor has none): the mixture's median and distribution (a new
// slice; nil when probs is nil, and then the point is the weighted mean),
// and the blend's point, which Observe takes back.
func (x *ExpertMix) Predict(b ProgramBlend, model int, probs []float32, overflowTokens int) (tokens int, dist []float32, blended int) {
	blended, blendProbs := b.Predict(model, probs, overflowTokens)
	if x == nil || model < 0 {
		return blended, blendProbs, blended
	}
	pts, k, withHistory := x.points(b, model, blended)
	x.mu.Lock()
	w, scale := x.weights(k, withHistory)
	x.mu.Unlock()
	var sum float64
	for _, v := range w {
		sum += v
	}
	if len(probs) != NumClasses || len(blendProbs) != NumClasses {
		var p float64
		for e, v := range w {
			p += v * float64(pts[e])
		}
		return int(math.Round(p / sum)), nil, blended
	}
	var lap []float32
	if withHistory {
		lap = laplaceBins(float64(pts[ExpertHistory]), scale)
	}
	mixture := func(model []float32) []float32 {
		mixed := make([]float32, NumClasses)
		for i := range mixed {
			p := w[ExpertModel]*float64(model[i]) + w[ExpertBlend]*float64(blendProbs[i])
			if lap != nil {
				p += w[ExpertHistory] * float64(lap[i])
			}
			mixed[i] = float32(p / sum)
		}
		return mixed
	}
	mixed := mixture(probs)
	if widened := x.modelAtShownSpread(k, probs, pts[ExpertModel], overflowTokens); widened != nil {
		return LengthQuantile(mixture(widened), 0.5, overflowTokens), mixed, blended
	}
	return LengthQuantile(mixed, 0.5, overflowTokens), mixed, blended
}

// Observe books a finished segment of actual tokens of the program b
// described before it (not yet observed by b), for which the model predicted
// model and the blend blended (Predict's third result).
func (x *ExpertMix) Observe(b ProgramBlend, model, blended, actual int) {
	if x == nil || model < 0 {
		return
	}
	pts, k, withHistory := x.points(b, model, blended)
	x.mu.Lock()
	defer x.mu.Unlock()
	for e, p := range pts {
		if e == ExpertHistory && !withHistory {
			continue
		}
		x.loss[k][e] += math.Abs(float64(p - actual))
		x.n[k][e]++
	}
	if k == 0 {
		x.first.Add(float64(actual))
	}
	if x.byOrder {
		x.scoreOrder(k, finished{pts: pts, withHistory: withHistory, actual: actual})
	}
}

// scoreOrder pairs a finished segment of class k with the ones finished
// before it in the ring, books each expert's wrong orders, and puts it in
// the ring. x.mu is held.
func (x *ExpertMix) scoreOrder(k int, s finished) {
	ring := &x.recent[k]
	for i := range min(x.seen[k], orderWindow) {
		f := &ring[i]
		if f.actual == s.actual {
			continue
		}
		for e, p := range s.pts {
			if e == ExpertHistory && (!s.withHistory || !f.withHistory) {
				continue
			}
			x.pairs[k][e]++
			switch d := (p - f.pts[e]) * (s.actual - f.actual); {
			case d < 0:
				x.order[k][e]++
			case d == 0:
				x.order[k][e] += 0.5
			}
		}
	}
	ring[x.seen[k]%orderWindow] = s
	x.seen[k]++
}

// weights are the experts' unnormalised weights in class k (history's 0
// without it; the blend's 0 on first segments, where it is the model) and
// the Laplace scale of history's distribution (its mean absolute error;
// BlendPriorTokens before it was scored). An expert weighs
// exp(−ExpertMixRate × (the prior's segments × (its prior relative error −
// the lowest) + its segments × (its mean error − the lowest) / the experts'
// average mean error)), the error being the absolute one or, with
// OrderScored, the share of pairs ordered wrongly (the rate was chosen for
// the absolute one). x.mu is held.
func (x *ExpertMix) weights(k int, withHistory bool) (w [numExperts]float64, scale float64) {
	m := numExperts
	if !withHistory {
		m = ExpertHistory // the experts before it
	}
	scale = float64(BlendPriorTokens)
	var mean [numExperts]float64
	least, sum, scored := math.Inf(1), 0.0, 0
	for e := range m {
		if n := x.n[k][e]; n > 0 {
			mean[e] = x.loss[k][e] / n
			if x.byOrder {
				mean[e] = 0.5 // no pair scored yet: a coin's
				if p := x.pairs[k][e]; p > 0 {
					mean[e] = x.order[k][e] / p
				}
			}
			least, sum, scored = min(least, mean[e]), sum+mean[e], scored+1
		}
	}
	// The exponent of each weight: the cross-source prior's evidence plus
	// the deployment's own, both in segments × relative error.
	var loss [numExperts]float64
	segments, prior := crossSourcePrior(k)
	priorLeast := math.Inf(1)
	for e := range m {
		priorLeast = min(priorLeast, prior[e])
	}
	for e := range m {
		loss[e] = segments * (prior[e] - priorLeast)
	}
	if avg := sum / float64(scored); scored > 0 && avg > 0 {
		for e := range m {
			if n := x.n[k][e]; n > 0 {
				loss[e] += n * (mean[e] - least) / avg
			}
		}
	}
	for e := range m {
		w[e] = math.Exp(-ExpertMixRate * loss[e])
	}
	if k == 0 {
		w[ExpertBlend] = 0 // the blend is the model on a first segment: one expert, not two
	}
	if n := x.n[k][ExpertHistory]; withHistory && n > 0 {
		scale = max(x.loss[k][ExpertHistory]/n, 1)
	}
	return w, scale
}

// ExpertErrors are the experts' mean absolute errors on the segments
// booked so far, for programs' first segments (first) and for later ones
// (later), in ExpertNames' order (NaN for an expert not yet scored): what
// crossSourcePrior was measured from.
func (x *ExpertMix) ExpertErrors() (first, later [numExperts]float64) {
	x.mu.Lock()
	defer x.mu.Unlock()
	for k, out := range []*[numExperts]float64{&first, &later} {
		for e := range out {
			out[e] = x.loss[k][e] / x.n[k][e]
		}
	}
	return first, later
}

// Weights are the experts' current weights (summing to 1) for programs'
// first segments (first) and for later ones (later), in ExpertNames' order.
func (x *ExpertMix) Weights() (first, later [numExperts]float64) {
	x.mu.Lock()
	defer x.mu.Unlock()
	norm := func(k int) [numExperts]float64 {
		w, _ := x.weights(k, k == 1 || x.firstTokens >= 0 || x.first.N > 0)
		s := w[0] + w[1] + w[2]
		for e := range w {
			w[e] /= s
		}
		return w
	}
	return norm(0), norm(1)
}
