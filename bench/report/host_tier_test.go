package report

import (
	"math"
	"testing"
)

// The host tier's figures are time-weighted over iterations, refusals sum
// by site, and swap-in waits give a mean and a nearest-rank p99.
func TestHostTierSummary(t *testing.T) {
	c := NewCollector()
	if r := c.Summarize("p", 1); r.HostTier != nil {
		t.Fatalf("host tier %+v with nothing recorded, want none", r.HostTier)
	}
	c.AddHostTier(1, 100, 100, 80) // full, 80 % waiting for a swap-in
	c.AddHostTier(3, 100, 20, 0)
	c.AddHostTier(0, 100, 50, 50) // no time: not weighed
	c.AddRefusedSwaps("eviction", 2, 64)
	c.AddRefusedSwaps("eviction", 1, 16)
	c.AddRefusedSwaps("preemption", 1, 8)
	for _, w := range []float64{1, 2, 3, 10} {
		c.AddSwapInWait(w)
	}
	h := c.Summarize("p", 1).HostTier
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-9 }
	if !near(h.UsedMean, (1.0+0.6)/4) || !near(h.RunnableMean, 0.8/4) || !near(h.FullFraction, 0.25) {
		t.Errorf("used %g, runnable %g, full %g; want 0.4, 0.2, 0.25", h.UsedMean, h.RunnableMean, h.FullFraction)
	}
	if h.RefusedSwaps["eviction"] != 3 || h.RefusedSwapTokens["eviction"] != 80 || h.RefusedSwaps["preemption"] != 1 || h.RefusedSwapTokens["preemption"] != 8 {
		t.Errorf("refused %v tokens %v; want eviction 3 / 80, preemption 1 / 8", h.RefusedSwaps, h.RefusedSwapTokens)
	}
	if h.SwapInWaits != 4 || !near(h.SwapInWaitMeanS, 4) || h.SwapInWaitP99S != 10 {
		t.Errorf("swap-in waits %d, mean %g, p99 %g; want 4, 4, 10", h.SwapInWaits, h.SwapInWaitMeanS, h.SwapInWaitP99S)
	}
}
