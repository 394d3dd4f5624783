package policy

import (
	"math"
	"testing"

	"github.com/pitstop-llm/pitstop/engine"
	"github.com/pitstop-llm/pitstop/handling"
)

// binDist is a length distribution of n bins of width 10 (the last the
// overflow, standing for 750 tokens) with the given masses at the given bins.
func binDist(n int, masses map[int]float32) *engine.Distribution {
	d := &engine.Distribution{LengthProbs: make([]float32, n), LengthBinWidth: 10, OverflowTokens: 750}
	for b, p := range masses {
		d.LengthProbs[b] = p
	}
	return d
}

// toolSeg is a segment that pauses on a 2 s tool and resumes: the handling
// kind, and so the score's shape, depends on its length.
func toolSeg() handling.Segment {
	return handling.Segment{Prompt: 900, ToolTime: 2, ToolReturn: 40, PostDecode: 30}
}

func rankWith(t *testing.T, decode int) float64 {
	t.Helper()
	seg := toolSeg()
	seg.PreDecode = decode
	r, _ := handling.RankAt(seg, testCost(), handling.Load{RunningTokens: 8, OtherRunning: 4000})
	return r
}

func expectedOf(t *testing.T, d *engine.Distribution, generated int) float64 {
	t.Helper()
	r, ok := expectedRank(toolSeg(), d, generated, testCost(), handling.Load{RunningTokens: 8, OtherRunning: 4000})
	if !ok {
		t.Fatal("expectedRank refused a valid distribution")
	}
	return r
}

func TestExpectedRankOfAPointIsThePointRank(t *testing.T) {
	// All the mass in bin 12 ([120, 130) tokens): the rank of its midpoint.
	got := expectedOf(t, binDist(51, map[int]float32{12: 1}), 0)
	if want := rankWith(t, 125); math.Abs(got-want) > 1e-9*want {
		t.Fatalf("point distribution: expected rank %g, want the point rank %g", got, want)
	}
	// Unnormalised masses are renormalised.
	if got2 := expectedOf(t, binDist(51, map[int]float32{12: 0.3}), 0); math.Abs(got2-got) > 1e-9*got {
		t.Fatalf("mass 0.3 in one bin: %g, want %g as with mass 1", got2, got)
	}
}

func TestExpectedRankOfAWideDistributionIsBetween(t *testing.T) {
	d := binDist(51, map[int]float32{2: 0.5, 20: 0.3, 45: 0.2})
	got := expectedOf(t, d, 0)
	lo, hi := rankWith(t, 25), rankWith(t, 455)
	if !(lo < got && got < hi) {
		t.Fatalf("expected rank %g not strictly between the shortest bin's %g and the longest's %g", got, lo, hi)
	}
	// Memory-over-time grows faster than linearly in the length: the
	// expectation is above the rank of the mean length (Jensen), which is
	// what the point forecast misses for a wide distribution.
	mean := 0.5*25 + 0.3*205 + 0.2*455
	if atMean := rankWith(t, int(mean)); got <= atMean {
		t.Fatalf("expected rank %g not above the rank at the mean length %g (%g)", got, mean, atMean)
	}
}

func TestExpectedRankConditionsOnWhatWasGenerated(t *testing.T) {
	d := binDist(51, map[int]float32{2: 0.8, 30: 0.2})
	fresh := expectedOf(t, d, 0)
	// 40 tokens generated: bin 2 ([20, 30)) is behind the call; what is left
	// is bin 30 alone, 305 − 40 tokens to go.
	outlived := expectedOf(t, d, 40)
	if want := rankWith(t, 265); math.Abs(outlived-want) > 1e-9*want {
		t.Fatalf("after 40 tokens: %g, want the rank of bin 30's rest %g", outlived, want)
	}
	if outlived <= fresh {
		t.Fatalf("a call past its likely length ranks %g, not behind its fresh rank %g", outlived, fresh)
	}
	// Inside a bin only the part above what was generated counts: 25 tokens
	// into bin 2 leaves [25, 30), midpoint 27.5, 3 tokens to go, with a
	// half of the bin's mass.
	mid := expectedOf(t, binDist(51, map[int]float32{2: 1}), 25)
	if want := rankWith(t, 3); math.Abs(mid-want) > 1e-9*want {
		t.Fatalf("25 tokens into bin 2: %g, want %g", mid, want)
	}
}

