package tinytools

import (
	"math"

	"github.com/pitstop-llm/pitstop/models/kernel"
)

// ropeTable holds cos and sin of every position's angles, [pos][headDim/2].
type ropeTable struct {
	half     int
	cos, sin []float32
}

func newRope(c Config) *ropeTable {
	half := c.HeadDim() / 2
	t := &ropeTable{half: half, cos: make([]float32, c.MaxPos*half), sin: make([]float32, c.MaxPos*half)}
	for i := range half {
		inv := 1 / math.Pow(c.RopeTheta, float64(2*i)/float64(c.HeadDim()))
		for p := range c.MaxPos {
			a := float64(p) * inv
			t.cos[p*half+i] = float32(math.Cos(a))
			t.sin[p*half+i] = float32(math.Sin(a))
		}
	}
	return t
}

// apply rotates x (rows of nHeads×headDim, row stride ld) in place, row t at
// position pos0+t, the Hugging Face "rotate_half" way: pairs (i, i+half).
// inverse applies the transpose (the backward of the rotation).
func (rt *ropeTable) apply(x []float32, rows, ld, nHeads, pos0 int, inverse bool) {
	half := rt.half
	for t := range rows {
		cs := rt.cos[(pos0+t)*half : (pos0+t+1)*half]
		sn := rt.sin[(pos0+t)*half : (pos0+t+1)*half]
		for h := range nHeads {
			v := x[t*ld+h*2*half : t*ld+(h+1)*2*half]
			lo, hi := v[:half], v[half:2*half]
			for i := range half {
				a, b := lo[i], hi[i]
				c, s := cs[i], sn[i]
				if inverse {
					s = -s
				}
				lo[i] = a*c - b*s
				hi[i] = b*c + a*s
			}
		}
	}
}

// grow returns buf resized to n zeroed elements, reusing its storage.
func grow(buf *[]float32, n int) []float32 {
	if cap(*buf) < n {
		*buf = make([]float32, n)
	} else {
		*buf = (*buf)[:n]
		clear(*buf)
	}
	return *buf
}

// layerActs are one layer's activations over a segment, kept for the
// backward pass.
type layerActs struct {
	x, r1, h1     []float32 // input residual, inverse RMS, normed input
	q, k, v       []float32 // projections (q and k rotated)
	kAll, vAll    []float32 // past + own keys and values, (P+T)×kvd
	kT            []float32 // keys per kv head transposed: [kvHeads][headDim][P+T]
	probs         []float32 // attention weights, [heads][T][P+T]
	att           []float32 // attention output before o_proj, T×qd
	x2, r2, h2    []float32 // residual after attention, inverse RMS, normed
	gate, up, act []float32 // MLP: gate and up projections, silu(gate)·up
	sg            []float32 // sigmoid(gate)
}

// segment is one forward pass over T tokens at positions pos0.. that attend
// to P past positions (a shared prompt prefix or a KV cache) and to
// themselves, causally.
type segment struct {
	T, P, pos0 int
	tokens     []int32
	layers     []layerActs
	xOut       []float32 // final residual, T×d
	rF         []float32 // final inverse RMS
	hF         []float32 // final normed hidden states, T×d
}

// pastKV is the keys (rotated) and values of earlier positions, per layer,
// P×kvd each.
type pastKV struct {
	P    int
	k, v [][]float32
}

// kvOf returns the segment's own keys and values as a past for later
// segments.
func (s *segment) kvOf() *pastKV {
	p := &pastKV{P: s.T}
	for _, la := range s.layers {
		p.k = append(p.k, la.k)
		p.v = append(p.v, la.v)
	}
	return p
}

// model is the forward/backward machinery of one set of weights.
type model struct {
	w    *Weights
	rope *ropeTable
	// mm runs products on GOMAXPROCS goroutines, mm1 on the caller's alone
	// (inside loops that are parallel themselves).
	mm, mm1 *kernel.Kernels
}

func newModel(w *Weights) *model {
	mm := kernel.New(0)
	return &model{w: w, rope: newRope(w.Cfg), mm: mm, mm1: mm.Serial()}
}

// kernels returns the parallel kernels when par, else the serial ones.
func (m *model) kernels(par bool) *kernel.Kernels {
	if par {
		return m.mm
	}
	return m.mm1
}

// linear computes y[T×out] = x[T×in] · W[in×out] (y zeroed first).
func (m *model) linear(y, x, w []float32, T, in, out int, par bool) {
	clear(y[:T*out])
	gemm(m.kernels(par), T, in, out, x, in, w, out, y, out)
}

// rmsNorm writes y = x·r·g per row and r = 1/sqrt(mean(x²)+eps).
func rmsNorm(y, r, x, g []float32, T, d int, eps float64) {
	for t := range T {
		xr := x[t*d : (t+1)*d]
		var ss float64
		for _, v := range xr {
			ss += float64(v) * float64(v)
		}
		inv := float32(1 / math.Sqrt(ss/float64(d)+eps))
		r[t] = inv
		yr := y[t*d : (t+1)*d]
		for i, v := range xr {
			yr[i] = v * inv * g[i]
		}
	}
}

// rmsNormBack adds the gradient of x to dx and of g to dg, given dy.
func rmsNormBack(dx, dg, dy, x, r, g []float32, T, d int) {
	for t := range T {
		xr, dyr, dxr := x[t*d:(t+1)*d], dy[t*d:(t+1)*d], dx[t*d:(t+1)*d]
		inv := r[t]
		var s float64
		for i := range d {
			gd := g[i] * dyr[i]
			s += float64(gd) * float64(xr[i])
			dg[i] += dyr[i] * xr[i] * inv
		}
		c := float32(s) * inv * inv * inv / float32(d)
		for i := range d {
			dxr[i] += inv*g[i]*dyr[i] - c*xr[i]
		}
	}
}

