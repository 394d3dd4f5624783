package predictor

import (
	"math"
	"slices"
)

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
// predicted by its own mean after a segment or two.
//
// The mean and the errors are kept per last tool too (the tool the
// program's previous segment called, whose result the next segment reads):
// once the program has resumed after the same tool before, the segment is
// blended with the mean of those segments and the model's errors on them,
// since an agent's reply to a tool's result is about as long as its last
// reply to that tool. Otherwise the whole program's are used.
//
// Retries (Input.Retry: a request that goes back to an earlier point of
// its conversation, a tree search trying another branch) are another kind
// of turn than the continuations of the turn just generated: on ToolBench's
// search trees a retry's median is 3.5x a continuation's (129 against 37
// tokens), since the search asks the model for a different step and it
// explains why. So the mean and the errors are kept per kind too: a retry
// is blended with the program's earlier retries (the whole program's
// before its first), a continuation with the continuations (per last tool
// as above). A program that never retries is blended as if there were one
// kind. Next sets which kind the next segment is.
//
// The model is not changed, and nothing is learnt across programs (that is
// ExpertMix). The zero value is a program with no segments. A ProgramBlend
// is a value: Observe returns a new one and never changes what an earlier
// copy sees.
type ProgramBlend struct {
	BlendStats             // the whole program
	LastTool   string      // the tool the last observed segment called ("" when it ended its call)
	byTool     []toolStats // per last tool, continuations only; copied on write (values share no state)
	continues  BlendStats  // the continuations (every segment of a program that never retried)
	retries    BlendStats  // the retries
	retrying   bool        // the next segment is a retry (Next)
}

// Next is b for predicting and observing a segment with input in: a retry
// (in.Retry) is blended with the program's retries.
func (b ProgramBlend) Next(in Input) ProgramBlend {
	b.retrying = in.Retry
	return b
}

// BlendStats is one mean and the errors of the model and of that mean.
type BlendStats struct {
	Segments   int     // segments observed
	SumOutput  float64 // their output tokens
	ModelSqErr float64 // sum of the model's squared errors on segments 2..Segments
	MeanSqErr  float64 // the same for the mean so far
}

type toolStats struct {
	tool string
	BlendStats
}

// stats is the evidence the next segment is blended with: the segments
// after the same last tool, or the whole program's.
func (b ProgramBlend) stats() BlendStats {
	if b.retrying {
		if b.retries.Segments > 0 {
			return b.retries
		}
		return b.BlendStats
	}
	if i := b.toolIndex(b.LastTool); i >= 0 {
		return b.byTool[i].BlendStats
	}
	if b.continues.Segments > 0 {
		return b.continues
	}
	return b.BlendStats
}

func (b ProgramBlend) toolIndex(tool string) int {
	return slices.IndexFunc(b.byTool, func(t toolStats) bool { return t.tool == tool })
}

// Mean is the program's mean output so far over segments of the next
// one's kind (Next: retries or continuations), over all of them before the
// program's first of that kind (0 before its first segment).
func (b ProgramBlend) Mean() float64 {
	s := b.BlendStats
	switch {
	case b.retrying && b.retries.Segments > 0:
		s = b.retries
	case !b.retrying && b.continues.Segments > 0:
		s = b.continues
	}
	if s.Segments == 0 {
		return 0
	}
	return s.SumOutput / float64(s.Segments)
}

// Predict blends the model's prediction for the program's next segment
// (model tokens, the median of probs; probs may be nil) with the program's
// mean (after the same last tool, where there is one), and returns the blend
// and its distribution (a new slice; nil when probs is nil, and then the
// point is the weighted mean of the two points). Before the program's first
// segment, or when model < 0 (no prediction), it returns model and probs.
func (b ProgramBlend) Predict(model int, probs []float32, overflowTokens int) (int, []float32) {
	if b.Segments == 0 || model < 0 {
		return model, probs
	}
	return b.stats().predict(model, probs, overflowTokens)
}

// Observe returns b after a segment of actual output tokens for which the
// model (unblended) predicted model, and which ended by calling tool (""
// when it ended its call).
// The segment is of the kind Next set; the returned blend's next segment
// is a continuation until Next says otherwise.
func (b ProgramBlend) Observe(model, actual int, tool string) ProgramBlend {
	if b.retrying {
		b.retries = b.retries.observe(model, actual)
	} else {
		i := b.toolIndex(b.LastTool)
		b.byTool = slices.Clone(b.byTool)
		if i < 0 {
			b.byTool = append(b.byTool, toolStats{tool: b.LastTool})
			i = len(b.byTool) - 1
		}
		b.byTool[i].BlendStats = b.byTool[i].observe(model, actual)
		b.continues = b.continues.observe(model, actual)
	}
	b.BlendStats = b.BlendStats.observe(model, actual)
	b.LastTool = tool
	b.retrying = false
	return b
}

// modelWeight is the weight of the model against the mean.
func (s BlendStats) modelWeight() float64 {
	c := float64(BlendPriorTokens * BlendPriorTokens)
	return (s.MeanSqErr + c) / (s.ModelSqErr + s.MeanSqErr + 2*c)
}