func TestExpectedRankTailGrowsWithAge(t *testing.T) {
	d := binDist(51, map[int]float32{3: 0.9, 50: 0.1})
	// Before the overflow bin's start (500 tokens) its mass stands for 750.
	if got, want := expectedOf(t, d, 100), rankWith(t, 650); math.Abs(got-want) > 1e-9*want {
		t.Fatalf("100 tokens in: %g, want the overflow's rank %g", got, want)
	}
	// Past it, the mean of a Pareto tail of mean 750 above 500: 1.5·g.
	at600, at900 := expectedOf(t, d, 600), expectedOf(t, d, 900)
	if want := rankWith(t, 300); math.Abs(at600-want) > 1e-9*want {
		t.Fatalf("600 tokens in: %g, want %g (300 to go)", at600, want)
	}
	if at900 <= at600 {
		t.Fatalf("the tail's rank does not grow with the age: %g at 900, %g at 600", at900, at600)
	}
	// No mass left above what was generated: taken as in the tail.
	none := binDist(51, map[int]float32{3: 1})
	if got, want := expectedOf(t, none, 100), rankWith(t, 650); math.Abs(got-want) > 1e-9*want {
		t.Fatalf("outlived every bin: %g, want the tail's %g", got, want)
	}
}

func TestExpectedRankRefusesUnusableDistributions(t *testing.T) {
	for _, d := range []*engine.Distribution{
		{},
		{LengthProbs: []float32{1}, LengthBinWidth: 10},
		{LengthProbs: []float32{0.5, 0.5}, LengthBinWidth: 0},
	} {
		if _, ok := expectedRank(toolSeg(), d, 0, testCost(), handling.Load{}); ok {
			t.Errorf("expectedRank accepted %+v", d)
		}
	}
}

func TestPitstopRankOption(t *testing.T) {
	if err := (Options{PitstopRank: "gittins"}).Validate(); err == nil {
		t.Fatal("PitstopRank \"gittins\" accepted")
	}
	for _, r := range []string{"", "auto", "expected", "point", "mean", "median"} {
		if err := (Options{PitstopRank: r}).Validate(); err != nil {
			t.Fatalf("PitstopRank %q: %v", r, err)
		}
	}
}

// distCtl is a call whose forecast predicts median tokens with the length
// distribution dist (nil: a point forecast).
type distCtl struct {
	median int
	dist   *engine.Distribution
}

func (distCtl) Next(s *engine.Sequence, _ int32) engine.Action { return engine.Action{Token: 1} }

func (c distCtl) Forecast(s *engine.Sequence) engine.Forecast {
	p := engine.Prediction{Decode: c.median, HasTool: true, ToolTime: 1.5, ToolReturn: 40, After: 100}
	return engine.Forecast{Predicted: p, Truth: p, HasTruth: true, Dist: c.dist}
}

