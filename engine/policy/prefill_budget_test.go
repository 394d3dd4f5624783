package policy

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/pitstop-llm/pitstop/engine"
)

// chunkFor's three regimes: nothing to balance (no decodes, no backlog: the
// full budget), decodes that outlast the backlog whatever the chunk (they
// pay for all of it anyway: the full budget), and short decodes beside a
// long backlog (the chunk at the balance sqrt(S·fixed/(PerToken·ΣD)), which
// the cost L prefers to the full budget, and which grows with the backlog).
func TestChunkForBalances(t *testing.T) {
	const fixed, perToken, budget = 0.0155, 0.000084, 2048
	if got := chunkFor(fixed, perToken, nil, 1e5, 1e6, budget, 0); got != 0 {
		t.Errorf("no decodes: cap %d, want 0 (the full budget)", got)
	}
	if got := chunkFor(fixed, perToken, []float64{100}, 0, 0, budget, 0); got != 0 {
		t.Errorf("no backlog: cap %d, want 0", got)
	}
	// 4,000-token backlog; each decode has 1,000 tokens left: at any chunk
	// of 4 or more they outlast it.
	long := []float64{1000, 1000, 1000}
	if got := chunkFor(fixed, perToken, long, 4000, 6000, budget, 0); got != 0 {
		t.Errorf("decodes outlasting the backlog: cap %d, want 0", got)
	}
	// 30 decodes of 100 tokens beside 350,000 queued prompt tokens (S 5e6).
	short := make([]float64, 30)
	for i := range short {
		short[i] = 100
	}
	got := chunkFor(fixed, perToken, short, 3.5e5, 5e6, budget, 0)
	want := 30 + int(math.Ceil(math.Sqrt(5e6*fixed/(perToken*3000))))
	if got != want {
		t.Errorf("short decodes, long backlog: cap %d, want %d (30 decodes and the balanced chunk)", got, want)
	}
	cost := func(c float64) float64 { return 5e6*fixed/c + perToken*3000*c }
	if c := float64(got - 30); cost(c) >= cost(budget-30) {
		t.Errorf("the balanced chunk %v costs %v, the full budget %v: want less", c, cost(c), cost(budget-30))
	}
	bigger := chunkFor(fixed, perToken, short, 3.5e5, 2e7, budget, 0)
	if bigger <= got {
		t.Errorf("a 4x heavier backlog: cap %d, want above %d", bigger, got)
	}
}

// With "balance", a call waiting with a 320-token prompt beside a call
// with about 9 tokens left to decode, on a cost model where a token costs
// as much as the iteration's fixed part, is prefilled in chunks well below
// the 32-token budget while the decode runs (the balance is
// sqrt(320·0.002/(0.001·9)), about 9 tokens: the decode would otherwise pay
// for 9 full chunks); with "full" it takes the 31 tokens the decode leaves.
// Both calls end, nothing leaks.
func TestPrefillBalanceCapsTheChunk(t *testing.T) {
	computed := func(mode string) int {
		cfg := testConfig()
		cfg.Cost.IterBase, cfg.Cost.PerToken = 0.001, 0.001
		h := newHarness(t, NewPitstop(Options{PitstopPrefill: mode}), cfg)
		h.submit("B", "pb", "main", 8, []seg{{decode: 12}}, nil)
		h.run(untilIteration(3))
		a := h.submit("A", "pa", "main", 320, []seg{{decode: 4}}, nil)
		h.run(untilIteration(4))
		n := a.Computed()
		h.run(nil)
		return n
	}
	full, bal := computed("full"), computed("balance")
	t.Logf("A's prefill after 4 iterations beside B's decode: full %d tokens, balance %d", full, bal)
	if full < 3*31 {
		t.Errorf("full: A prefilled %d tokens in 4 iterations, want at least 93", full)
	}
	if bal == 0 || bal > 4*12 {
		t.Errorf("balance: A prefilled %d tokens in 4 iterations, want some and at most 48 (chunks of about 9)", bal)
	}
}

