package policy

import (
	"cmp"
	"math"
	"slices"
	"sort"
)

// arrivalCost is balance's cost L(c) with the calls still to come priced
// in ("-arrivals"). With the chunk c the backlog drains at r(c) =
// c/(F + P·c) prompt tokens a second (F the decodes' part of an iteration,
// P a prompt token's time) while prompts keep arriving at a tokens a second
// (lambda calls a second). As a fluid queue the backlog W lasts
// n_b = W/κ iterations, κ = c·(1 − P·a) − a·F (the backlog's net drain per
// iteration), and prefills B = W·c/κ tokens:
//
//   - a decoding call with D tokens left that ends inside the busy period
//     (D < n_b) is delayed P·c·D; one that outlasts it pays P for every
//     prompt token prefilled in its lifetime, the backlog and the arrivals
//     alike, (W + a·F·D)/(1 − P·a) in all, which does not depend on the
//     chunk (the busy period's iterations are fewer or longer, never both).
//     Less what a call pays at any chunk (a·F·D/(1 − P·a), the arrivals
//     after the backlog), the delay is P·min(D·κ, W)/(1 − P·a): balance's
//     P·min(D·c, W) when nothing arrives;
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
	kappa := c*(1-l.perToken*l.a) - l.a*l.fixed // net drain per iteration
	if kappa <= 0 {
		return math.Inf(1)
	}
	unit := l.perToken / (1 - l.perToken*l.a)
	k := sort.SearchFloat64s(l.d, l.w/kappa) // ends inside the busy period below k
	dec := unit * (kappa*l.pd[k] + l.w*(l.p[len(l.d)]-l.p[k]))
	v := dec + l.s*l.fixed/c + l.arrivals(c)
	if l.flow != nil && l.meanPrompt > 0 {
		v += unit / l.meanPrompt * l.flow.mean(kappa, l.w*c/kappa)
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

// lowest is the smallest whole chunk that drains faster than prompts
// arrive (r(c) = a at c = a·F/(1 − a·P)), at least one token; +Inf when
// none does.
func (l *arrivalCost) lowest() float64 {
	if l.a*l.perToken >= 1 {
		return math.Inf(1)
	}
	return math.Floor(max(l.a*l.fixed/(1-l.a*l.perToken), 0)) + 1
}

// chunkForArrivals is the token cap (n decodes plus the chunk; 0 for the
// full budget) at L's global minimum over [lowest, full]: 64 chunks spaced
// geometrically, then a golden-section search between the neighbours of
// each of the grid's three lowest local minima. L is smooth between the
// kinks where a decode starts to outlast the busy period, so the grid
// finds the basins and the sections their minima. The full budget wins
// ties.
func chunkForArrivals(fixed, perToken float64, n int, pts []decodePoint, w, s float64, budget int, lambda, a float64) int {
	return chunkForFlow(fixed, perToken, n, pts, w, s, budget, lambda, a, nil, 0)
}

// arrivalRoom is the prompt tokens a chunk may take beside n decodes
// (budget − n), 0 when there is nothing to balance: no decode with a rest,
// no waiting work, or no room past one token.
func arrivalRoom(n int, pts []decodePoint, w float64, budget int) float64 {
	full := float64(budget - n)
	if n == 0 || len(pts) == 0 || w <= 0 || full <= 1 {
		return 0
	}
	return full
}

// chunkForFlow is chunkForArrivals with the decodes still to come priced
// (flow, prepared; nil: not), m the prompt tokens per call to come.
func chunkForFlow(fixed, perToken float64, n int, pts []decodePoint, w, s float64, budget int, lambda, a float64, flow *flowDecodes, m float64) int {
	full := arrivalRoom(n, pts, w, budget)
	if full == 0 {
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
	cs, ls := make([]float64, grid), make([]float64, grid)
	for i := range grid {
		cs[i] = lo * math.Pow(ratio, float64(i))
		if i == grid-1 {
			cs[i] = full
		}
		ls[i] = l.at(cs[i])
	}
	// The grid's local minima, lowest first: L's kinks can leave more than
	// one basin, so the three lowest are refined.
	var basins []int
	for i := range grid {
		if (i == 0 || ls[i] <= ls[i-1]) && (i == grid-1 || ls[i] <= ls[i+1]) {
			basins = append(basins, i)
		}
	}
	slices.SortFunc(basins, func(x, y int) int { return cmp.Compare(ls[x], ls[y]) })
	best, bestL := full, ls[grid-1]
	for _, bi := range basins[:min(len(basins), 3)] {
		if c, v := l.section(cs[max(bi-1, 0)], cs[min(bi+1, grid-1)]); v < bestL {
			best, bestL = c, v
		}
		if ls[bi] < bestL {
			best, bestL = cs[bi], ls[bi]
		}
	}
	c := math.Ceil(best) // the whole chunk on the better side
	if f := math.Floor(best); f >= lo && l.at(f) < l.at(c) {
		c = f
	}
	if c >= full || l.at(c) >= l.at(full) {
		return 0
	}
	return n + int(c)
}

// section is L's minimum on [x0, x1] by golden-section search, and the
// chunk where it is.
func (l *arrivalCost) section(x0, x1 float64) (float64, float64) {
	return goldenSection(l.at, x0, x1)
}

// goldenSection is f's minimum on [x0, x1] after 24 golden-section steps,
// and where it is.
func goldenSection(f func(float64) float64, x0, x1 float64) (float64, float64) {
	const phi = 0.6180339887498949
	u, v := x1-phi*(x1-x0), x0+phi*(x1-x0)
	lu, lv := f(u), f(v)
	for range 24 {
		if lu < lv {
			x1, v, lv = v, u, lu
			u = x1 - phi*(x1-x0)
			lu = f(u)
		} else {
			x0, u, lu = u, v, lv
			v = x0 + phi*(x1-x0)
			lv = f(v)
		}
	}
	if lu < lv {
		return u, lu
	}
	return v, lv
}

// searchBelow is how many of the ascending xs are below t.
func searchBelow(xs []float64, t float64) int { return sort.SearchFloat64s(xs, t) }
