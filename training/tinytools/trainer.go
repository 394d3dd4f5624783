package tinytools

import (
	"math"
	"runtime"
	"sync"
	"sync/atomic"
)

// trainer computes the gradient of a batch: the shared prefix forward once,
// the suffixes in parallel goroutines (each with its own gradient buffer),
// then the prefix backward with the key/value gradients the suffixes sent
// back.
type trainer struct {
	m       *model
	wt      *transposed
	workers int

	prefix   segment
	prefixSc backScratch
	ws       []*worker
}

type worker struct {
	grad  *Weights
	dPast *pastKV
	seg   segment
	sc    backScratch
	hsc   headLossScratch
	dxOut []float32
	loss  float64
}

func newTrainer(w *Weights, workers int) *trainer {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	t := &trainer{m: newModel(w), workers: workers}
	for range workers {
		g, _ := NewWeights(w.Cfg)
		t.ws = append(t.ws, &worker{grad: g})
	}
	return t
}

// grad computes the mean loss over the batch's trained tokens and leaves its
// gradient in t.ws[0].grad. With noGrad only the loss is computed.
func (t *trainer) grad(b Batch, noGrad bool) (loss float64, ntok int) {
	c := t.m.w.Cfg
	kvd := c.KVDim()
	t.wt = t.m.w.transposed(t.wt)
	t.m.forward(&t.prefix, b.Prefix, 0, nil, true)
	prefixKV := t.prefix.kvOf()
	P := len(b.Prefix)
	for _, s := range b.Seqs {
		ntok += len(s.Pos)
	}
	if ntok == 0 {
		return 0, 0
	}
	scale := float32(1 / float64(ntok))
	var next atomic.Int64
	var wg sync.WaitGroup
	for _, w := range t.ws {
		w.loss = 0
		if !noGrad {
			clear(w.grad.Flat)
			if w.dPast == nil || w.dPast.P < P {
				w.dPast = &pastKV{P: P, k: make([][]float32, c.Layers), v: make([][]float32, c.Layers)}
				for l := range c.Layers {
					w.dPast.k[l] = make([]float32, P*kvd)
					w.dPast.v[l] = make([]float32, P*kvd)
				}
			}
			w.dPast.P = P
			for l := range c.Layers {
				clear(w.dPast.k[l])
				clear(w.dPast.v[l])
			}
		}
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= len(b.Seqs) {
					return
				}
				s := b.Seqs[i]
				t.m.forward(&w.seg, s.Tokens, P, prefixKV, false)
				dx := grow(&w.dxOut, len(s.Tokens)*c.Dim)
				if noGrad {
					w.loss += t.m.lossOnly(&w.seg, t.wt, s.Pos, s.Targets, &w.hsc)
					continue
				}
				w.loss += t.m.headLoss(&w.seg, t.wt, s.Pos, s.Targets, scale, dx, w.grad, &w.hsc)
				t.m.backward(&w.seg, t.wt, dx, w.grad, w.dPast, nil, &w.sc, false)
			}
		})
	}
	wg.Wait()
	for _, w := range t.ws {
		loss += w.loss
	}
	if noGrad {
		return loss / float64(ntok), ntok
	}
	g0 := t.ws[0]
	for _, w := range t.ws[1:] {
		addTo(g0.grad.Flat, w.grad.Flat)
		for l := range c.Layers {
			addTo(g0.dPast.k[l][:P*kvd], w.dPast.k[l][:P*kvd])
			addTo(g0.dPast.v[l][:P*kvd], w.dPast.v[l][:P*kvd])
		}
	}
	t.m.backward(&t.prefix, t.wt, nil, g0.grad, nil, g0.dPast, &t.prefixSc, true)
	return loss / float64(ntok), ntok
}

// lossOnly is headLoss without the gradient.
func (m *model) lossOnly(s *segment, wt *transposed, pos []int, targets []int32, sc *headLossScratch) float64 {
	c := m.w.Cfg
	d, V := c.Dim, c.Vocab
	n := len(pos)
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
		var sum float64
		for _, v := range row {
			sum += math.Exp(float64(v - mx))
		}
		loss += math.Log(sum) - float64(row[targets[i]]-mx)
	}
	return loss
}

// adamW is the AdamW optimizer over a flat parameter vector.
type adamW struct {
	M, V              []float32
	Step              int
	beta1, beta2, eps float64
	weightDecay       float64
	decay             []bool
}

func newAdamW(w *Weights, weightDecay float64) *adamW {
	return &adamW{M: make([]float32, len(w.Flat)), V: make([]float32, len(w.Flat)),
		beta1: 0.9, beta2: 0.95, eps: 1e-8, weightDecay: weightDecay, decay: w.decayMask()}
}

// update applies one step with learning rate lr.
func (a *adamW) update(p, g []float32, lr float64) {
	a.Step++
	bc1 := 1 - math.Pow(a.beta1, float64(a.Step))
	bc2 := 1 - math.Pow(a.beta2, float64(a.Step))
	b1, b2 := float32(a.beta1), float32(a.beta2)
	stepSize := float32(lr / bc1)
	invBC2 := float32(1 / bc2)
	eps := float32(a.eps)
	wd := float32(lr * a.weightDecay)
	parallelFor(len(p), 0, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			gi := g[i]
			m := b1*a.M[i] + (1-b1)*gi
			v := b2*a.V[i] + (1-b2)*gi*gi
			a.M[i], a.V[i] = m, v
			if a.decay[i] {
				p[i] -= wd * p[i]
			}
			p[i] -= stepSize * m / (float32(math.Sqrt(float64(v*invBC2))) + eps)
		}
	})
}

// clipNorm scales g to global L2 norm at most maxNorm and returns the norm
// before clipping.
func clipNorm(g []float32, maxNorm float64) float64 {
	var ss float64
	for _, v := range g {
		ss += float64(v) * float64(v)
	}
	n := math.Sqrt(ss)
	if n > maxNorm {
		s := float32(maxNorm / n)
		for i := range g {
			g[i] *= s
		}
	}
	return n
}

// lrAt is the learning rate schedule: linear warmup, then cosine decay to
// minFrac of the peak at the last step.
func lrAt(step, total, warmup int, peak, minFrac float64) float64 {
	if step < warmup {
		return peak * float64(step+1) / float64(warmup)
	}
	if total <= warmup {
		return peak
	}
	p := float64(step-warmup) / float64(max(1, total-1-warmup))
	p = min(p, 1)
	return peak * (minFrac + (1-minFrac)*0.5*(1+math.Cos(math.Pi*p)))
}
