package engine

import "time"

// A preemptive policy lets a waiting or swapped call preempt a running one
// that it ranks before. When the victim's KV cannot go to the host it is
// discarded, and on its next admission the victim first recomputes it. On a
// small KV cache where a few contexts each fill most of the device, a policy
// whose order turns over every few iterations (attained service: the call
// that runs gains service and falls behind the ones that wait; MLFQ's quanta
// and its promotion of starving programs) then preempts each call again while
// it is still recomputing, and the engine spends its time rebuilding KV that
// the next preemption throws away: on chat at rate 3 with a 20,000-token
// cache, atlas, plas and mlfq recomputed 1.3-1.6 billion tokens to generate
// 0.6 million, and on seed 1 the last six calls (14,000-17,000 tokens each)
// preempted one another for good, with no token generated past 140,000 s
// (docs/results-policies.md, session 10).
//
// The engine so makes a reloaded call pay its load first, as a swapping
// scheduler gives a process it brought back a minimum residency. A call is
// paying while, since its last admission, it has spent more device time
// recomputing KV lost to a preemption than on new tokens (loadUnpaid). Three
// rules, so that each stay of a reloaded call ends with at least as much new
// work as recomputation before the rebuilt context can be thrown away again:
//
//   - A paying call is not preempted by an admission (a waiting or swapped
//     call) nor by a call admitted after it (yieldsTo); calls running since
//     before it still may, as before, so where only growth preempts in a
//     stable order (fcfs) this rule leaves the victims as they were.
//   - A paying call that finds no block while the iteration's batch already
//     holds other calls keeps its KV and waits for the next iteration
//     (cannotGrow), rather than being preempted because the calls ranked
//     before it took this iteration's blocks.
//   - A call that will recompute preempted KV is admitted only when its whole
//     context fits beside the whole contexts of the paying calls
//     (reloadFits): two reloads admitted on the same free blocks would
//     otherwise meet halfway and one would be preempted with its load
//     unpaid. This is SOLA's peak-memory admission, for reloads alone.
//
// A call admitted for the first time, back from a tool, or swapped in
// without recomputing carries no debt: fresh work and the policies' own
// handling at tools are preempted as before.

// loadDebt is a call's device time since its last admission, split into the
// recomputation of KV that a preemption dropped and everything else.
type loadDebt struct {
	iter      int64 // the iteration it was admitted in
	recompute time.Duration
	fresh     time.Duration
}

// yieldsTo reports whether running call v may be preempted for s as far as
// its load goes: yes once it has paid it, and before that only for a call
// running since before v was admitted.
func (v *Sequence) yieldsTo(s *Sequence) bool {
	return !v.loadUnpaid() || s.state == Running && s.debt.iter < v.debt.iter
}

// loadUnpaid reports whether s has spent more device time since its last
// admission recomputing preempted KV than on new tokens.
func (s *Sequence) loadUnpaid() bool { return s.state == Running && s.debt.recompute > s.debt.fresh }

// chargeLoad books share, s's part of an iteration in which it computed n
// tokens of which recomputed were recomputation.
func (s *Sequence) chargeLoad(share time.Duration, n, recomputed int) {
	if n <= 0 {
		return
	}
	re := time.Duration(0)
	if s.lostBy == LostPreempted {
		re = share * time.Duration(recomputed) / time.Duration(n)
	}
	s.debt.recompute += re
	s.debt.fresh += share - re
}

// reloadFits reports whether waiting call s may be admitted now: true
// unless it will recompute KV a preemption dropped and its whole context
// does not fit beside what the calls still paying their load hold or will
// hold (their whole contexts). With no such call it is admitted as any other.
func (e *Engine) reloadFits(s *Sequence) bool {
	if s.lostBy != LostPreempted || s.computed >= s.highWater {
		return true
	}
	claimed := 0
	for _, v := range e.active {
		if v.loadUnpaid() {
			claimed += max(len(v.blocks), e.blocks.BlocksFor(len(v.tokens)))
		}
	}
	return claimed == 0 || e.cfg.NumBlocks-e.watermark-claimed >= e.blocks.BlocksFor(len(s.tokens))
}
