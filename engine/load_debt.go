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
// scheduler gives a process it brought back a minimum residency: since its
// last admission, a call that has spent more device time recomputing KV lost
// to a preemption than on new tokens cannot be preempted by an admission
// (a waiting or swapped call; a running call that needs a block still may, as
// before). Each admission of a preempted call thus ends with at least as much
// new work as recomputation, so the rebuilt context yields progress before it
// can be thrown away again, and a preemption loop cannot last. A call
// admitted for the first time, back from a tool, or swapped in without
// recomputing carries no such debt: fresh work and the policies' own handling
// at tools are preempted as before.

// loadDebt is a call's device time since its last admission, split into the
// recomputation of KV that a preemption dropped and everything else.
type loadDebt struct {
	recompute time.Duration
	fresh     time.Duration
}

// loadUnpaid reports whether s has spent more device time since its last
// admission recomputing preempted KV than on new tokens.
func (s *Sequence) loadUnpaid() bool { return s.debt.recompute > s.debt.fresh }

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
