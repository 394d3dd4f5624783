package tinytools

import (
	"math"
)

// headScratch is one kv-head group's temporaries in the attention backward.
type headScratch struct {
	dP, pT, dsT []float32
}

// backScratch holds a worker's temporaries for the backward pass.
type backScratch struct {
	dx, dx2, dh, dact, dgate, dup, datt, dq, dkAll, dvAll []float32
	xT, vT                                                []float32
	heads                                                 []headScratch
}

// linearBack accumulates dx += dy·Wᵀ (wt is W in [out][in] layout; dx may be
// nil) and dW += xᵀ·dy, with xT = xᵀ ([in][T]) already computed.
func (m *model) linearBack(dx, dy, xT, wt, dW []float32, T, in, out int, par bool) {
	mm := m.kernels(par)
	if dx != nil {
		gemm(mm, T, out, in, dy, out, wt, in, dx, in)
	}
	gemm(mm, in, T, out, xT, T, dy, out, dW, out)
}

// backward accumulates the gradient of the loss into g, given dxOut, the
// gradient at the segment's final residual (nil: zero, as for a prompt
// prefix without loss). The gradient of the past keys and values goes into
// dPast (when the segment had a past), and inject, when set, is added to the
// gradient of the segment's own keys and values (the prefix receives the
// gradient its suffixes sent back this way).
func (m *model) backward(s *segment, wt *transposed, dxOut []float32, g *Weights, dPast, inject *pastKV, sc *backScratch, par bool) {
	c := m.w.Cfg
	d, qd, kvd, ff := c.Dim, c.QDim(), c.KVDim(), c.FF
	T, P := s.T, s.P
	N := P + T
	dx := grow(&sc.dx, T*d)
	if dxOut != nil {
		copy(dx, dxOut)
	}
	for l := c.Layers - 1; l >= 0; l-- {
		la := &s.layers[l]
		lw, lt, lg := m.w.layers[l], wt.layers[l], g.layers[l]

		// x_out = x2 + act·Wd
		dx2 := grow(&sc.dx2, T*d)
		copy(dx2, dx)
		dact := grow(&sc.dact, T*ff)
		xT := grow(&sc.xT, max(T*ff, T*d, T*qd))
		transpose(xT, la.act, T, ff)
		m.linearBack(dact, dx, xT[:T*ff], lt.down, lg.down, T, ff, d, par)
		dgate := grow(&sc.dgate, T*ff)
		dup := grow(&sc.dup, T*ff)
		for i, gv := range la.gate {
			sg := la.sg[i]
			silu := gv * sg
			dup[i] = dact[i] * silu
			dgate[i] = dact[i] * la.up[i] * sg * (1 + gv*(1-sg))
		}
		dh := grow(&sc.dh, T*d)
		transpose(xT, la.h2, T, d)
		m.linearBack(dh, dgate, xT[:T*d], lt.gate, lg.gate, T, d, ff, par)
		m.linearBack(dh, dup, xT[:T*d], lt.up, lg.up, T, d, ff, par)
		rmsNormBack(dx2, lg.mlpNorm, dh, la.x2, la.r2, lw.mlpNorm, T, d)

		// x2 = x + att·Wo
		copy(dx, dx2)
		datt := grow(&sc.datt, T*qd)
		transpose(xT, la.att, T, qd)
		m.linearBack(datt, dx2, xT[:T*qd], lt.o, lg.o, T, qd, d, par)

		dq := grow(&sc.dq, T*qd)
		dkAll := grow(&sc.dkAll, N*kvd)
		dvAll := grow(&sc.dvAll, N*kvd)
		m.attentionBack(la, sc, datt, dq, dkAll, dvAll, T, P, par)
		dk, dv := dkAll[P*kvd:], dvAll[P*kvd:]
		if dPast != nil && P > 0 {
			addTo(dPast.k[l][:P*kvd], dkAll[:P*kvd])
			addTo(dPast.v[l][:P*kvd], dvAll[:P*kvd])
		}
		if inject != nil {
			addTo(dk, inject.k[l][:T*kvd])
			addTo(dv, inject.v[l][:T*kvd])
		}
		m.rope.apply(dq, T, qd, c.Heads, s.pos0, true)
		m.rope.apply(dk, T, kvd, c.KVHeads, s.pos0, true)
		dh = grow(&sc.dh, T*d)
		transpose(xT, la.h1, T, d)
		m.linearBack(dh, dq, xT[:T*d], lt.q, lg.q, T, d, qd, par)
		m.linearBack(dh, dk, xT[:T*d], lt.k, lg.k, T, d, kvd, par)
		m.linearBack(dh, dv, xT[:T*d], lt.v, lg.v, T, d, kvd, par)
		rmsNormBack(dx, lg.attnNorm, dh, la.x, la.r1, lw.attnNorm, T, d)
	}
	for t, tok := range s.tokens {
		addTo(g.embed[int(tok)*d:(int(tok)+1)*d], dx[t*d:(t+1)*d])
	}
}

