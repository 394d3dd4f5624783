package predictor

// ServedStep is what a deployment predicts a segment's length with after
// its length model: the model's prediction blended with the segment's
// program (ProgramBlend), mixed with the history baseline by how well each
// ordered the deployment's finished segments (ExpertMix, OrderScored), then
// the mixture's point or the window mode of the segment's class, whichever
// has ordered them better (ModeLed). The runtime (serve), bench's `serve`
// predictor and ServedPoints (eval --online) all predict through it, so
// what bench and eval measure is what serve predicts. One deployment (a
// serve process, a bench replica) has one. Mix and Led may be nil: without
// Mix the program blend alone, without Led the mixture's point.
type ServedStep struct {
	Mix *ExpertMix
	Led *ModeLed
}

// NewServedStep is a deployment's step with nothing finished yet, its
// first-segment history and window mode starting from median (the length
// model's training median, TrainMedian; -1 when unknown).
func NewServedStep(median int) ServedStep {
	return ServedStep{Mix: ServedMix(median), Led: NewModeLed(median)}
}

// ServedMix is the expert mixture a deployment serves with: scored by
// order (OrderScored), its point reading the model at the spread the model
// has shown where another expert has shown less error
// (CalibrateModelSpread). The hit trade after it is decided on the
// mixture's distribution, which the calibration leaves alone
// (servedTrade), so the calibration moves the point where the model is
// overconfident without moving which segments the trade serves
// (docs/results-predictor.md, session 16).
func ServedMix(median int) *ExpertMix {
	return OrderScored(median).CalibrateModelSpread()
}

// ServedPoint is one segment's prediction by a ServedStep, kept until the
// segment finishes: Observe takes it back.
type ServedPoint struct {
	Model   int       // the length model's point
	Blended int       // the model blended with its program
	Mixed   int       // the experts' mixture's point (its median; see Median)
	Dist    []float32 // the mixture's distribution (nil without the model's)
	// Median is Dist's own median: Mixed, except where the mixture reads
	// the model at the spread it has shown (CalibrateModelSpread), which
	// moves the point and not the distribution. The hit trade is decided
	// and booked on it (servedTrade).
	Median int
	// Candidate is the centre of the mixture's densest ±5-token window
	// where it buys enough hits for its absolute error over Median
	// (hitCandidate), else Median; Traded is Candidate while the
	// deployment's HitTrade has paid and Candidate is not Median, else
	// Mixed.
	Candidate, Traded int
	Mode              int // the deployment's window mode for the segment's class
	Point             int // Traded or Mode, by ModeLed: what policies rank by
	// ModeChosen says that the point is the mode: it has ordered the
	// deployment's finished segments better than the mixture (OrderLed).
	ModeChosen bool
}

// Predict is the served prediction of a segment with input in, of the
// program b describes, for which the length model predicted model (with
// distribution probs, which may be nil; overflowTokens is the value of its
// overflow bin).
func (s ServedStep) Predict(b ProgramBlend, in Input, model int, probs []float32, overflowTokens int) ServedPoint {
	p := ServedPoint{Model: model}
	b = b.Next(in)
	p.Mixed, p.Dist, p.Blended = s.Mix.Predict(b, model, probs, overflowTokens)
	p.Median = p.Mixed
	if s.Mix.calibrates() && p.Dist != nil {
		p.Median = LengthQuantile(p.Dist, 0.5, overflowTokens)
	}
	s.Led.predictServed(in, &p, overflowTokens)
	return p
}

// Observe books a finished segment of actual tokens that ended in a call
// of tool ("" for none), predicted as p with input in while its program was
// b, and returns b with the segment taken in.
func (s ServedStep) Observe(b ProgramBlend, in Input, p ServedPoint, actual int, tool string) ProgramBlend {
	b = b.Next(in)
	s.Mix.Observe(b, p.Model, p.Blended, actual)
	s.Led.observeServed(in, p, actual)
	return b.Observe(p.Model, actual, tool)
}
