package policy

import (
	"fmt"

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
//
// "balance-inflow" is balance that never lets the chunk drain the backlog
// slower than prefill work arrives: L counts the calls present, and a
// chunk below the inflow keeps the backlog, and the iterations' fixed cost,
// growing for the calls still to come. The inflow a (prompt tokens per
// second: arrivals' prompts and the uncomputed context of calls back from a
// tool) is counted over the backlog's own horizon, the seconds it takes to
// drain at the full budget; the chunk is at least the c whose iterations
// drain a·IterTime(n + c) per iteration, c_min = a·IterTime(n)/(1 −
// a·PerToken), the full budget when a·PerToken ≥ 1.
//
// "balance-expected" (and "balance-expected-inflow") prices the decodes'
// delay as its expectation over each call's output length as the length
// model gives it (expected_chunk.go), conditioned on what the call has
// generated, in place of the point forecast (the search stays local).
//
// "-measured" (balance-expected-measured, balance-expected-inflow-measured)
// takes the decodes' part of an iteration, IterTime(n) above, from what the
// last iteration measured (decodeCost) in place of the cost model's
// IterBase + PerToken·n, which prices a decode like a prompt token and
// misses the KV a decode reads.
//
// "balance-expected-arrivals" prices the calls still to come (arrival_chunk.go):
// L gains the wait of the calls that arrive while the backlog drains, at
// the rate learned from the last arrivals (arrival_rate.go), and the chunk
// is L's global minimum (no local search, no floor). "-fit"
// (balance-expected-fit, balance-expected-arrivals-fit) takes F, the
// decodes' part of an iteration, and P, a prompt token's time, from a
// least-squares fit of every iteration's measured duration against its
// prompt tokens, decodes and the context the decodes read (iter_fit.go).
// "balance-expected-flow" (and "-flow-fit") is -arrivals with the other
// side of the calls to come priced too: the decodes of the calls prefilled
// while the backlog drains, each iteration of theirs longer by the chunk
// (flow_decodes.go). "-busy" (balance-expected-arrivals-busy, -arrivals-busy-fit,
// -flow-busy, -flow-busy-fit) is the first formulation of both
// (busy_chunk.go).
type prefillBudget struct {
	balance, inflow, expected, measured bool
	arrivals, fit, flow, busy           bool
	in                                  inflowWindow
	dec                                 decodeCost
	ar                                  arrivalRate
	it                                  iterFit
	fl                                  flowDecodes
}

// newPrefillBudget reads Options.PitstopPrefill.
func newPrefillBudget(mode string) (prefillBudget, error) {
	switch mode {
	case "", "full":
		return prefillBudget{}, nil
	case "balance":
		return prefillBudget{balance: true}, nil
	case "balance-inflow":
		return prefillBudget{balance: true, inflow: true}, nil
	case "balance-expected":
		return prefillBudget{balance: true, expected: true}, nil
	case "balance-expected-inflow":
		return prefillBudget{balance: true, expected: true, inflow: true}, nil
	case "balance-expected-measured":
		return prefillBudget{balance: true, expected: true, measured: true}, nil
	case "balance-expected-inflow-measured":
		return prefillBudget{balance: true, expected: true, inflow: true, measured: true}, nil
	case "balance-expected-fit":
		return prefillBudget{balance: true, expected: true, fit: true}, nil
	case "balance-expected-arrivals":
		return prefillBudget{balance: true, expected: true, arrivals: true}, nil
	case "balance-expected-arrivals-fit":
		return prefillBudget{balance: true, expected: true, arrivals: true, fit: true}, nil
	case "balance-expected-flow":
		return prefillBudget{balance: true, expected: true, arrivals: true, flow: true}, nil
	case "balance-expected-flow-fit":
		return prefillBudget{balance: true, expected: true, arrivals: true, flow: true, fit: true}, nil
	case "balance-expected-arrivals-busy":
		return prefillBudget{balance: true, expected: true, arrivals: true, busy: true}, nil
	case "balance-expected-arrivals-busy-fit":
		return prefillBudget{balance: true, expected: true, arrivals: true, busy: true, fit: true}, nil
	case "balance-expected-flow-busy":
		return prefillBudget{balance: true, expected: true, arrivals: true, flow: true, busy: true}, nil
	case "balance-expected-flow-busy-fit":
		return prefillBudget{balance: true, expected: true, arrivals: true, flow: true, busy: true, fit: true}, nil
	}
	return prefillBudget{}, fmt.Errorf("unknown pitstop prefill budget %q (valid: full, balance, balance-inflow, balance-expected, balance-expected-inflow, balance-expected-measured, balance-expected-inflow-measured, balance-expected-fit, balance-expected-arrivals, balance-expected-arrivals-fit, balance-expected-flow, balance-expected-flow-fit, balance-expected-arrivals-busy, balance-expected-arrivals-busy-fit, balance-expected-flow-busy, balance-expected-flow-busy-fit)", mode)
}

// badPrefill is newPrefillBudget's error on o.PitstopPrefill.
func badPrefill(o Options) error { _, err := newPrefillBudget(o.PitstopPrefill); return err }

// tokens is the iteration's token cap (decodes and chunk together), 0 for
// the profile's budget.
func (b *prefillBudget) tokens(v *engine.View) int {
	budget := v.Cost.TokenBudget
	if !b.balance || budget <= 0 || v.Cost.PerToken <= 0 {
		return 0
	}
	var dec []float64
	var pts []decodePoint // balance-expected: every decode's rest as points with masses
	w, s := 0.0, 0.0
	ctx := 0     // Σ context the decodes read (-fit)
	waiting := 0 // calls in the backlog (-flow)
	for q := range v.Ranked() {
		if q.State() == engine.Swapped {
			continue // its KV comes back by copy, not prefill
		}
		if q.State() == engine.Running && q.Remaining() <= 1 {
			dec = append(dec, float64(decodeLeft(q.Forecast().Predicted, q, stateOf(q))))
			ctx += q.Computed() + 1
			if b.expected {
				pts = restPoints(pts, q)
			}
			continue
		}
		w += float64(q.Remaining())
		s += w
		waiting++
	}
	fixed := v.Cost.IterTime(len(dec))
	if b.measured {
		fixed = b.dec.fixed(v.Cost, len(dec))
	}
	perToken := v.Cost.PerToken
	if b.fit {
		fixed, perToken = b.it.fixed(v.Cost, len(dec), ctx), b.it.perToken(v.Cost)
	}
	if b.arrivals {
		lambda, a := b.ar.rate(v.Now.Seconds())
		var fl *flowDecodes
		m := 0.0
		if b.flow {
			m = w / float64(max(waiting, 1)) // the backlog's calls until arrivals are seen
			if lambda > 0 {
				m = a / lambda
			}
			b.fl.prepare()
			fl = &b.fl
		}
		if b.busy {
			return chunkForBusy(fixed, perToken, len(dec), pts, w, s, budget, lambda, a, fl, m)
		}
		return chunkForFlow(fixed, perToken, len(dec), pts, w, s, budget, lambda, a, fl, m)
	}
	floor := 0.0
	if b.inflow && w > 0 {
		full := max(budget-len(dec), 1)
		horizon := w / float64(full) * v.Cost.IterTime(budget)
		a := b.in.rate(v.Now.Seconds(), horizon)
		if a*v.Cost.PerToken >= 1 {
			return 0
		}
		floor = a * fixed / (1 - a*v.Cost.PerToken)
	}
	if b.expected {
		return chunkForExpected(fixed, perToken, len(dec), pts, w, s, budget, floor)
	}
	return chunkFor(fixed, v.Cost.PerToken, dec, w, s, budget, floor)
}

// observe counts the prefill work that joins the backlog (balance-inflow):
// an arriving call's prompt, a resumed call's uncomputed context.
func (b *prefillBudget) observe(e *engine.Event) {
	if b.measured && e.Kind == engine.EvIteration && e.Iter != nil {
		b.dec.observe(e.Iter)
	}
	if b.fit && e.Kind == engine.EvIteration && e.Iter != nil {
		b.it.observe(e.Iter)
	}
	if b.flow {
		switch e.Kind {
		case engine.EvPaused, engine.EvFinished: // a segment ended: its output length
			b.fl.add(e.Seq.Generated() - stateOf(e.Seq).segBase)
		}
	}
	if !b.inflow && !b.arrivals {
		return
	}
	switch e.Kind {
	case engine.EvArrived, engine.EvResumed:
		if n := e.Seq.Remaining(); n > 0 {
			if b.inflow {
				b.in.add(e.Time.Seconds(), n)
			}
			if b.arrivals {
				b.ar.add(e.Time.Seconds(), n)
			}
		}
	}
}

// inflowWindow is the prefill work that arrived lately: (time, tokens) in
// arrival order and their sum, pruned to the horizon asked last (a horizon
// that grows later sees only what the shorter one kept: it errs low).
type inflowWindow struct {
	at   []float64
	n    []int
	head int
	sum  int
}

func (w *inflowWindow) add(t float64, n int) {
	w.at, w.n = append(w.at, t), append(w.n, n)
	w.sum += n
}

// rate is the tokens per second that arrived in the last horizon seconds.
func (w *inflowWindow) rate(now, horizon float64) float64 {
	if horizon <= 0 {
		return 0
	}
	for w.head < len(w.at) && w.at[w.head] < now-horizon {
		w.sum -= w.n[w.head]
		w.head++
	}
	if w.head > 1024 && w.head*2 > len(w.at) {
		k := copy(w.at, w.at[w.head:])
		copy(w.n, w.n[w.head:])
		w.at, w.n, w.head = w.at[:k], w.n[:k], 0
	}
	return float64(w.sum) / horizon
}

// chunkFor is the token cap for n = len(dec) decoding calls with dec
// tokens left each, backlog w and Σ cumulative positions s (see
// prefillBudget), the chunk at least floor: n plus the chunk, 0 when the
// full budget is the best.
func chunkFor(fixed, perToken float64, dec []float64, w, s float64, budget int, floor float64) int {
	// Each rest known for sure: the expected form with unit masses, which
	// computes the same cost and search (a mass of 1 multiplies exactly).
	pts := make([]decodePoint, len(dec))
	for i, d := range dec {
		pts[i] = decodePoint{d: d, p: 1}
	}
	return chunkForExpected(fixed, perToken, len(dec), pts, w, s, budget, floor)
}
