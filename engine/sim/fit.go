package sim

import (
	"errors"
	"fmt"
	"math"
)

// IterSample is one measured iteration, in the terms of IterCost: what the
// batch held and how long its forward pass (and sampling) took, swaps apart.
type IterSample struct {
	PrefillTokens float64 `json:"prefill_tokens"` // Σ Len of prefill items
	PrefillAttn   float64 `json:"prefill_attn"`   // Σ Len·(Start+Len) of prefill items
	Decodes       float64 `json:"decodes"`        // decode items
	DecodeCtx     float64 `json:"decode_ctx"`     // Σ (Start+1) of decode items
	Seconds       float64 `json:"seconds"`
}

// SwapSample is one iteration's measured swaps.
type SwapSample struct {
	Blocks  int     `json:"blocks"`
	Bytes   int64   `json:"bytes"`
	Seconds float64 `json:"seconds"`
}

// FitStats describe how well a fit explains its samples.
type FitStats struct {
	Samples int     `json:"samples"`
	R2      float64 `json:"r2"`       // coefficient of determination
	RelRMSE float64 `json:"rel_rmse"` // RMS of residuals over the mean measured time
	// MeanAbsPctErr is the mean of |predicted − measured| / measured.
	MeanAbsPctErr float64 `json:"mean_abs_pct_err"`
	// TotalErr is Σpredicted / Σmeasured − 1: what a replay's busy time
	// would be off by.
	TotalErr float64 `json:"total_err"`
}

// features are the regressors of IterCost, in its field order.
func (s *IterSample) features() [5]float64 {
	return [5]float64{1, s.PrefillTokens, s.PrefillAttn, s.Decodes, s.DecodeCtx}
}

func costFrom(beta [5]float64) IterCost {
	return IterCost{Base: beta[0], PrefillToken: beta[1], PrefillAttn: beta[2], DecodeSeq: beta[3], DecodeCtx: beta[4]}
}

// Predict is the modelled time of a sample's batch.
func (c IterCost) Predict(s IterSample) float64 {
	return c.Base + c.PrefillToken*s.PrefillTokens + c.PrefillAttn*s.PrefillAttn + c.DecodeSeq*s.Decodes + c.DecodeCtx*s.DecodeCtx
}

// FitIterCost fits IterCost to measured iterations by non-negative least
// squares (Lawson–Hanson on column-scaled normal equations): every
// coefficient is >= 0, as profiles require. A term whose regressor never
// varies from zero (no decodes measured, say) gets 0.
func FitIterCost(samples []IterSample) (IterCost, FitStats, error) {
	if len(samples) < 5 {
		return IterCost{}, FitStats{}, fmt.Errorf("sim: fit needs at least 5 iterations, got %d", len(samples))
	}
	const k = 5
	// Column scales: RMS of each regressor.
	var scale [k]float64
	for i := range samples {
		f := samples[i].features()
		for j := range k {
			scale[j] += f[j] * f[j]
		}
	}
	for j := range k {
		scale[j] = math.Sqrt(scale[j] / float64(len(samples)))
		if scale[j] == 0 {
			scale[j] = 1
		}
	}
	var A [k][k]float64
	var b [k]float64
	for i := range samples {
		s := &samples[i]
		if !(s.Seconds >= 0) || math.IsInf(s.Seconds, 0) {
			return IterCost{}, FitStats{}, fmt.Errorf("sim: iteration %d has bad time %g", i, s.Seconds)
		}
		f := s.features()
		for j := range k {
			f[j] /= scale[j]
		}
		for r := range k {
			b[r] += f[r] * s.Seconds
			for c := range k {
				A[r][c] += f[r] * f[c]
			}
		}
	}
	beta, err := nnls(A, b)
	if err != nil {
		return IterCost{}, FitStats{}, err
	}
	for j := range k {
		beta[j] /= scale[j]
	}
	cost := costFrom(beta)
	if cost.Base+cost.PrefillToken+cost.DecodeSeq <= 0 {
		// The context terms explained everything (NNLS put the fixed,
		// per-token and per-sequence terms at 0): an iteration still has
		// a fixed cost, at most the cheapest measured one; take a
		// thousandth of it so that a profile stays valid and the fit is
		// barely changed.
		cost.Base = minSeconds(samples) / 1000
	}
	return cost, iterStats(cost, samples), nil
}

// minSeconds is the cheapest positive measured iteration, or 1 µs.
func minSeconds(samples []IterSample) float64 {
	m := math.Inf(1)
	for _, s := range samples {
		if s.Seconds > 0 {
			m = min(m, s.Seconds)
		}
	}
	if math.IsInf(m, 1) {
		return 1e-6
	}
	return m
}

// Evaluate measures how well cost predicts samples.
func Evaluate(cost IterCost, samples []IterSample) FitStats { return iterStats(cost, samples) }

func iterStats(cost IterCost, samples []IterSample) FitStats {
	st := FitStats{Samples: len(samples)}
	if len(samples) == 0 {
		return st
	}
	mean := 0.0
	for _, s := range samples {
		mean += s.Seconds
	}
	mean /= float64(len(samples))
	var ssRes, ssTot, pred, meas, ape float64
	n := 0
	for _, s := range samples {
		p := cost.Predict(s)
		ssRes += (p - s.Seconds) * (p - s.Seconds)
		ssTot += (s.Seconds - mean) * (s.Seconds - mean)
		pred += p
		meas += s.Seconds
		if s.Seconds > 0 {
			ape += math.Abs(p-s.Seconds) / s.Seconds
			n++
		}
	}
	if ssTot > 0 {
		st.R2 = 1 - ssRes/ssTot
	}
	if mean > 0 {
		st.RelRMSE = math.Sqrt(ssRes/float64(len(samples))) / mean
	}
	if n > 0 {
		st.MeanAbsPctErr = ape / float64(n)
	}
	if meas > 0 {
		st.TotalErr = pred/meas - 1
	}
	return st
}

