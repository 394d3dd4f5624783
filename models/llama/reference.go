package llama

import (
	"fmt"
	"math"
)

// Reference is the plain forward pass: one sequence from position 0, one
// token at a time, a contiguous KV cache, every dot product accumulated in
// float64. It returns the logits of every position ([len(tokens)][vocab]).
// It is slow and exists to check the batched, paged forward of models/cpu.
func (m *Model) Reference(tokens []int32) ([][]float32, error) {
	c := &m.Config
	h, q, kv, in := c.HiddenSize, c.QDim(), c.KVDim(), c.IntermediateSize
	hd, group := c.HeadDim, c.NumHeads/c.NumKVHeads
	inv := c.InvFreq()
	kc := make([][]float32, c.NumLayers) // [layer][pos·kv]
	vc := make([][]float32, c.NumLayers)
	x := make([]float32, h)
	hb := make([]float32, h)
	qkv := make([]float32, q+2*kv)
	att := make([]float32, q)
	gu := make([]float32, 2*in)
	act := make([]float32, in)
	tmp := make([]float32, h)
	scores := make([]float64, len(tokens))
	out := make([][]float32, len(tokens))
	for p, tok := range tokens {
		if tok < 0 || int(tok) >= c.VocabSize {
			return nil, fmt.Errorf("llama: token %d at position %d is outside the vocabulary (%d)", tok, p, c.VocabSize)
		}
		copy(x, m.Embed[int(tok)*h:(int(tok)+1)*h])
		for li := range m.Layers {
			l := &m.Layers[li]
			refNorm(hb, x, l.AttnNorm, c.RMSNormEps)
			refMatVec(qkv, l.WQKV, hb, l.BQKV)
			for head := range c.NumHeads {
				refRope(qkv[head*hd:(head+1)*hd], p, inv)
			}
			for head := range c.NumKVHeads {
				refRope(qkv[q+head*hd:q+(head+1)*hd], p, inv)
			}
			kc[li] = append(kc[li], qkv[q:q+kv]...)
			vc[li] = append(vc[li], qkv[q+kv:]...)
			lo := 0
			if c.SlidingWindow > 0 {
				lo = max(0, p-c.SlidingWindow+1)
			}
			scale := 1 / math.Sqrt(float64(hd))
			for head := range c.NumHeads {
				kh := head / group
				qv := qkv[head*hd : (head+1)*hd]
				mx := math.Inf(-1)
				for j := lo; j <= p; j++ {
					kv := kc[li][j*kv+kh*hd : j*kv+(kh+1)*hd]
					s := 0.0
					for d := range hd {
						s += float64(qv[d]) * float64(kv[d])
					}
					scores[j] = s * scale
					mx = max(mx, scores[j])
				}
				sum := 0.0
				for j := lo; j <= p; j++ {
					scores[j] = math.Exp(scores[j] - mx)
					sum += scores[j]
				}
				o := att[head*hd : (head+1)*hd]
				for d := range hd {
					acc := 0.0
					for j := lo; j <= p; j++ {
						acc += scores[j] * float64(vc[li][j*kv+kh*hd+d])
					}
					o[d] = float32(acc / sum)
				}
			}
			refMatVec(tmp, l.WO, att, l.BO)
			for i := range x {
				x[i] += tmp[i]
			}
			refNorm(hb, x, l.MLPNorm, c.RMSNormEps)
			refMatVec(gu, l.WGateUp, hb, nil)
			for i := range act {
				g := float64(gu[i])
				act[i] = float32(g / (1 + math.Exp(-g)) * float64(gu[in+i]))
			}
			refMatVec(tmp, l.WDown, act, nil)
			for i := range x {
				x[i] += tmp[i]
			}
		}
		refNorm(hb, x, m.Norm, c.RMSNormEps)
		logits := make([]float32, c.VocabSize)
		refMatVec(logits, m.LMHead, hb, nil)
		out[p] = logits
	}
	return out, nil
}

// refNorm is RMSNorm: dst = x / sqrt(mean(x²) + eps) · w.
func refNorm(dst, x, w []float32, eps float64) {
	ss := 0.0
	for _, v := range x {
		ss += float64(v) * float64(v)
	}
	r := 1 / math.Sqrt(ss/float64(len(x))+eps)
	for i, v := range x {
		dst[i] = float32(float64(v) * r * float64(w[i]))
	}
}

// refMatVec is dst = W·x (+ b) with W of shape [len(dst) × len(x)].
func refMatVec(dst, w, x, b []float32) {
	n := len(x)
	for i := range dst {
		row := w[i*n : (i+1)*n]
		s := 0.0
		for j, v := range x {
			s += float64(row[j]) * float64(v)
		}
		if b != nil {
			s += float64(b[i])
		}
		dst[i] = float32(s)
	}
}

// refRope rotates pairs (i, i+half) of one head by position·inv[i]
// (transformers' rotate_half convention).
func refRope(v []float32, pos int, inv []float64) {
	half := len(v) / 2
	for i := range half {
		s, c := math.Sincos(float64(pos) * inv[i])
		x0, x1 := float64(v[i]), float64(v[i+half])
		v[i] = float32(x0*c - x1*s)
		v[i+half] = float32(x1*c + x0*s)
	}
}
