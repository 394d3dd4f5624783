package policy

import "math"

// busyCost is the first formulation of the arrival-priced L (session 18,
// "-busy" values): each decode present is charged P·min(D·c, B) and each
// call to come P/m·E[g_B(D·c)], B = W·r/(r − a) the tokens the busy period
// prefills. It counts the arrivals' tokens of a longer busy period against
// a smaller chunk although a decode that outlasts the backlog pays for
// them at any chunk (arrivalCost's derivation), so it leans to the full
// budget more than arrivalCost; it is kept because that lean is what its
// measurements show (docs/results-policies.md, session 18).
type busyCost struct{ arrivalCost }

func (l *busyCost) at(c float64) float64 {
	r := l.drain(c)
	if r <= l.a {
		return math.Inf(1)
	}
	busy := l.w * r / (r - l.a)
	k := searchBelow(l.d, busy/c)
	v := l.perToken*(c*l.pd[k]+busy*(l.p[len(l.d)]-l.p[k])) + l.s*l.fixed/c + l.arrivals(c)
	if l.flow != nil && l.meanPrompt > 0 {
		v += l.perToken / l.meanPrompt * l.flow.mean(c, busy)
	}
	return v
}

// chunkForBusy is the first formulation's search: from one past the
// chunk that just keeps up, 64 geometric chunks and a golden section
// around the best.
func chunkForBusy(fixed, perToken float64, n int, pts []decodePoint, w, s float64, budget int, lambda, a float64, flow *flowDecodes, m float64) int {
	full := arrivalRoom(n, pts, w, budget) // arrival_chunk.go
	if full == 0 {
		return 0
	}
	l := busyCost{newArrivalCost(fixed, perToken, pts, w, s, lambda, a)}
	l.flow, l.meanPrompt = flow, m
	if l.a*l.perToken >= 1 {
		return 0
	}
	lo := max(l.a*l.fixed/(1-l.a*l.perToken), 0) + 1
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
	if c, v := goldenSection(l.at, cs[max(bi-1, 0)], cs[min(bi+1, grid-1)]); v < bestL {
		best, bestL = c, v
	}
	c := math.Ceil(best)
	if c >= full || bestL >= l.at(full) {
		return 0
	}
	return n + int(c)
}