// TestPitstopRanksByExpectationOverTheDistribution: two waiting calls with
// the same median length (25 tokens), one certain of it, one with a fifth
// of its mass at 455 tokens. By the point forecast they tie (the earlier
// arrival first); by the expectation the certain one goes first. Without a
// distribution the expected mode is the point.
func TestPitstopRanksByExpectationOverTheDistribution(t *testing.T) {
	sure := binDist(51, map[int]float32{2: 1})
	wide := binDist(51, map[int]float32{2: 0.8, 45: 0.2})
	keys := func(rank string, wideDist, sureDist *engine.Distribution) (wideKey, sureKey float64) {
		pol := NewPitstop(Options{PitstopRank: rank, ProgramOrder: "call", PitstopTail: "guard"})
		cfg := engine.Config{NumBlocks: 1024, BlockSize: 16, HostBlocks: 1024, MaxBatchedTokens: 512, MaxSeqs: 8, Cost: testCost()}
		e, err := engine.New(cfg, engine.NewVirtualClock(), zeroExec{}, pol)
		if err != nil {
			t.Fatal(err)
		}
		prompt := make([]int32, 500)
		w, err := e.SubmitNow(engine.Request{Prompt: prompt, Program: "w", Controller: distCtl{median: 25, dist: wideDist}})
		if err != nil {
			t.Fatal(err)
		}
		s, err := e.SubmitNow(engine.Request{Prompt: prompt, Program: "s", Controller: distCtl{median: 25, dist: sureDist}})
		if err != nil {
			t.Fatal(err)
		}
		v := &engine.View{BlockSize: 16, TotalBlocks: 1024, FreeBlocks: 1024, HostBlocks: 1024, HostFree: 1024, Cost: cfg.Cost, Programs: e.Programs()}
		return pol.Priority(v, w).Key, pol.Priority(v, s).Key
	}
	if w, s := keys("point", wide, sure); w != s {
		t.Fatalf("point rank: the wide call's key %g differs from the sure one's %g (same median)", w, s)
	}
	w, s := keys("expected", wide, sure)
	if w <= s {
		t.Fatalf("expected rank: the wide call's key %g is not above the sure one's %g", w, s)
	}
	pw, ps := keys("point", nil, nil)
	if ew, es := keys("expected", nil, nil); ew != pw || es != ps {
		t.Fatalf("without a distribution the expected rank (%g, %g) is not the point rank (%g, %g)", ew, es, pw, ps)
	}
}

// softmaxLike is a length distribution as the model gives it: every bin
// has some mass, most of it near mode.
func softmaxLike(mode int) *engine.Distribution {
	d := &engine.Distribution{LengthProbs: make([]float32, 51), LengthBinWidth: 10, OverflowTokens: 750}
	var sum float32
	for b := range d.LengthProbs {
		p := float32(math.Exp(-math.Abs(float64(b-mode)) / 3))
		d.LengthProbs[b] = p
		sum += p
	}
	for b := range d.LengthProbs {
		d.LengthProbs[b] /= sum
	}
	return d
}

// BenchmarkExpectedRank is one call's score over a 51-bin distribution
// with mass in every bin (a cache miss in Pitstop.score), beside the point.
func BenchmarkExpectedRank(b *testing.B) {
	d, seg, m, load := softmaxLike(12), toolSeg(), testCost(), handling.Load{RunningTokens: 256, OtherRunning: 256 * 300}
	b.Run("expected", func(b *testing.B) {
		for range b.N {
			expectedRank(seg, d, 0, m, load)
		}
	})
	b.Run("point", func(b *testing.B) {
		seg.PreDecode = 125
		for range b.N {
			handling.RankAt(seg, m, load)
		}
	})
}

// BenchmarkOrdering10kExpected is BenchmarkOrdering10k (bench_test.go) with
// forecasts that carry a 51-bin length distribution: pitstop by the
// expectation and by the point, and by the expectation re-scoring every
// call on every full re-rank (ScoreRefresh 64: no cached score), and by
// auto (every statistic scored), cached and re-scoring.
func BenchmarkOrdering10kExpected(b *testing.B) {
	for _, c := range []struct {
		name string
		o    Options
	}{
		{"expected", Options{PitstopRank: "expected"}},
		{"point", Options{PitstopRank: "point"}},
		{"expected-rescore", Options{PitstopRank: "expected", ScoreRefresh: 64}},
		{"auto", Options{PitstopRank: "auto"}}, // every statistic scored on a cache miss (rank_choice.go)
		{"auto-rescore", Options{PitstopRank: "auto", ScoreRefresh: 64}},
	} {
		b.Run(c.name, func(b *testing.B) {
			orderingStep(b, NewPitstop(c.o), func(i int) engine.Controller {
				return distCtl{median: 10 * (i%40 + 1), dist: softmaxLike(i % 40)}
			})
		})
	}
}

