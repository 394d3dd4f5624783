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
	mode, ok := m.modes.Predict(in)
	if !ok {
		mode = m.fallback
	}
	return m.led.Choose(mix, mode), mode
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

// ServedPoints replays recs in order through what serve predicts with,
// given the length model's predictions pred (with distributions probs,
// which may be nil or hold nil rows): each record's prediction is blended
// with its program (ProgramBlends), mixed with the history baseline by
// order (OrderScored, starting from the training median median), then led
// by order between that point and the window mode (ModeLed, its mode
// starting at median); then the record is observed by all three. It
// returns the mixture's points, the window modes and the served points.
func ServedPoints(pred []int, probs [][]float32, overflowTokens int, recs []TraceRecord, median int) (mixed, modes, served []int) {
	blends := NewProgramBlends(OrderScored(median))
	led := NewModeLed(median)
	mixed, modes, served = make([]int, len(recs)), make([]int, len(recs)), make([]int, len(recs))
	for i, r := range recs {
		var p []float32
		if i < len(probs) {
			p = probs[i]
		}
		mixed[i] = blends.Predict(r, pred[i], p, overflowTokens)
		served[i], modes[i] = led.Predict(r.Input, mixed[i])
		blends.Observe(r, pred[i], p, overflowTokens)
		led.Observe(r.Input, mixed[i], modes[i], r.PreToolOutputTokens)
	}
	return mixed, modes, served
}
