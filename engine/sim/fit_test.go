package sim

import (
	"math"
	"math/rand/v2"
	"testing"
)

func synth(truth IterCost, n int, noise float64, decodes bool, seed uint64) []IterSample {
	r := rand.New(rand.NewPCG(seed, 1))
	out := make([]IterSample, n)
	for i := range out {
		s := IterSample{}
		if r.IntN(3) > 0 {
			chunk := float64(1 + r.IntN(256))
			ctx := chunk + float64(r.IntN(1024))
			s.PrefillTokens, s.PrefillAttn = chunk, chunk*ctx
		}
		if decodes {
			d := float64(r.IntN(32))
			s.Decodes, s.DecodeCtx = d, d*float64(1+r.IntN(2048))
		}
		s.Seconds = truth.Predict(s) * (1 + noise*r.NormFloat64())
		out[i] = s
	}
	return out
}

func TestFitRecoversCost(t *testing.T) {
	truth := IterCost{Base: 0.004, PrefillToken: 2e-4, PrefillAttn: 3e-8, DecodeSeq: 5e-4, DecodeCtx: 2e-7}
	got, st, err := FitIterCost(synth(truth, 400, 0, true, 1))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range [][2]float64{{got.Base, truth.Base}, {got.PrefillToken, truth.PrefillToken}, {got.PrefillAttn, truth.PrefillAttn}, {got.DecodeSeq, truth.DecodeSeq}, {got.DecodeCtx, truth.DecodeCtx}} {
		if math.Abs(c[0]-c[1]) > 1e-6*c[1] {
			t.Fatalf("exact data: fitted %+v, want %+v", got, truth)
		}
	}
	if st.R2 < 0.999999 || math.Abs(st.TotalErr) > 1e-9 {
		t.Fatalf("exact data: stats %+v", st)
	}
	got, st, err = FitIterCost(synth(truth, 400, 0.05, true, 2))
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(got.PrefillToken/truth.PrefillToken-1) > 0.1 || math.Abs(got.DecodeCtx/truth.DecodeCtx-1) > 0.1 || st.R2 < 0.9 || math.Abs(st.TotalErr) > 0.02 {
		t.Fatalf("5%% noise: fitted %+v (stats %+v), want near %+v", got, st, truth)
	}
}

func TestFitIsNonNegative(t *testing.T) {
	// No decodes at all, and a base that least squares would push below 0.
	truth := IterCost{Base: 0, PrefillToken: 1e-4, PrefillAttn: 1e-8}
	s := synth(truth, 200, 0.02, false, 3)
	for i := range s {
		s[i].Seconds -= 0.0005
		s[i].Seconds = max(s[i].Seconds, 0)
	}
	got, _, err := FitIterCost(s)
	if err != nil {
		t.Fatal(err)
	}
	if got.Base < 0 || got.PrefillToken < 0 || got.PrefillAttn < 0 || got.DecodeSeq != 0 || got.DecodeCtx != 0 {
		t.Fatalf("fitted %+v: negative, or decode terms without decodes", got)
	}
	if _, _, err := FitIterCost(s[:3]); err == nil {
		t.Fatal("fit of 3 samples accepted")
	}
}

func TestFitProfileAndSwap(t *testing.T) {
	base, err := LoadProfile("a100-80g-llama3-8b")
	if err != nil {
		t.Fatal(err)
	}
	truth := IterCost{Base: 0.01, PrefillToken: 1e-4, PrefillAttn: 1e-9, DecodeSeq: 1e-4, DecodeCtx: 1e-8}
	swaps := []SwapSample{{Blocks: 2, Bytes: 2e6, Seconds: 2e-4}, {Blocks: 10, Bytes: 1e7, Seconds: 1e-3}}
	p, _, err := FitProfile(*base, synth(truth, 100, 0, true, 4), swaps, "test")
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(p.Swap.Bandwidth/1e10-1) > 1e-9 || p.Swap.Gathered || p.Swap.PerTransfer != 0 {
		t.Fatalf("swap fitted as %+v, want 10 GB/s per-block", p.Swap)
	}
	if math.Abs(p.Iter.Base/truth.Base-1) > 1e-6 || len(p.Provenance) != len(base.Provenance)+3 {
		t.Fatalf("profile %+v", p)
	}
}

// TestFitKeepsAFixedCost: when the context terms explain the measured
// iterations alone, the fitted cost still charges every iteration
// something, so the fitted profile is valid.
func TestFitKeepsAFixedCost(t *testing.T) {
	var samples []IterSample
	for i := 1; i <= 20; i++ {
		ctx := float64(100 * i)
		samples = append(samples, IterSample{Decodes: 1, DecodeCtx: ctx, Seconds: 1e-6 * ctx})
	}
	cost, _, err := FitIterCost(samples)
	if err != nil {
		t.Fatal(err)
	}
	if cost.Base+cost.PrefillToken+cost.DecodeSeq <= 0 {
		t.Fatalf("fitted cost %+v charges nothing per iteration", cost)
	}
	if cost.DecodeCtx < 0.9e-6 || cost.DecodeCtx > 1.1e-6 {
		t.Fatalf("decode-context cost %g, want 1e-6", cost.DecodeCtx)
	}
}
