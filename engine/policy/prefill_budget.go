package policy

import (
	"fmt"
	"math"

	"github.com/pitstop-llm/pitstop/engine"
)

// prefillBudget is how many prompt tokens an iteration prefills beside its
// decodes (Options.PitstopPrefill). "full" (the default) fills the
// profile's token budget, as every other policy does. "balance" sizes the
// chunk where the delay it costs the decoding calls meets the delay it saves
// the calls waiting for their prefill, on the engine's own cost model
// (IterTime = IterBase + PerToken·tokens):
//
//   - a chunk of c tokens lengthens every iteration by PerToken·c; a
//     decoding call with D tokens still to write pays it for
//     min(D, W/c) iterations, W the prompt tokens queued (the
//     backlog): PerToken·min(D·c, W) in all. A call that outlasts the
//     backlog pays PerToken·W whatever the chunk;
//   - the backlog takes W/c iterations, each paying the decodes' own
//     IterTime(n): the call whose prefill ends at cumulative position w
//     (rank order) waits w·IterTime(n)/c for the iterations' fixed part;
//     summed, S·IterTime(n)/c with S = Σ w.
//
// L(c) = PerToken·Σ min(D_i·c, W) + S·IterTime(n)/c. Where every decoding
// call outlasts the backlog the first term is flat and the full budget is
// best; otherwise the minimum over the calls that finish first is
// c* = sqrt(S·IterTime(n) / (PerToken·Σ D_i)). The chunk is the lower of
// L(full budget) and L at c* found by a few fixed-point steps on the set of
// calls that finish first. No constant: the cost model's and the
// forecast's figures alone.
type prefillBudget struct{ balance bool }

// newPrefillBudget reads Options.PitstopPrefill.
func newPrefillBudget(mode string) (prefillBudget, error) {
	switch mode {
	case "", "full":
		return prefillBudget{}, nil
	case "balance":
		return prefillBudget{balance: true}, nil
	}
	return prefillBudget{}, fmt.Errorf("unknown pitstop prefill budget %q (valid: full, balance)", mode)
}

// badPrefill is newPrefillBudget's error on o.PitstopPrefill.
func badPrefill(o Options) error { _, err := newPrefillBudget(o.PitstopPrefill); return err }

// tokens is the iteration's token cap (decodes and chunk together), 0 for
// the profile's budget.
func (b prefillBudget) tokens(v *engine.View) int {
	budget := v.Cost.TokenBudget
	if !b.balance || budget <= 0 || v.Cost.PerToken <= 0 {
		return 0
	}
	var dec []float64
	w, s := 0.0, 0.0
	for q := range v.Ranked() {
		if q.State() == engine.Swapped {
			continue // its KV comes back by copy, not prefill
		}
		if q.State() == engine.Running && q.Remaining() <= 1 {
			dec = append(dec, float64(decodeLeft(q.Forecast().Predicted, q, stateOf(q))))
			continue
		}
		w += float64(q.Remaining())
		s += w
	}
	return chunkFor(v.Cost.IterTime(len(dec)), v.Cost.PerToken, dec, w, s, budget)
}

// chunkFor is the token cap for n = len(dec) decoding calls with dec
// tokens left each, backlog w and Σ cumulative positions s (see
// prefillBudget): n plus the chunk, 0 when the full budget is the best.
func chunkFor(fixed, perToken float64, dec []float64, w, s float64, budget int) int {
	n := len(dec)
	if n == 0 || w <= 0 {
		return 0
	}
	full := float64(budget - n)
	if full <= 0 {
		return 0
	}
	cost := func(c float64) float64 {
		l := s * fixed / c
		for _, d := range dec {
			l += perToken * min(d*c, w)
		}
		return l
	}
	c := full
	for range 4 {
		short := 0.0
		for _, d := range dec {
			if d*c < w {
				short += d
			}
		}
		if short == 0 {
			break
		}
		c = min(max(math.Sqrt(s*fixed/(perToken*short)), 1), full)
	}
	if c >= full || cost(c) >= cost(full) {
		return 0
	}
	return n + int(math.Ceil(c))
}