// FitSwapCost fits a per-block swap cost (each block one copy, as the CPU
// executor's per-block mover does): seconds = blocks · (bytes per block /
// bandwidth), least squares through the origin. The per-transfer overhead
// cannot be told apart from bandwidth when every transfer is one block, so it
// is folded into the bandwidth and PerTransfer is 0.
func FitSwapCost(samples []SwapSample) (SwapCost, error) {
	var sxy, sxx float64
	for _, s := range samples {
		x := float64(s.Bytes)
		sxy += x * s.Seconds
		sxx += x * x
	}
	if sxx == 0 || sxy <= 0 {
		return SwapCost{}, errors.New("sim: no swap measurements to fit")
	}
	secPerByte := sxy / sxx
	return SwapCost{Bandwidth: 1 / secPerByte, CopiesPerBlock: 1}, nil
}

// nnls solves min ‖Xβ − y‖² s.t. β >= 0 given A = XᵀX and b = Xᵀy
// (Lawson & Hanson 1974, in normal-equation form).
func nnls(A [5][5]float64, b [5]float64) ([5]float64, error) {
	const k = 5
	var x [5]float64
	var passive [5]bool
	tol := 1e-12
	for range 100 {
		// Gradient w = b − A·x.
		var w [5]float64
		for r := range k {
			w[r] = b[r]
			for c := range k {
				w[r] -= A[r][c] * x[c]
			}
		}
		best, bw := -1, tol*(1+maxAbs(b[:]))
		for j := range k {
			if !passive[j] && w[j] > bw && A[j][j] > 0 {
				best, bw = j, w[j]
			}
		}
		if best < 0 {
			return x, nil
		}
		passive[best] = true
		for range 100 {
			s, ok := solvePassive(A, b, passive)
			if !ok {
				passive[best] = false // singular with this column: leave it out
				break
			}
			feasible := true
			for j := range k {
				if passive[j] && s[j] <= 0 {
					feasible = false
				}
			}
			if feasible {
				x = s
				break
			}
			alpha := math.Inf(1)
			for j := range k {
				if passive[j] && s[j] <= 0 {
					alpha = min(alpha, x[j]/(x[j]-s[j]))
				}
			}
			for j := range k {
				x[j] += alpha * (s[j] - x[j])
				if passive[j] && x[j] <= tol {
					passive[j], x[j] = false, 0
				}
			}
		}
	}
	return x, errors.New("sim: non-negative least squares did not converge")
}

// solvePassive solves A_PP·s_P = b_P by Gaussian elimination with partial
// pivoting; s is zero outside P.
func solvePassive(A [5][5]float64, b [5]float64, passive [5]bool) ([5]float64, bool) {
	var idx []int
	for j := range 5 {
		if passive[j] {
			idx = append(idx, j)
		}
	}
	n := len(idx)
	m := make([][]float64, n)
	for r := range n {
		m[r] = make([]float64, n+1)
		for c := range n {
			m[r][c] = A[idx[r]][idx[c]]
		}
		m[r][n] = b[idx[r]]
	}
	for c := range n {
		p := c
		for r := c + 1; r < n; r++ {
			if math.Abs(m[r][c]) > math.Abs(m[p][c]) {
				p = r
			}
		}
		if math.Abs(m[p][c]) < 1e-12*float64(len(A)) {
			return [5]float64{}, false
		}
		m[c], m[p] = m[p], m[c]
		for r := c + 1; r < n; r++ {
			f := m[r][c] / m[c][c]
			for cc := c; cc <= n; cc++ {
				m[r][cc] -= f * m[c][cc]
			}
		}
	}
	var s [5]float64
	for r := n - 1; r >= 0; r-- {
		v := m[r][n]
		for c := r + 1; c < n; c++ {
			v -= m[r][c] * s[idx[c]]
		}
		s[idx[r]] = v / m[r][r]
	}
	return s, true
}

func maxAbs(v []float64) float64 {
	m := 0.0
	for _, x := range v {
		m = max(m, math.Abs(x))
	}
	return m
}

// FitProfile returns a copy of base with its iteration cost fitted to iters
// and, when swaps were measured, its swap cost fitted to swaps (per-block
// copies, no overlap). provenance lines are appended to the profile's.
func FitProfile(base Profile, iters []IterSample, swaps []SwapSample, provenance ...string) (*Profile, FitStats, error) {
	cost, st, err := FitIterCost(iters)
	if err != nil {
		return nil, st, err
	}
	p := base
	p.Iter = cost
	p.Provenance = append(append([]string(nil), base.Provenance...), provenance...)
	p.Provenance = append(p.Provenance, fmt.Sprintf("iter fitted by non-negative least squares on %d measured iterations: R² %.4f, relative RMSE %.3f, total time error %+.2f%%", st.Samples, st.R2, st.RelRMSE, 100*st.TotalErr))
	if len(swaps) > 0 {
		sc, err := FitSwapCost(swaps)
		if err == nil {
			sc.BlocksPerIter = base.Swap.BlocksPerIter
			p.Swap = sc
			p.Provenance = append(p.Provenance, fmt.Sprintf("swap fitted on %d measured swap iterations: per-block copies at %.3g GB/s effective", len(swaps), sc.Bandwidth/1e9))
		}
	}
	if err := p.Validate(); err != nil {
		return nil, st, err
	}
	return &p, st, nil
}
