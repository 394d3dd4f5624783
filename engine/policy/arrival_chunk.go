package policy

import (
	"math"
	"slices"
	"sort"
)

// arrivalCost is balance's cost L(c) with the calls still to come priced
// in ("-arrivals"). With the chunk c the backlog drains at r(c) =
// c/(F + P·c) prompt tokens a second (F the decodes' part of an iteration,
// P a prompt token's time) while prompts keep arriving at a tokens a second
// (lambda calls a second). As a fluid queue the backlog W lasts T =
// W/(r − a), and in that time the iterations prefill W·r/(r − a) tokens:
//
//   - a decoding call with D tokens left pays P·c for each iteration it
//     shares with that busy period: P·min(D·c, W·r/(r − a));
//   - the calls present wait, beyond their own tokens' time, S·F/c (S the
//     Σ of their cumulative positions, as before);
//   - a call arriving at t waits for the work ahead of it, W − (r − a)·t,
//     drained at r: over the busy period the arrivals wait
//     ∫₀ᵀ lambda·(W − (r − a)·t)/r dt = lambda·W²/(2·r·(r − a)).
//
// The last term is what session 17's balance lacked: a smaller chunk
// drains the backlog slower, and every call that arrives meanwhile waits
// the longer; as r(c) falls to a it grows without bound, so L's minimum is
// trusted globally, with no local search from the full budget and no
// floor. The decodes' points are sorted by rest with prefix sums so that
// L(c) costs a binary search.
type arrivalCost struct {
	fixed, perToken float64
	w, s            float64
	lambda, a       float64
	flow            *flowDecodes // "-flow": the decodes still to come, nil without
	meanPrompt      float64      // m: prompt tokens per call to come (flow)
	d               []float64    // rests, ascending
	pd              []float64    // pd[k] = Σ_{j<k} p_j·d_j
	p               []float64    // p[k] = Σ_{j<k} p_j
}

func newArrivalCost(fixed, perToken float64, pts []decodePoint, w, s, lambda, a float64) arrivalCost {
	slices.SortFunc(pts, func(x, y decodePoint) int {
		switch {
		case x.d < y.d:
			return -1
		case x.d > y.d:
			return 1
		}
		return 0
	})
	c := arrivalCost{fixed: fixed, perToken: perToken, w: w, s: s, lambda: lambda, a: a,
		d: make([]float64, len(pts)), pd: make([]float64, len(pts)+1), p: make([]float64, len(pts)+1)}
	for i, q := range pts {
		c.d[i] = q.d
		c.pd[i+1] = c.pd[i] + q.p*q.d
		c.p[i+1] = c.p[i] + q.p
	}
	return c
}

// drain is r(c), the backlog's tokens per second at chunk c.
func (l *arrivalCost) drain(c float64) float64 { return c / (l.fixed + l.perToken*c) }

// at is L(c); +Inf where the chunk drains no faster than prompts arrive.
func (l *arrivalCost) at(c float64) float64 {
	r := l.drain(c)
	if r <= l.a {
		return math.Inf(1)
	}
	busy := l.w * r / (r - l.a) // tokens prefilled while the backlog lasts
	k := sort.SearchFloat64s(l.d, busy/c)
	dec := l.perToken * (c*l.pd[k] + busy*(l.p[len(l.d)]-l.p[k]))
	v := dec + l.s*l.fixed/c + l.arrivals(c)
	if l.flow != nil && l.meanPrompt > 0 {
		v += l.perToken / l.meanPrompt * l.flow.mean(c, busy)
	}
	return v
}

// arrivals is the wait of the calls that arrive while the backlog drains.
func (l *arrivalCost) arrivals(c float64) float64 {
	r := l.drain(c)
	if r <= l.a {
		return math.Inf(1)
	}
	return l.lambda * l.w * l.w / (2 * r * (r - l.a))
}

// lowest is the smallest chunk that drains faster than prompts arrive
// (r(c) = a at c = a·F/(1 − a·P)), at least one token; +Inf when none does.
func (l *arrivalCost) lowest() float64 {
	if l.a*l.perToken >= 1 {
		return math.Inf(1)
	}
	return max(l.a*l.fixed/(1-l.a*l.perToken), 0) + 1
}

// chunkForArrivals is the token cap (n decodes plus the chunk; 0 for the
// full budget) at L's global minimum over [lowest, full]: 64 chunks spaced
// geometrically, then a golden-section search between the best one's
// neighbours. L is smooth between the kinks where a decode starts to
// outlast the busy period, so the grid finds the right basin and the
// section its minimum. The full budget wins ties.
func chunkForArrivals(fixed, perToken float64, n int, pts []decodePoint, w, s float64, budget int, lambda, a float64) int {
	return chunkForFlow(fixed, perToken, n, pts, w, s, budget, lambda, a, nil, 0)
}

// chunkForFlow is chunkForArrivals with the decodes still to come priced
// (flow, prepared; nil: not), m the prompt tokens per call to come.
func chunkForFlow(fixed, perToken float64, n int, pts []decodePoint, w, s float64, budget int, lambda, a float64, flow *flowDecodes, m float64) int {
	if n == 0 || len(pts) == 0 || w <= 0 {
		return 0
	}
	full := float64(budget - n)
	if full <= 1 {
		return 0
	}
	l := newArrivalCost(fixed, perToken, pts, w, s, lambda, a)
	l.flow, l.meanPrompt = flow, m
	lo := l.lowest()
	if lo >= full {
		return 0
	}
	const grid = 64
	ratio := math.Pow(full/lo, 1.0/(grid-1))
	best, bestL := full, l.at(full)
	cs := make([]float64, grid)
	bi := grid - 1
	for i := range grid {
		cs[i] = lo * math.Pow(ratio, float64(i))
		if i == grid-1 {
			cs[i] = full
		}
		if v := l.at(cs[i]); v < bestL {
			best, bestL, bi = cs[i], v, i
		}
	}
	x0, x1 := cs[max(bi-1, 0)], cs[min(bi+1, grid-1)]
	const phi = 0.6180339887498949
	u, v := x1-phi*(x1-x0), x0+phi*(x1-x0)
	lu, lv := l.at(u), l.at(v)
	for range 24 {
		if lu < lv {
			x1, v, lv = v, u, lu
			u = x1 - phi*(x1-x0)
			lu = l.at(u)
		} else {
			x0, u, lu = u, v, lv
			v = x0 + phi*(x1-x0)
			lv = l.at(v)
		}
	}
	if lu < bestL {
		best, bestL = u, lu
	}
	if lv < bestL {
		best, bestL = v, lv
	}
	c := math.Ceil(best)
	if c >= full || bestL >= l.at(full) {
		return 0
	}
	return n + int(c)
}