// forward runs the segment's tokens through the model. past may be nil. par
// splits the big products across goroutines (for a long shared prefix).
func (m *model) forward(s *segment, tokens []int32, pos0 int, past *pastKV, par bool) {
	c := m.w.Cfg
	d, qd, kvd, ff := c.Dim, c.QDim(), c.KVDim(), c.FF
	T := len(tokens)
	P := 0
	if past != nil {
		P = past.P
	}
	if pos0+T > c.MaxPos {
		panic("tinytools: sequence longer than max_position_embeddings")
	}
	s.T, s.P, s.pos0, s.tokens = T, P, pos0, tokens
	if len(s.layers) != c.Layers {
		s.layers = make([]layerActs, c.Layers)
	}
	x := grow(&s.layers[0].x, T*d)
	for t, tok := range tokens {
		copy(x[t*d:(t+1)*d], m.w.embed[int(tok)*d:(int(tok)+1)*d])
	}
	for l := range c.Layers {
		la := &s.layers[l]
		lw := m.w.layers[l]
		x = la.x // filled above (layer 0) or by the layer below
		grow(&la.r1, T)
		grow(&la.h1, T*d)
		rmsNorm(la.h1, la.r1, x, lw.attnNorm, T, d, c.NormEps)
		m.linear(grow(&la.q, T*qd), la.h1, lw.q, T, d, qd, par)
		m.linear(grow(&la.k, T*kvd), la.h1, lw.k, T, d, kvd, par)
		m.linear(grow(&la.v, T*kvd), la.h1, lw.v, T, d, kvd, par)
		m.rope.apply(la.q, T, qd, c.Heads, pos0, false)
		m.rope.apply(la.k, T, kvd, c.KVHeads, pos0, false)
		m.attention(la, past, l, T, P, par)
		// x2 = x + att·Wo
		x2 := grow(&la.x2, T*d)
		m.linear(x2, la.att, lw.o, T, qd, d, par)
		for i := range x2 {
			x2[i] += x[i]
		}
		grow(&la.r2, T)
		grow(&la.h2, T*d)
		rmsNorm(la.h2, la.r2, x2, lw.mlpNorm, T, d, c.NormEps)
		m.linear(grow(&la.gate, T*ff), la.h2, lw.gate, T, d, ff, par)
		m.linear(grow(&la.up, T*ff), la.h2, lw.up, T, d, ff, par)
		act := grow(&la.act, T*ff)
		sg := grow(&la.sg, T*ff)
		sigmoids(sg, la.gate)
		for i, g := range la.gate {
			act[i] = g * sg[i] * la.up[i]
		}
		var next []float32
		if l+1 < c.Layers {
			next = grow(&s.layers[l+1].x, T*d)
		} else {
			next = grow(&s.xOut, T*d)
		}
		m.linear(next, act, lw.down, T, ff, d, par)
		for i := range next {
			next[i] += x2[i]
		}
		x = next
	}
	grow(&s.rF, T)
	grow(&s.hF, T*d)
	rmsNorm(s.hF, s.rF, s.xOut, m.w.norm, T, d, c.NormEps)
}

// attention fills la.kAll, la.vAll, la.kT, la.probs and la.att.
func (m *model) attention(la *layerActs, past *pastKV, l, T, P int, par bool) {
	c := m.w.Cfg
	qd, kvd, hd := c.QDim(), c.KVDim(), c.HeadDim()
	N := P + T
	kAll := grow(&la.kAll, N*kvd)
	vAll := grow(&la.vAll, N*kvd)
	if P > 0 {
		copy(kAll, past.k[l][:P*kvd])
		copy(vAll, past.v[l][:P*kvd])
	}
	copy(kAll[P*kvd:], la.k)
	copy(vAll[P*kvd:], la.v)
	kT := grow(&la.kT, c.KVHeads*hd*N)
	for j := range N {
		row := kAll[j*kvd : (j+1)*kvd]
		for hk := range c.KVHeads {
			base := hk * hd * N
			for i := range hd {
				kT[base+i*N+j] = row[hk*hd+i]
			}
		}
	}
	probs := grow(&la.probs, c.Heads*T*N)
	att := grow(&la.att, T*qd)
	scale := float32(1 / math.Sqrt(float64(hd)))
	group := c.Heads / c.KVHeads
	doGroup := func(hk int) {
		for h := hk * group; h < (hk+1)*group; h++ {
			S := probs[h*T*N : (h+1)*T*N]
			gemm(m.mm1, T, hd, N, la.q[h*hd:], qd, kT[hk*hd*N:], N, S, N)
			for t := range T {
				row := S[t*N : (t+1)*N]
				valid := P + t + 1
				mx := float32(math.Inf(-1))
				for j := range valid {
					row[j] *= scale
					mx = max(mx, row[j])
				}
				inv := 1 / softmaxExp(row[:valid], mx)
				for j := range valid {
					row[j] *= inv
				}
				clear(row[valid:])
			}
			gemm(m.mm1, T, N, hd, S, N, vAll[hk*hd:], kvd, att[h*hd:], qd)
		}
	}
	if par {
		parallelFor(c.KVHeads, 0, func(lo, hi int) {
			for hk := lo; hk < hi; hk++ {
				doGroup(hk)
			}
		})
	} else {
		for hk := range c.KVHeads {
			doGroup(hk)
		}
	}
}
