package policy

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// trainAuto runs pitstop --pitstop-rank auto over n single-segment calls
// of random lengths and prompts, submitted at once so that most wait and
// are ranked; noisy forecasts predict a length drawn independently of the
// truth, the others the truth itself. It returns the policy and harness.
func trainAuto(t *testing.T, n int, noisy bool) (*Pitstop, *harness) {
	t.Helper()
	pol := NewPitstop(Options{PitstopRank: "auto", ProgramOrder: "call", PitstopTail: "guard"})
	h := newHarness(t, pol, testConfig())
	rng := rand.New(rand.NewPCG(21, 1))
	for i := range n {
		truth := []seg{{decode: 1 + rng.IntN(120)}}
		pred := truth
		if noisy {
			pred = []seg{{decode: 1 + rng.IntN(120)}}
		}
		h.submit(fmt.Sprintf("c%d", i), fmt.Sprintf("p%d", i), "", 8+rng.IntN(60), truth, pred)
	}
	h.run(nil)
	return pol, h
}

// TestRankAutoPerfectForecastRanks: with forecasts that are the truth, every
// statistic orders the finished segments as they were realized, w is 1 and
// the key is the rank: waiting calls go shortest first.
func TestRankAutoPerfectForecastRanks(t *testing.T) {
	pol, h := trainAuto(t, 300, false)
	c := pol.rank.auto
	if c.pairs < rankWarmup {
		t.Fatalf("%.0f pairs scored after 300 calls, want at least %d", c.pairs, rankWarmup)
	}
	if got := c.right[rankPoint] / c.pairs; got < 0.999 {
		t.Fatalf("perfect forecasts: the point's concordance %.4f, want 1", got)
	}
	if _, w := c.weight(); w != 1 {
		t.Fatalf("perfect forecasts: w = %g, want 1", w)
	}
	lengths := []int{90, 10, 50, 30, 70}
	var seqs []string
	for i, d := range lengths {
		seqs = append(seqs, fmt.Sprintf("n%d", i))
		h.submit(seqs[i], seqs[i], "", 30, []seg{{decode: d}}, nil)
	}
	got := order(pol, h.view(0, 0), h.seqs["n0"], h.seqs["n1"], h.seqs["n2"], h.seqs["n3"], h.seqs["n4"])
	if want := []string{"n1", "n3", "n2", "n4", "n0"}; !slices.Equal(got, want) {
		t.Fatalf("perfect forecasts: order %v, want the rank's (shortest first) %v", got, want)
	}
}

// TestRankAutoNoiseGivesArrivalOrder: with forecasts of pure noise no
// statistic orders pairs better than chance, w is 0, every key is the same
// and the waiting calls go in arrival order, infercept's.
func TestRankAutoNoiseGivesArrivalOrder(t *testing.T) {
	pol, h := trainAuto(t, 300, true)
	c := pol.rank.auto
	if c.pairs < rankWarmup {
		t.Fatalf("%.0f pairs scored after 300 calls, want at least %d", c.pairs, rankWarmup)
	}
	if got := c.right[rankPoint] / c.pairs; got < 0.4 || got > 0.6 {
		t.Fatalf("noise: the point's concordance %.3f, want about 0.5", got)
	}
	if _, w := c.weight(); w != 0 {
		t.Fatalf("noise: w = %g, want 0", w)
	}
	lengths := []int{90, 10, 50, 30, 70}
	for i, d := range lengths {
		name := fmt.Sprintf("n%d", i)
		h.submit(name, name, "", 30, []seg{{decode: d}}, nil)
	}
	got := order(pol, h.view(0, 0), h.seqs["n3"], h.seqs["n0"], h.seqs["n4"], h.seqs["n2"], h.seqs["n1"])
	if want := []string{"n0", "n1", "n2", "n3", "n4"}; !slices.Equal(got, want) {
		t.Fatalf("noise: order %v, want arrival order %v", got, want)
	}
}

// TestRankAutoPicksTheStatisticThatOrdersBest: scores where one statistic
// orders the realized ranks and the others are noise pick that one, with w
// between 0 and 1 for a statistic right on only part of the pairs.
func TestRankAutoPicksTheStatisticThatOrdersBest(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 2))
	c := newRankChoice()
	if k, w := c.weight(); k != rankPoint || w != 1 {
		t.Fatalf("before warm-up: (%d, %g), want the point at w 1", k, w)
	}
	for range 2000 {
		var f rankSample
		f.realized = rng.Float64()
		for k := range numRankStats {
			f.score[k] = rng.Float64()
		}
		f.score[rankExpected] = f.realized
		c.add(f)
	}
	if k, w := c.weight(); k != rankExpected || w != 1 {
		t.Fatalf("the expectation orders every pair: (%d, %g), want (%d, 1)", k, w, rankExpected)
	}
	c = newRankChoice()
	for range 2000 {
		var f rankSample
		f.realized = rng.Float64()
		for k := range numRankStats {
			f.score[k] = rng.Float64()
		}
		f.score[rankMean] = f.realized + rng.Float64() // ordered right on about 70 % of the pairs
		c.add(f)
	}
	if k, w := c.weight(); k != rankMean || !(w > 0.1 && w < 0.7) {
		t.Fatalf("the mean orders most pairs: (%d, %g), want (%d, 0.1 < w < 0.7)", k, w, rankMean)
	}
}