func (s BlendStats) predict(model int, probs []float32, overflowTokens int) (int, []float32) {
	w := s.modelWeight()
	mean := s.SumOutput / float64(s.Segments)
	if len(probs) != NumClasses {
		return int(math.Round(w*float64(model) + (1-w)*mean)), nil
	}
	// The mean's spread: its RMS error so far (prior BlendPriorTokens), as
	// a Laplace scale (RMS = √2 · scale).
	scored := float64(s.Segments - 1)
	scale := math.Sqrt((s.MeanSqErr+BlendPriorTokens*BlendPriorTokens)/(scored+1)) / math.Sqrt2
	lap := laplaceBins(mean, scale)
	mixed := make([]float32, NumClasses)
	for k := range mixed {
		mixed[k] = float32(w*float64(probs[k]) + (1-w)*float64(lap[k]))
	}
	return LengthQuantile(mixed, 0.5, overflowTokens), mixed
}

// laplaceBins is a Laplace distribution over the length bins (mass below 0
// goes to bin 0, above the last bin to the overflow bin).
func laplaceBins(mu, scale float64) []float32 {
	d := make([]float32, NumClasses)
	prev := 0.0
	for k := range d {
		cdf := 1.0
		if k < OverflowBin {
			cdf = laplaceCDF(float64((k+1)*BinWidth), mu, scale)
		}
		d[k] = float32(cdf - prev)
		prev = cdf
	}
	return d
}

func laplaceCDF(x, mu, scale float64) float64 {
	if x < mu {
		return 0.5 * math.Exp((x-mu)/scale)
	}
	return 1 - 0.5*math.Exp(-(x-mu)/scale)
}

func (s BlendStats) observe(model, actual int) BlendStats {
	if s.Segments > 0 && model >= 0 {
		mean := s.SumOutput / float64(s.Segments)
		s.ModelSqErr += sq(float64(model - actual))
		s.MeanSqErr += sq(mean - float64(actual))
	}
	s.Segments++
	s.SumOutput += float64(actual)
	return s
}

func sq(x float64) float64 { return x * x }

// ProgramBlends replays a trace through what serve predicts with: a
// ProgramBlend per program, then the deployment's ExpertMix (nil: none).
// Programs are told apart by source, program id and thread (the
// conversation within the program, where the trace names one: the subagents
// of a fan-out each learn their own); a record with segment 0
// starts its program afresh and a record without a program id is its own
// program. A record whose history is empty although its program has
// started (Restarts) starts the program afresh too: the runtime does the
// same when a known program's request carries no turn (its conversation
// starts over, e.g. a search restarting from the root), and the trace it
// writes then holds such a record.
type ProgramBlends struct {
	progs map[string]ProgramBlend
	Mix   *ExpertMix
}

// NewProgramBlends starts a replay with no programs seen; mix may be nil.
func NewProgramBlends(mix *ExpertMix) *ProgramBlends {
	return &ProgramBlends{progs: map[string]ProgramBlend{}, Mix: mix}
}

// blendKey names r's conversation across the replay: its source, program
// and thread (the blend, the last tool's class and retries are per
// conversation).
func blendKey(r TraceRecord) string { return r.Source + "\x00" + r.Program + "\x00" + r.Thread }

// program is the blend r's prediction starts from.
func (m *ProgramBlends) program(r TraceRecord) ProgramBlend {
	if r.Program == "" || r.Segment == 0 || Restarts(r) {
		return ProgramBlend{}.Next(r.Input)
	}
	return m.progs[blendKey(r)].Next(r.Input)
}

// Restarts says whether r starts its program's conversation over: a
// segment after the program's first whose history is empty. The runtime
// writes such a record when a program's request holds no assistant or tool
// message; a tree-search trace holds one where the search went back to the
// root. ProgramBlends starts the program's blend afresh there.
func Restarts(r TraceRecord) bool {
	return r.Segment > 0 && r.Input.History.Calls == 0
}

// Predict blends the model's prediction for r (pred, with its distribution
// probs, which may be nil) with what r's program showed so far, and mixes
// the model, that blend and the history baseline (ExpertMix).
func (m *ProgramBlends) Predict(r TraceRecord, pred int, probs []float32, overflowTokens int) int {
	n, _, _ := m.Mix.Predict(m.program(r), pred, probs, overflowTokens)
	return n
}

// Observe books r's actual length, for which the model predicted pred
// (with probs: Observe needs what Predict saw).
func (m *ProgramBlends) Observe(r TraceRecord, pred int, probs []float32, overflowTokens int) {
	b := m.program(r)
	if m.Mix != nil {
		blended, _ := b.Predict(pred, probs, overflowTokens)
		m.Mix.Observe(b, pred, blended, r.PreToolOutputTokens)
	}
	if r.Program != "" {
		m.progs[blendKey(r)] = b.Observe(pred, r.PreToolOutputTokens, r.Tool)
	}
}

// BlendByProgram replays model predictions pred (with their distributions
// probs, which may be nil or hold nil rows) of recs in order through
// ProgramBlends with mix (nil: the program blend alone): each record's
// prediction is blended with what its program's earlier records showed,
// then mixed, then the record is observed.
func BlendByProgram(pred []int, probs [][]float32, overflowTokens int, recs []TraceRecord, mix *ExpertMix) []int {
	out := make([]int, len(pred))
	m := NewProgramBlends(mix)
	for i, r := range recs {
		var p []float32
		if i < len(probs) {
			p = probs[i]
		}
		out[i] = m.Predict(r, pred[i], p, overflowTokens)
		m.Observe(r, pred[i], p, overflowTokens)
	}
	return out
}
