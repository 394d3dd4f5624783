package policy

import (
	"math"
	"math/rand"
	"testing"
)

// A rest is the length distribution's points conditioned on what the
// segment has generated, masses summing to 1; without a distribution, the
// point forecast's rest with mass 1.
func TestRestPointsOfConditions(t *testing.T) {
	d := binDist(51, map[int]float32{2: 0.5, 40: 0.5}) // [20, 30) and [400, 410) tokens
	pts := restPointsOf(nil, d, 0, 7)
	if len(pts) != 2 || pts[0].d != 25 || pts[1].d != 405 || pts[0].p != 0.5 || pts[1].p != 0.5 {
		t.Fatalf("nothing generated: points %v, want {25 0.5} {405 0.5}", pts)
	}
	// 100 generated: only the long bin is left, and 305 tokens of it.
	pts = restPointsOf(nil, d, 100, 7)
	if len(pts) != 1 || pts[0].d != 305 || pts[0].p != 1 {
		t.Fatalf("100 generated: points %v, want {305 1}", pts)
	}
	// No distribution: the point forecast, appended after what was there.
	pts = restPointsOf([]decodePoint{{d: 3, p: 1}}, nil, 0, 7)
	if len(pts) != 2 || pts[1].d != 7 || pts[1].p != 1 {
		t.Fatalf("no distribution: points %v, want {7 1} appended", pts)
	}
}

// With every rest a point of mass 1, the expected chunk is chunkFor's, on
// random decodes and backlogs.
func TestChunkForExpectedOfPointsIsChunkFor(t *testing.T) {
	const fixed, perToken, budget = 0.0155, 0.000084, 2048
	r := rand.New(rand.NewSource(17))
	shrunk := 0
	for range 500 {
		n := 1 + r.Intn(40)
		dec := make([]float64, n)
		pts := make([]decodePoint, n)
		for i := range dec {
			dec[i] = float64(1 + r.Intn(400))
			pts[i] = decodePoint{d: dec[i], p: 1}
		}
		w := float64(100 + r.Intn(400000))
		s := w * float64(1+r.Intn(30)) / 2
		want := chunkFor(fixed, perToken, dec, w, s, budget, 0)
		if got := chunkForExpected(fixed, perToken, n, pts, w, s, budget, 0); got != want {
			t.Fatalf("n %d W %v S %v: expected chunk %d, chunkFor %d", n, w, s, got, want)
		}
		if want != 0 {
			shrunk++
		}
	}
	if shrunk == 0 {
		t.Fatal("no case shrank the chunk: the comparison tested nothing")
	}
}

// The case the expectation is for: 30 decodes whose point forecast says
// 100 tokens are left beside a 350,000-token backlog. chunkFor shrinks the
// chunk for them. If the length model gives each only a 10 % chance of
// ending near 100 and 90 % of running far past the backlog (where it pays
// for the whole backlog whatever the chunk), the expected cost shrinks the
// chunk far less: sqrt(S·fixed/(PerToken·30·0.1·100)), about 1,750 tokens
// where chunkFor's is about 550; with all the mass near 100 it is
// chunkFor's.
func TestChunkForExpectedCountsLongRests(t *testing.T) {
	const fixed, perToken, budget = 0.0155, 0.000084, 2048
	const w, s = 3.5e5, 5e6
	dec := make([]float64, 30)
	var likely, unlikely []decodePoint
	for i := range dec {
		dec[i] = 100
		likely = append(likely, decodePoint{d: 100, p: 1})
		unlikely = append(unlikely, decodePoint{d: 100, p: 0.1}, decodePoint{d: 1e5, p: 0.9})
	}
	point := chunkFor(fixed, perToken, dec, w, s, budget, 0)
	if point == 0 {
		t.Fatal("chunkFor keeps the full budget: the setting does not test the expectation")
	}
	if got := chunkForExpected(fixed, perToken, 30, likely, w, s, budget, 0); got != point {
		t.Errorf("rests surely 100: cap %d, want chunkFor's %d", got, point)
	}
	got := chunkForExpected(fixed, perToken, 30, unlikely, w, s, budget, 0)
	want := 30 + int(math.Ceil(math.Sqrt(s*fixed/(perToken*300))))
	if got != want || got-30 < 3*(point-30) {
		t.Errorf("rests 90 %% past the backlog: cap %d, want %d (and over 3x chunkFor's chunk %d)", got, want, point-30)
	}
	// And L agrees: at the point's chunk the expected cost is above that at its own.
	cost := func(c float64) float64 {
		l := s * fixed / c
		for _, q := range unlikely {
			l += perToken * q.p * math.Min(q.d*c, w)
		}
		return l
	}
	if c, e := float64(point-30), float64(got-30); cost(c) <= cost(e) {
		t.Errorf("expected L at the point's chunk %v: %v, at its own %v: %v: want more", c, cost(c), e, cost(e))
	}
}
