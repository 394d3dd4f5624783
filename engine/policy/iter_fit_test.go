package policy

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/pitstop-llm/pitstop/engine"
)

// The fit recovers a synthetic iteration time, 13 ms + 84 µs a prompt
// token + 20 µs a decode + 65 ns a context token (the A100 Llama profile's
// form, prompt attention left out), from iterations the test makes; before
// 8 iterations, and with iterations that moved KV, it is the cost model's.
func TestIterFitRecovers(t *testing.T) {
	m := testCost()
	m.IterBase, m.PerToken = 0.013, 0.000084
	truth := func(p, d, ctx int) float64 { return 0.013 + 84e-6*float64(p) + 20e-6*float64(d) + 65e-9*float64(ctx) }
	var f iterFit
	rng := rand.New(rand.NewPCG(18, 2))
	iter := func() *engine.IterationStats {
		d := rng.IntN(80)
		p := rng.IntN(2048 - d)
		ctx := 0
		for range d {
			ctx += 1 + rng.IntN(8000)
		}
		return &engine.IterationStats{Duration: time.Duration(truth(p, d, ctx) * 1e9), PrefillTokens: p, DecodeTokens: d, DecodeContext: ctx}
	}
	for range 7 {
		f.observe(iter())
	}
	if got, want := f.fixed(m, 20, 80000), m.IterTime(20); got != want {
		t.Fatalf("7 iterations: fixed %v, want the model's %v", got, want)
	}
	for range 5 {
		it := iter()
		it.SwapInBlocks, it.Duration = 3, time.Second // a swap's time is not the counts'
		f.observe(it)
	}
	if _, ok := f.coef(); ok {
		t.Fatal("iterations that moved KV counted in the fit")
	}
	for range 200 {
		f.observe(iter())
	}
	b, ok := f.coef()
	if !ok {
		t.Fatal("200 iterations: no fit")
	}
	want := [4]float64{0.013, 84e-6, 20e-6, 65e-9}
	for i := range 4 {
		if math.Abs(b[i]-want[i]) > 1e-3*want[i]+1e-9 {
			t.Errorf("coefficient %d: %v, want %v", i, b[i], want[i])
		}
	}
	if got, want := f.fixed(m, 20, 80000), truth(0, 20, 80000); math.Abs(got-want) > 1e-6 {
		t.Errorf("fixed(20 decodes, 80,000 context) %v, want %v (the model says %v)", got, want, m.IterTime(20))
	}
	if got := f.perToken(m); math.Abs(got-84e-6) > 1e-8 {
		t.Errorf("perToken %v, want 84 µs", got)
	}
}
