package policy

import (
	"math"
	"math/rand/v2"
	"testing"
)

// The arrivals' wait falls as the chunk grows (a bigger chunk drains the
// backlog faster) and grows with the arrival rate; it is unbounded where
// the chunk drains no faster than prompts arrive. So the chunk chosen with
// arrivals is never below the one chosen without, and a heavy enough
// inflow keeps the full budget.
func TestArrivalTermFallsWithChunk(t *testing.T) {
	const fixed, perToken = 0.0155, 0.000084
	pts := []decodePoint{{d: 50, p: 1}, {d: 80, p: 1}}
	l := newArrivalCost(fixed, perToken, pts, 2e4, 1e5, 1, 2000)
	prev := math.Inf(1)
	for c := math.Ceil(l.lowest()); c <= 2048; c += 7 {
		v := l.arrivals(c)
		if !(v < prev) {
			t.Fatalf("arrivals(%v) = %v, not below arrivals at the smaller chunk (%v)", c, v, prev)
		}
		prev = v
	}
	if v := l.arrivals(l.lowest() - 1); !math.IsInf(v, 1) {
		t.Errorf("a chunk draining slower than the inflow: arrivals %v, want +Inf", v)
	}
	heavier := newArrivalCost(fixed, perToken, pts, 2e4, 1e5, 2, 4000)
	if heavier.arrivals(500) <= l.arrivals(500) {
		t.Errorf("twice the inflow: arrivals(500) %v, want above %v", heavier.arrivals(500), l.arrivals(500))
	}
	// 30 short decodes beside a 350,000-token backlog: without arrivals
	// the chunk is small; with more and more arrivals it grows to the full
	// budget.
	short := func() []decodePoint {
		p := make([]decodePoint, 30)
		for i := range p {
			p[i] = decodePoint{d: 100, p: 1}
		}
		return p
	}
	last := chunkForArrivals(fixed, perToken, 30, short(), 3.5e5, 5e6, 2048, 0, 0)
	if last == 0 {
		t.Fatal("no arrivals: the full budget; the setting does not test the term")
	}
	for _, a := range []float64{1000, 4000, 8000, 12000} {
		got := chunkForArrivals(fixed, perToken, 30, short(), 3.5e5, 5e6, 2048, a/2000, a)
		if got != 0 && got < last {
			t.Errorf("inflow %v tokens/s: cap %d, below the cap %d at a lower inflow", a, got, last)
		}
		if got != 0 {
			last = got
		}
		if a == 12000 && got != 0 {
			t.Errorf("inflow 12,000 tokens/s (a chunk under %v cannot keep up): cap %d, want 0 (the full budget)", l.lowest(), got)
		}
	}
}

// naiveArrivalL is L(c) computed term by term, independently of the sorted
// prefix sums.
func naiveArrivalL(fixed, perToken float64, pts []decodePoint, w, s, lambda, a, c float64, flow []int, m float64) float64 {
	r := c / (fixed + perToken*c)
	if r <= a {
		return math.Inf(1)
	}
	kappa := c*(1-perToken*a) - a*fixed
	busy := w * c / kappa
	unit := perToken / (1 - perToken*a)
	l := s*fixed/c + lambda*w*w/(2*r*(r-a))
	for _, q := range pts {
		l += unit * q.p * math.Min(q.d*kappa, w)
	}
	for _, d := range flow { // the decodes to come: unit/m·mean of g(D·κ)
		x := float64(d) * kappa
		g := busy * busy / 2
		if x < busy {
			g = x*busy - x*x/2
		}
		l += unit / m * g / float64(len(flow))
	}
	return l
}

// chunkForArrivals (and chunkForFlow, every other case, with the decodes
// to come) against brute force over every whole chunk: on random settings
// its chunk's L is within 0.5 % of the lowest L any chunk from 1 to the
// full budget gives, and it keeps the full budget only when no chunk is
// clearly better.
func TestChunkForArrivalsAgainstBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(18, 1))
	capped := 0
	for i := range 400 {
		fixed := 0.005 + 0.03*rng.Float64()
		perToken := 2e-5 + 1e-4*rng.Float64()
		budget := 384 + rng.IntN(1700)
		n := 1 + rng.IntN(60)
		var pts []decodePoint
		for range n {
			k := 1 + rng.IntN(3)
			for range k {
				pts = append(pts, decodePoint{d: math.Ceil(math.Exp(rng.Float64() * 6)), p: 1 / float64(k)})
			}
		}
		w := math.Ceil(math.Exp(4 + rng.Float64()*9))
		s := w * float64(1+rng.IntN(40)) / 2 // Σ positions of up to 40 calls
		a := 0.0
		if rng.IntN(2) > 0 {
			a = rng.Float64() * 0.5 * float64(budget-n) / (fixed + perToken*float64(budget-n))
		}
		lambda := a / (1000 + 30000*rng.Float64())
		cp := append([]decodePoint(nil), pts...)
		var flow []int
		m := 100 + 3000*rng.Float64()
		var got int
		if i%2 == 1 {
			var f flowDecodes
			for range 1 + rng.IntN(64) {
				flow = append(flow, 1+int(math.Exp(rng.Float64()*7)))
				f.add(flow[len(flow)-1])
			}
			f.prepare()
			got = chunkForFlow(fixed, perToken, n, cp, w, s, budget, lambda, a, &f, m)
		} else {
			got = chunkForArrivals(fixed, perToken, n, cp, w, s, budget, lambda, a)
		}
		full := float64(budget - n)
		best := math.Inf(1)
		for c := 1.0; c <= full; c++ {
			best = min(best, naiveArrivalL(fixed, perToken, pts, w, s, lambda, a, c, flow, m))
		}
		c := full
		if got != 0 {
			c = float64(got - n)
			capped++
		}
		if l := naiveArrivalL(fixed, perToken, pts, w, s, lambda, a, c, flow, m); l > best*1.005 {
			t.Errorf("case %d: chunk %v gives L %v, brute force's best %v (+%.2f %%)", i, c, l, best, 100*(l/best-1))
		}
	}
	t.Logf("%d of 400 cases capped the chunk", capped)
	if capped < 40 || capped > 360 {
		t.Errorf("%d of 400 random cases capped the chunk: the cases do not test both outcomes", capped)
	}
}

// The arrival rate is the calls and tokens of the last 32 arrivals over the
// time from the oldest of them to now.
func TestArrivalRate(t *testing.T) {
	var r arrivalRate
	if c, a := r.rate(5); c != 0 || a != 0 {
		t.Errorf("nothing seen: rate %v calls/s, %v tokens/s, want 0", c, a)
	}
	for i := range 100 {
		r.add(float64(i)*0.5, 100) // 2 calls, 200 tokens a second
	}
	c, a := r.rate(49.5 + 0.5) // the last 32 arrivals span 16 s to now
	if math.Abs(c-2) > 1e-9 || math.Abs(a-200) > 1e-9 {
		t.Errorf("rate %v calls/s, %v tokens/s, want 2 and 200", c, a)
	}
	if c2, _ := r.rate(100); c2 >= c {
		t.Errorf("50 s without arrivals: %v calls/s, want below %v", c2, c)
	}
}