// cmpPriority orders priorities as the engine's run queue does: class,
// then key, lowest first.
func cmpPriority(a, b engine.Priority) int {
	switch {
	case a.Class != b.Class:
		if a.Class < b.Class {
			return -1
		}
		return 1
	case a.Key < b.Key:
		return -1
	case a.Key > b.Key:
		return 1
	}
	return 0
}

// TestExpectedRankGroupingIsCloseToEveryBin: scoring five bins as one
// moves the expectation by under 1% from scoring every bin on its own, for
// distributions with mass in every bin.
func TestExpectedRankGroupingIsCloseToEveryBin(t *testing.T) {
	for _, mode := range []int{1, 12, 30, 48} {
		d := softmaxLike(mode)
		var exact float64
		for b, p := range d.LengthProbs[:50] {
			exact += float64(p) * rankWith(t, 10*b+5)
		}
		exact += float64(d.LengthProbs[50]) * rankWith(t, 750)
		if got := expectedOf(t, d, 0); math.Abs(got-exact) > 0.01*exact {
			t.Errorf("mode bin %d: grouped %g, every bin %g", mode, got, exact)
		}
	}
}

// TestMeanRankIsBlindToTheSpread: the rank at the conditioned mean length
// equals the expectation for a point distribution and is below it for a
// wide one (memory-over-time is convex in the length).
func TestMeanRankIsBlindToTheSpread(t *testing.T) {
	m, load := testCost(), handling.Load{RunningTokens: 8, OtherRunning: 4000}
	point := binDist(51, map[int]float32{12: 1})
	if a, _ := meanRank(toolSeg(), point, 0, m, load); math.Abs(a-rankWith(t, 125)) > 1e-9*a {
		t.Fatalf("point distribution: mean rank %g, want %g", a, rankWith(t, 125))
	}
	wide := binDist(51, map[int]float32{2: 0.5, 20: 0.3, 45: 0.2})
	mean, _ := meanRank(toolSeg(), wide, 0, m, load)
	if want := rankWith(t, 165); math.Abs(mean-want) > 1e-9*want { // 0.5·25 + 0.3·205 + 0.2·455
		t.Fatalf("wide distribution: mean rank %g, want the rank at its mean %g", mean, want)
	}
	if e := expectedOf(t, wide, 0); mean >= e {
		t.Fatalf("mean rank %g not below the expected rank %g of a wide distribution", mean, e)
	}
}

// TestMedianRankConditions: the conditioned median of a two-bin
// distribution, before and after the call passed the first bin.
func TestMedianRankConditions(t *testing.T) {
	m, load := testCost(), handling.Load{RunningTokens: 8, OtherRunning: 4000}
	d := binDist(51, map[int]float32{2: 0.6, 30: 0.4})
	// Fresh: the median is 0.5/0.6 of the way through bin 2, at 28.3 tokens.
	if got, _ := medianRank(toolSeg(), d, 0, m, load); math.Abs(got-rankWith(t, 28)) > 1e-9*got {
		t.Fatalf("fresh: %g, want the rank at 28 tokens %g", got, rankWith(t, 28))
	}
	// 40 tokens in: bin 30 alone, median 305, 265 to go.
	if got, _ := medianRank(toolSeg(), d, 40, m, load); math.Abs(got-rankWith(t, 265)) > 1e-9*got {
		t.Fatalf("40 tokens in: %g, want %g", got, rankWith(t, 265))
	}
	// Past every bin: the tail.
	if got, _ := medianRank(toolSeg(), d, 400, m, load); math.Abs(got-rankWith(t, 350)) > 1e-9*got {
		t.Fatalf("400 tokens in: %g, want the tail's %g", got, rankWith(t, 350))
	}
}
