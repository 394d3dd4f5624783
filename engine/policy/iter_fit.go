package policy

import (
	"math"

	"github.com/pitstop-llm/pitstop/engine"
	"github.com/pitstop-llm/pitstop/handling"
)

// iterFit is an iteration's duration learned online (balance's "-fit"):
// the least-squares fit over every iteration seen of
//
//	duration ≈ base + prompt·(prompt tokens) + decode·(decodes) + ctx·(Σ context the decodes read)
//
// The cost model's IterBase + PerToken·tokens prices a decode like one
// prompt token; a decode reads its whole context's KV (the simulator's
// profiles charge about 20 µs + 65 ns per context token on the A100 Llama
// profile, against 84 µs a prompt token), so on long contexts an
// iteration of decodes costs several times what the model says, and a
// smaller chunk, which makes the backlog last more of them, costs the
// waiting calls more than the model counts. The normal equations are kept
// (4×4, summed), so the fit costs nothing to update and is solved when
// asked. Iterations that moved KV are left out: their swap time is not a
// function of these counts.
type iterFit struct {
	xx [4][4]float64
	xy [4]float64
	n  int
	// beta is the last solve, valid while solved == n.
	beta   [4]float64
	ok     bool
	solved int
}

// iterFeatures is an iteration's regressors.
func iterFeatures(prompt, decodes, ctx float64) [4]float64 {
	return [4]float64{1, prompt, decodes, ctx}
}

func (f *iterFit) observe(it *engine.IterationStats) {
	if it.SwapOutBlocks > 0 || it.SwapInBlocks > 0 || it.PrefillTokens+it.DecodeTokens == 0 {
		return
	}
	f.add(iterFeatures(float64(it.PrefillTokens), float64(it.DecodeTokens), float64(it.DecodeContext)), it.Duration.Seconds())
}

func (f *iterFit) add(x [4]float64, y float64) {
	for i := range 4 {
		for j := range 4 {
			f.xx[i][j] += x[i] * x[j]
		}
		f.xy[i] += x[i] * y
	}
	f.n++
}

// coef is the fit (base, per prompt token, per decode, per context token),
// false until it is determined: fewer iterations than twice the
// regressors, or a singular system. A negative coefficient (a regressor
// that never varied apart from another) is taken as 0.
func (f *iterFit) coef() ([4]float64, bool) {
	if f.solved == f.n && f.n > 0 {
		return f.beta, f.ok
	}
	f.solved = f.n
	f.ok = false
	if f.n < 8 {
		return f.beta, false
	}
	// Scale each regressor to unit diagonal (the counts span 1 to 1e6).
	var a [4][5]float64
	var s [4]float64
	for i := range 4 {
		s[i] = math.Sqrt(f.xx[i][i])
		if s[i] == 0 {
			s[i] = 1
		}
	}
	for i := range 4 {
		for j := range 4 {
			a[i][j] = f.xx[i][j] / (s[i] * s[j])
		}
		a[i][i] += 1e-12 // a regressor that never varies gets 0, not NaN
		a[i][4] = f.xy[i] / s[i]
	}
	b, ok := solve4(a)
	if !ok {
		return f.beta, false
	}
	for i := range 4 {
		f.beta[i] = max(b[i]/s[i], 0)
	}
	f.ok = true
	return f.beta, true
}

// solve4 is Gaussian elimination with partial pivoting on an augmented 4×5
// system.
func solve4(a [4][5]float64) ([4]float64, bool) {
	var x [4]float64
	for c := range 4 {
		p := c
		for r := c + 1; r < 4; r++ {
			if math.Abs(a[r][c]) > math.Abs(a[p][c]) {
				p = r
			}
		}
		if math.Abs(a[p][c]) < 1e-15 {
			return x, false
		}
		a[c], a[p] = a[p], a[c]
		for r := c + 1; r < 4; r++ {
			k := a[r][c] / a[c][c]
			for j := c; j < 5; j++ {
				a[r][j] -= k * a[c][j]
			}
		}
	}
	for r := 3; r >= 0; r-- {
		v := a[r][4]
		for j := r + 1; j < 4; j++ {
			v -= a[r][j] * x[j]
		}
		x[r] = v / a[r][r]
	}
	return x, true
}

// fixed is the time of an iteration of n decodes reading ctx context
// tokens and no prompt tokens; the cost model's IterTime(n) until the fit
// is determined.
func (f *iterFit) fixed(m handling.CostModel, n, ctx int) float64 {
	b, ok := f.coef()
	if !ok {
		return m.IterTime(n)
	}
	return b[0] + b[2]*float64(n) + b[3]*float64(ctx)
}

// perToken is the fitted time of a prompt token, the cost model's PerToken
// until the fit is determined (or if it fits none).
func (f *iterFit) perToken(m handling.CostModel) float64 {
	if b, ok := f.coef(); ok && b[1] > 0 {
		return b[1]
	}
	return m.PerToken
}