// A bad value is refused with the valid ones; "full" is the default (and
// caps nothing).
func TestPrefillBudgetValues(t *testing.T) {
	if err := (Options{PitstopPrefill: "half"}).Validate(); err == nil || !strings.Contains(err.Error(), "valid: full, balance") {
		t.Errorf("Validate(half) = %v, want an error naming the valid values", err)
	}
	for _, m := range []string{"", "full", "balance", "balance-inflow", "balance-expected", "balance-expected-inflow", "balance-expected-measured", "balance-expected-inflow-measured", "balance-expected-fit", "balance-expected-arrivals", "balance-expected-arrivals-fit", "balance-expected-flow", "balance-expected-flow-fit", "balance-expected-arrivals-busy", "balance-expected-arrivals-busy-fit", "balance-expected-flow-busy", "balance-expected-flow-busy-fit"} {
		if err := (Options{PitstopPrefill: m}).Validate(); err != nil {
			t.Errorf("Validate(%q) = %v", m, err)
		}
	}
	p := NewPitstop(Options{})
	if lim := p.Shape(&engine.View{Cost: testCost()}); lim.Tokens != 0 {
		t.Errorf("default Shape caps %d tokens, want 0", lim.Tokens)
	}
}

// The inflow floor: a chunk below it is raised to it, and a floor at or
// past the full budget gives the full budget; with short decodes and no
// floor the chunk is the balance, as before.
func TestChunkForFloor(t *testing.T) {
	const fixed, perToken, budget = 0.0155, 0.000084, 2048
	short := make([]float64, 30)
	for i := range short {
		short[i] = 100
	}
	bal := chunkFor(fixed, perToken, short, 3.5e5, 5e6, budget, 0)
	if got := chunkFor(fixed, perToken, short, 3.5e5, 5e6, budget, 1000); got != 30+1000 {
		t.Errorf("floor 1000 above the balance %d: cap %d, want 1030", bal-30, got)
	}
	if got := chunkFor(fixed, perToken, short, 3.5e5, 5e6, budget, 10); got != bal {
		t.Errorf("floor 10 below the balance: cap %d, want the balance's %d", got, bal)
	}
	if got := chunkFor(fixed, perToken, short, 3.5e5, 5e6, budget, 5000); got != 0 {
		t.Errorf("floor past the budget: cap %d, want 0 (the full budget)", got)
	}
}

// The inflow window counts the tokens of the last horizon seconds only.
func TestInflowWindowRate(t *testing.T) {
	var w inflowWindow
	for i := range 10 {
		w.add(float64(i), 100) // 100 tokens a second, t = 0..9
	}
	if got := w.rate(9.5, 5); got != 500.0/5 {
		t.Errorf("rate over (4.5, 9.5] = %v, want 100 tokens/s", got)
	}
	if got := w.rate(20, 5); got != 0 {
		t.Errorf("rate over (15, 20] = %v, want 0", got)
	}
	if got := w.rate(20, 0); got != 0 {
		t.Errorf("rate over no horizon = %v, want 0", got)
	}
}

// "balance-inflow" keeps the full budget while prompts arrive faster than
// a smaller chunk would drain them: in the setting of
// TestPrefillBalanceCapsTheChunk, with a 32-token call arriving every
// iteration, it prefills as many prompt tokens in 4 iterations as "full"
// and more than "balance", which shrinks the chunk as if none came.
func TestPrefillInflowKeepsUpWithArrivals(t *testing.T) {
	computed := func(mode string) int {
		cfg := testConfig()
		cfg.Cost.IterBase, cfg.Cost.PerToken = 0.001, 0.001
		cfg.MaxSeqs = 64
		cfg.NumBlocks = 4096
		h := newHarness(t, NewPitstop(Options{PitstopPrefill: mode}), cfg)
		h.submit("B", "pb", "main", 8, []seg{{decode: 12}}, nil)
		h.run(untilIteration(3))
		a := h.submit("A", "pa", "main", 320, []seg{{decode: 4}}, nil)
		for i := range 4 {
			h.submit(fmt.Sprintf("x%d", i), fmt.Sprintf("px%d", i), "main", 32, []seg{{decode: 2}}, nil)
			h.run(untilIteration(1))
		}
		total := a.Computed()
		for q := range h.seqs {
			if q != "A" && q != "B" {
				total += h.seqs[q].Computed()
			}
		}
		h.run(nil)
		return total
	}
	full, bal, in := computed("full"), computed("balance"), computed("balance-inflow")
	t.Logf("prompt tokens prefilled in 4 iterations: full %d, balance %d, balance-inflow %d", full, bal, in)
	if in <= bal || in < full {
		t.Errorf("balance-inflow prefilled %d tokens, balance %d, full %d: want full's, more than balance's", in, bal, full)
	}
}
