package predictor

import "sync"

// ModeLed is the last step of what serve predicts with, after the expert
// mixture: the deployment's window modes by class (WindowModes, with the
// argument class of the call whose result a segment reads) and the
// per-deployment choice between the mixture's point and the mode by how
// well each has ordered the finished segments (OrderLed). The runtime and
// `pitstop predictor eval --online` (ServedPoints) both predict through it,
// so what eval measures is what serve predicts. Safe for concurrent use.
type ModeLed struct {
	fallback int // the mode before any segment finished

	mu    sync.Mutex
	modes *WindowModes
	led   OrderLed
	trade HitTrade // served steps only: the mixture's median or its HitTrade candidate
}

// NewModeLed starts with no segment finished; until one has, the mode is
// fallback (the model's training median, or 0).
func NewModeLed(fallback int) *ModeLed {
	return &ModeLed{fallback: max(fallback, 0), modes: NewWindowModes()}
}

// Predict is the point for a segment with input in whose mixture point is
// mix, and the window mode, which Observe takes back. A nil ModeLed
// predicts the mixture's point.
func (m *ModeLed) Predict(in Input, mix int) (point, mode int) {
	if m == nil {
		return mix, mix
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	point, mode, _ = m.predict(in, mix)
	return point, mode
}

// predict is Predict, and whether the order chose the mode. m.mu is held.
func (m *ModeLed) predict(in Input, mix int) (point, mode int, chosen bool) {
	mode, ok := m.modes.Predict(in)
	if !ok {
		mode = m.fallback
	}
	chosen = m.led.Choose(0, 1) == 1
	return m.led.Choose(mix, mode), mode, chosen
}

// predictServed fills p's points after the mixture's (p.Mixed, p.Dist):
// the HitTrade candidate, the point the mixture serves (Traded: the
// candidate while the trade pays, else the median) and, led by order
// between that and the window mode, the point. A nil ModeLed serves the
// mixture's median.
func (m *ModeLed) predictServed(in Input, p *ServedPoint, overflowTokens int) {
	if m == nil {
		p.Candidate, p.Traded, p.Mode, p.Point = p.Median, p.Mixed, p.Mixed, p.Mixed
		return
	}
	p.Candidate = hitCandidate(p.Dist, p.Median, overflowTokens)
	m.mu.Lock()
	defer m.mu.Unlock()
	p.Traded = servedTrade(&m.trade, *p)
	p.Point, p.Mode, p.ModeChosen = m.predict(in, p.Traded)
}

// observeServed books a finished segment of actual tokens whose input was
// in and which predictServed predicted as p.
func (m *ModeLed) observeServed(in Input, p ServedPoint, actual int) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.trade.Observe(p.Median, p.Candidate, actual)
	m.modes.Observe(in, actual)
	m.led.Observe(p.Traded, p.Mode, actual)
}

// Observe books a finished segment of actual tokens whose input was in,
// for which Predict was given mix and returned mode.
func (m *ModeLed) Observe(in Input, mix, mode, actual int) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.modes.Observe(in, actual)
	m.led.Observe(mix, mode, actual)
}

// ModeChosen says whether the window mode predicts now (it has ordered
// the finished segments better than the mixture).
func (m *ModeLed) ModeChosen() bool {
	if m == nil {
		return false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.led.Choose(0, 1) == 1
}

// ServedPoints replays recs in order through what serve predicts with
// (ServedStep, one deployment's, NewServedStep(median)), given the length
// model's predictions pred (with distributions probs, which may be nil or
// hold nil rows): each record's prediction is blended with its program,
// mixed with the history baseline by order, then led by order between that
// point and the window mode; then the record is observed. It returns the
// mixture's points, the window modes and the served points.
func ServedPoints(pred []int, probs [][]float32, overflowTokens int, recs []TraceRecord, median int) (mixed, modes, served []int) {
	pts := ReplayServed(NewServedStep(median), pred, probs, overflowTokens, recs)
	mixed, modes, served = make([]int, len(recs)), make([]int, len(recs)), make([]int, len(recs))
	for i, p := range pts {
		mixed[i], modes[i], served[i] = p.Mixed, p.Mode, p.Point
	}
	return mixed, modes, served
}

// ReplayServed replays recs in order through step as ServedPoints does
// and returns every record's ServedPoint, each stage's point kept.
func ReplayServed(step ServedStep, pred []int, probs [][]float32, overflowTokens int, recs []TraceRecord) []ServedPoint {
	blends := NewProgramBlends(nil) // the programs' blends; step mixes
	out := make([]ServedPoint, len(recs))
	for i, r := range recs {
		var p []float32
		if i < len(probs) {
			p = probs[i]
		}
		b := blends.program(r)
		pt := step.Predict(b, r.Input, pred[i], p, overflowTokens)
		out[i] = pt
		b = step.Observe(b, r.Input, pt, r.PreToolOutputTokens, r.Tool)
		if r.Program != "" {
			blends.progs[blendKey(r)] = b
		}
	}
	return out
}
