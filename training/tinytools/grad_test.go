package tinytools

import (
	"math"
	"math/rand/v2"
	"testing"
)

// randomBatch makes a batch of random tokens: a shared prefix and suffixes
// with random trained positions.
func randomBatch(r *rand.Rand, vocab, prefix int, lens ...int) Batch {
	b := Batch{}
	for range prefix {
		b.Prefix = append(b.Prefix, int32(r.IntN(vocab)))
	}
	for _, n := range lens {
		var e Encoded
		for range n {
			e.Tokens = append(e.Tokens, int32(r.IntN(vocab)))
		}
		for t := 0; t+1 < n; t++ {
			if r.IntN(3) > 0 {
				e.Pos = append(e.Pos, t)
				e.Targets = append(e.Targets, e.Tokens[t+1])
			}
		}
		b.Seqs = append(b.Seqs, e)
	}
	return b
}

// TestGradientCheck compares the hand-written backward pass (shared prefix,
// grouped-query attention, several workers) with central finite differences
// of the loss, on every tensor of a tiny model.
func TestGradientCheck(t *testing.T) {
	cfg := Config{Vocab: 37, Dim: 32, Layers: 2, Heads: 2, KVHeads: 1, FF: 48, MaxPos: 64, RopeTheta: 10000, NormEps: 1e-5}
	w, err := NewWeights(cfg)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(3, 4))
	for i := range w.Flat {
		w.Flat[i] = float32(r.NormFloat64() * 0.3)
	}
	for _, l := range w.layers { // norm gains near 1
		for i := range l.attnNorm {
			l.attnNorm[i] += 1
			l.mlpNorm[i] += 1
		}
	}
	b := randomBatch(r, cfg.Vocab, 7, 5, 9, 3, 6)
	tr := newTrainer(w, 2)
	loss0, _ := tr.grad(b, false)
	analytic := append([]float32(nil), tr.ws[0].grad.Flat...)
	lossAt := func() float64 {
		l, _ := newTrainer(w, 1).grad(b, true)
		return l
	}
	if l := lossAt(); math.Abs(l-loss0) > 1e-5 {
		t.Fatalf("loss with and without gradient differ: %v vs %v", loss0, l)
	}
	const eps = 2e-3
	off := 0
	checked := 0
	for _, s := range cfg.specs() {
		n := s.in * s.out
		for range 6 {
			i := off + r.IntN(n)
			orig := w.Flat[i]
			w.Flat[i] = orig + eps
			lp := lossAt()
			w.Flat[i] = orig - eps
			lm := lossAt()
			w.Flat[i] = orig
			num := (lp - lm) / (2 * eps)
			a := float64(analytic[i])
			if math.Abs(a-num) > 2e-4+2e-2*math.Abs(num) {
				t.Errorf("%s[%d]: analytic %.6g, numeric %.6g", s.hfName, i-off, a, num)
			}
			checked++
		}
		off += n
	}
	t.Logf("checked %d parameters, loss %.4f", checked, loss0)
}
