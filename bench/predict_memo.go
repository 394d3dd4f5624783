package bench

import (
	"encoding/binary"
	"math"

	"github.com/pitstop-llm/pitstop/predictor"
)

// MemoLength remembers a deterministic length model's predictions by the
// features the model sees. A replay asks the shipped model about one segment
// several times with the same features (the forecast when the call resumes,
// the program blend's score when the segment ends, and the online learner's
// score of the shipped model right after): with ONNX Runtime each ask is a
// cgo call, the largest cost of a `--predictor serve` replay after the
// learner's own SGD. The answers are the model's own, so a run's results are
// the same with or without the memo.
//
// It keeps the last memoGeneration·2 distinct inputs at most (two
// generations: when the current one fills, the older is dropped). One run
// owns it: it is not safe for concurrent use.
type MemoLength struct {
	base     predictor.LengthPredictor
	x        []float32
	key      []byte
	cur, old map[string]memoAnswer
	// Hits and Misses count the asks answered from memory and by the model.
	Hits, Misses int
}

type memoAnswer struct {
	tokens int
	probs  []float32
}

// memoGeneration is how many inputs one generation holds: more than the
// segments a replay has in flight at once on the families measured (a few
// hundred calls), so that a segment's later asks find its first.
const memoGeneration = 4096

// NewMemoLength wraps base, which must answer the same features with the
// same prediction (a fixed model: predictor.Model, GoClassifier).
func NewMemoLength(base predictor.LengthPredictor) *MemoLength {
	return &MemoLength{base: base, x: make([]float32, predictor.FeatureDim),
		cur: make(map[string]memoAnswer)}
}

// PredictLength implements predictor.LengthPredictor. The probabilities
// returned are the caller's own copy.
func (m *MemoLength) PredictLength(in predictor.Input) (int, []float32) {
	predictor.Featurize(in, m.x)
	m.key = m.key[:0]
	// The non-zero features, by index and bits: the vector is sparse, and
	// bits tell -0 from 0 so that equal keys mean identical inputs.
	for i, v := range m.x {
		if b := math.Float32bits(v); b != 0 {
			m.key = binary.LittleEndian.AppendUint16(m.key, uint16(i))
			m.key = binary.LittleEndian.AppendUint32(m.key, b)
		}
	}
	a, ok := m.cur[string(m.key)]
	if !ok {
		if a, ok = m.old[string(m.key)]; ok {
			m.remember(a)
		}
	}
	if ok {
		m.Hits++
		return a.tokens, clone(a.probs)
	}
	m.Misses++
	n, probs := m.base.PredictLength(in)
	m.remember(memoAnswer{tokens: n, probs: clone(probs)})
	return n, probs
}

// remember stores a under the current key.
func (m *MemoLength) remember(a memoAnswer) {
	if len(m.cur) >= memoGeneration {
		m.old, m.cur = m.cur, make(map[string]memoAnswer, memoGeneration)
	}
	m.cur[string(m.key)] = a
}

// OverflowTokens is the value the wrapped model gives its overflow bin.
func (m *MemoLength) OverflowTokens() int { return overflowTokens(m.base) }

func clone(p []float32) []float32 {
	if p == nil {
		return nil
	}
	return append([]float32(nil), p...)
}
