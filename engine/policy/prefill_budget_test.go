package policy

import (
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
	if got := chunkFor(fixed, perToken, nil, 1e5, 1e6, budget); got != 0 {
		t.Errorf("no decodes: cap %d, want 0 (the full budget)", got)
	}
	if got := chunkFor(fixed, perToken, []float64{100}, 0, 0, budget); got != 0 {
		t.Errorf("no backlog: cap %d, want 0", got)
	}
	// 4,000-token backlog; each decode has 1,000 tokens left: at any chunk
	// of 4 or more they outlast it.
	long := []float64{1000, 1000, 1000}
	if got := chunkFor(fixed, perToken, long, 4000, 6000, budget); got != 0 {
		t.Errorf("decodes outlasting the backlog: cap %d, want 0", got)
	}
	// 30 decodes of 100 tokens beside 350,000 queued prompt tokens (S 5e6).
	short := make([]float64, 30)
	for i := range short {
		short[i] = 100
	}
	got := chunkFor(fixed, perToken, short, 3.5e5, 5e6, budget)
	want := 30 + int(math.Ceil(math.Sqrt(5e6*fixed/(perToken*3000))))
	if got != want {
		t.Errorf("short decodes, long backlog: cap %d, want %d (30 decodes and the balanced chunk)", got, want)
	}
	cost := func(c float64) float64 { return 5e6*fixed/c + perToken*3000*c }
	if c := float64(got - 30); cost(c) >= cost(budget-30) {
		t.Errorf("the balanced chunk %v costs %v, the full budget %v: want less", c, cost(c), cost(budget-30))
	}
	bigger := chunkFor(fixed, perToken, short, 3.5e5, 2e7, budget)
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
	for _, m := range []string{"", "full", "balance"} {
		if err := (Options{PitstopPrefill: m}).Validate(); err != nil {
			t.Errorf("Validate(%q) = %v", m, err)
		}
	}
	p := NewPitstop(Options{})
	if lim := p.Shape(&engine.View{Cost: testCost()}); lim.Tokens != 0 {
		t.Errorf("default Shape caps %d tokens, want 0", lim.Tokens)
	}
}
