package policy

import "github.com/pitstop-llm/pitstop/engine"

// boostPast decides when pitstop ranks by γ-Boost's boosted arrival time in
// place of the aging (PitstopTail "aging+warm+first-final-gated-fit-boost-
// SOURCE-past", "-past-busy", each with "-hold"): only while the system is
// past capacity, as the overload guard of the forecast lane tells it
// (overloadGuard: the least backlog of the last window above the least of
// the window before, the window arrival order's p99 end-to-end time, the
// lane's bar; with "-busy" the rise counted only from a floor above zero,
// overloadGuard.busy: without it azure-code @1's bursts, each rising from
// an empty queue, switched the boost on and cost the mean).
//
// Why: γ-Boost is tail-optimal for a stable queue (its γ, the Cramér–
// Lundberg root, exists only at load < 1); the aging, its small-size form
// with 1/γ = T/2, keeps the mean below capacity (azure-code @1, mixed
// @0.5), where every boost measured lost it. Past capacity the p99 is how
// long the backlog's oldest calls are held, which the boost's short head
// start bounds (azure-conv @6, react @12: docs/results-policies.md,
// session 18, boost18). Both regimes are read off the policy's own queue
// and its learned p99; nothing of the workload, no constant.
//
// Until the guard has seen two windows it does not know, and the aging
// stays. Without hold the boost lasts while the floor rises; with hold
// (overloadGuard.hold) from the first rise until the last window's floor is
// back at the floor the rise began from: the backlog has drained.
type boostPast struct {
	guard   overloadGuard
	waiting int // runnable calls the last iteration left out
}

// observe keeps the backlog of the last iteration.
func (b *boostPast) observe(e *engine.Event) {
	if e.Kind == engine.EvIteration && e.Iter != nil {
		b.waiting = e.Iter.Waiting
	}
}

// note gives the guard the backlog at a re-rank at time at (seconds),
// against the window (seconds; not positive: unknown).
func (b *boostPast) note(at, window float64) { b.guard.note(at, b.waiting, window) }

// on reports whether the boost ranks now: the guard knows, and says past
// capacity.
func (b *boostPast) on() bool { return b.guard.known && b.guard.overloaded() }

// boostPastKey sets *key to the call's boosted arrival time and reports
// true while the boost ranks (boostPast.on); otherwise it leaves the key to
// the aging. The boost is computed either way, so that its sources that
// learn from the ranked calls (the shadow's tail of "-tail", the sizes'
// window) hold the whole run, not only its overloaded stretches.
func (p *Pitstop) boostPastKey(v *engine.View, s *engine.Sequence, st *callState, key *float64) bool {
	k := p.boostKey(v, s, st)
	if !p.past.on() {
		return false
	}
	*key = k
	return true
}