func addTo(dst, src []float32) {
	dst = dst[:len(src)]
	for i, v := range src {
		dst[i] += v
	}
}

// attentionBack computes dq (T×qd) and accumulates dkAll and dvAll
// ((P+T)×kvd) from datt (T×qd), the gradient of the attention output.
func (m *model) attentionBack(la *layerActs, sc *backScratch, datt, dq, dkAll, dvAll []float32, T, P int, par bool) {
	c := m.w.Cfg
	qd, kvd, hd := c.QDim(), c.KVDim(), c.HeadDim()
	N := P + T
	vT := grow(&sc.vT, c.KVHeads*hd*N)
	for j := range N {
		row := la.vAll[j*kvd : (j+1)*kvd]
		for hk := range c.KVHeads {
			base := hk * hd * N
			for i := range hd {
				vT[base+i*N+j] = row[hk*hd+i]
			}
		}
	}
	if len(sc.heads) < c.KVHeads {
		sc.heads = make([]headScratch, c.KVHeads)
	}
	scale := float32(1 / math.Sqrt(float64(hd)))
	group := c.Heads / c.KVHeads
	doGroup := func(hk int) {
		hs := &sc.heads[hk]
		for h := hk * group; h < (hk+1)*group; h++ {
			Pm := la.probs[h*T*N : (h+1)*T*N]
			dO := datt[h*hd:]
			dP := grow(&hs.dP, T*N)
			gemm(m.mm1, T, hd, N, dO, qd, vT[hk*hd*N:], N, dP, N)
			pT := grow(&hs.pT, N*T)
			transpose(pT, Pm, T, N)
			gemm(m.mm1, N, T, hd, pT, T, dO, qd, dvAll[hk*hd:], kvd)
			for t := range T {
				pr, dr := Pm[t*N:(t+1)*N], dP[t*N:(t+1)*N]
				valid := P + t + 1
				var dotv float32
				for j := range valid {
					dotv += pr[j] * dr[j]
				}
				for j := range valid {
					dr[j] = pr[j] * (dr[j] - dotv) * scale
				}
				clear(dr[valid:])
			}
			gemm(m.mm1, T, N, hd, dP, N, la.kAll[hk*hd:], kvd, dq[h*hd:], qd)
			dsT := grow(&hs.dsT, N*T)
			transpose(dsT, dP, T, N)
			gemm(m.mm1, N, T, hd, dsT, T, la.q[h*hd:], qd, dkAll[hk*hd:], kvd)
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

// headLoss computes the cross-entropy of the positions pos (indices into
// the segment) predicting targets, adds dLoss/dxOut·scale into dxOut and
// the head's embedding gradient into g, and returns the summed loss (not
// scaled). scale is 1/(number of loss tokens in the batch).
func (m *model) headLoss(s *segment, wt *transposed, pos []int, targets []int32, scale float32, dxOut []float32, g *Weights, sc *headLossScratch) float64 {
	c := m.w.Cfg
	d, V := c.Dim, c.Vocab
	n := len(pos)
	clear(dxOut[:s.T*d])
	if n == 0 {
		return 0
	}
	hsel := grow(&sc.hsel, n*d)
	for i, p := range pos {
		copy(hsel[i*d:(i+1)*d], s.hF[p*d:(p+1)*d])
	}
	logits := grow(&sc.logits, n*V)
	gemm(m.mm1, n, d, V, hsel, d, wt.embedT, V, logits, V)
	var loss float64
	for i := range n {
		row := logits[i*V : (i+1)*V]
		mx := row[0]
		for _, v := range row {
			mx = max(mx, v)
		}
		tgtLogit := row[targets[i]] - mx
		var sum float64
		for j, v := range row {
			e := math.Exp(float64(v - mx))
			row[j] = float32(e)
			sum += e
		}
		tgt := targets[i]
		loss += math.Log(sum) - float64(tgtLogit)
		inv := float32(1/sum) * scale
		for j := range row {
			row[j] *= inv
		}
		row[tgt] -= scale
	}
	// dh = dlogits · E ; dE += dlogitsᵀ · h
	dhsel := grow(&sc.dhsel, n*d)
	gemm(m.mm1, n, V, d, logits, V, m.w.embed, d, dhsel, d)
	lT := grow(&sc.lT, V*n)
	transpose(lT, logits, n, V)
	gemm(m.mm1, V, n, d, lT, n, hsel, d, g.embed, d)
	dhF := grow(&sc.dhF, s.T*d)
	for i, p := range pos {
		copy(dhF[p*d:(p+1)*d], dhsel[i*d:(i+1)*d])
	}
	rmsNormBack(dxOut, g.norm, dhF, s.xOut, s.rF, m.w.norm, s.T, d)
	return loss
}

type headLossScratch struct {
	hsel, logits, dhsel, lT, dhF []float32
}
