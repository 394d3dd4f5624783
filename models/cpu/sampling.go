package cpu

import (
	"math"
	"math/rand/v2"

	"github.com/pitstop-llm/pitstop/engine"
)

// sampler holds sampling scratch.
type sampler struct {
	probs []float64
	heap  []int32
}

// sample draws a token from logits as p says (engine.Sampling: the call's
// request, carried by its batch item). rng is used only when Temperature > 0.
// The call's hook masks the logits first (constrained decoding: the mask
// comes before temperature and top-p, so they rescale only allowed
// tokens) and sees the token drawn.
func (sp *sampler) sample(logits []float32, p engine.Sampling, rng *rand.Rand) int32 {
	if p.Hook == nil {
		return sp.draw(logits, p, rng)
	}
	p.Hook.Mask(logits)
	tok := sp.draw(logits, p, rng)
	p.Hook.Sampled(tok, logits)
	return tok
}

func (sp *sampler) draw(logits []float32, p engine.Sampling, rng *rand.Rand) int32 {
	if !(p.Temperature > 0) {
		return argmax(logits)
	}
	mx := logits[argmax(logits)]
	if cap(sp.probs) < len(logits) {
		sp.probs = make([]float64, len(logits))
	}
	probs := sp.probs[:len(logits)]
	inv := 1 / p.Temperature
	z := 0.0
	for i, l := range logits {
		e := math.Exp(float64(l-mx) * inv)
		probs[i] = e
		z += e
	}
	if p.TopP > 0 && p.TopP < 1 {
		return sp.nucleus(probs, z, p.TopP, rng)
	}
	u := rng.Float64() * z
	for i, q := range probs {
		u -= q
		if u < 0 {
			return int32(i)
		}
	}
	return int32(len(probs) - 1)
}

// nucleus pops tokens in decreasing probability from a max-heap until their
// mass reaches topP·z, then draws among them: O(V + k log V).
func (sp *sampler) nucleus(probs []float64, z, topP float64, rng *rand.Rand) int32 {
	h := sp.heap[:0]
	for i := range probs {
		h = append(h, int32(i))
	}
	sp.heap = h
	less := func(a, b int32) bool { // a ranks above b
		if probs[a] != probs[b] {
			return probs[a] > probs[b]
		}
		return a < b
	}
	down := func(i, n int) {
		for {
			l := 2*i + 1
			if l >= n {
				return
			}
			c := l
			if r := l + 1; r < n && less(h[r], h[l]) {
				c = r
			}
			if !less(h[c], h[i]) {
				return
			}
			h[i], h[c] = h[c], h[i]
			i = c
		}
	}
	n := len(h)
	for i := n/2 - 1; i >= 0; i-- {
		down(i, n)
	}
	// Pop into the tail: h[n-1], h[n-2], ... hold the kept tokens in order.
	kept, mass := 0, 0.0
	for n > 0 && mass < topP*z {
		top := h[0]
		n--
		h[0], h[n] = h[n], top
		down(0, n)
		mass += probs[top]
		kept++
	}
	u := rng.Float64() * mass
	for i := len(h) - 1; i >= len(h)-kept; i-- {
		u -= probs[h[i]]
		if u < 0 {
			return h[i]
		}
	}
	return h[len(h)-kept]
}

func argmax(v []float32) int32 {
	best := 0
	for i, x := range v {
		if x > v[best] {
			best = i
		}
	}
	return int32(best)
}
