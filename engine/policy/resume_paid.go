package policy

import (
	"github.com/pitstop-llm/pitstop/engine"
)

// resumePaid is PitstopTail "aging+warm+resume": a call back from its tool
// whose KV waits on the host tier (swapped at the tool, or evicted to the
// host while paused) is ranked by the memory-over-time its segment adds,
// its context counted as paid: the key of a call whose prompt is the
// tokens still to prefill (the tool's result) and that holds nothing else.
//
// Why: the context is the call's own service so far, held on the host tier
// already; ranked by the memory-over-time of its whole context, a long
// context back from its tool goes after every new call, and past capacity
// it waits minutes for its swap-in while its host copy fills the tier
// (infercept-single on Vicuna at 1.8 programs/s: swap-in wait p99 299 s
// against infercept's 5 s; docs/results-policies.md, session 11). Its age
// already runs from the call's arrival, so the aging alone does not bring
// it back soon enough. Only the wait after a tool: a call preempted to the
// host keeps the whole rank (resuming preempted calls first re-admits the
// calls whose growth preempted others).
func (p *Pitstop) resumePaid(v *engine.View, s *engine.Sequence, st *callState) (float64, bool) {
	if !p.tail.resume || !st.backOnHost || s.State() != engine.Swapped || p.noMOT {
		return 0, false
	}
	seg := segmentOf(s.Forecast().Predicted, s, st)
	seg.Prompt = max(s.NumTokens()-s.Computed(), 1)
	return p.rankOf(v, s, st, seg), true
}

// observeResume marks a call back from its tool with its KV on the host,
// until it runs again or is preempted.
func observeResume(e *engine.Event) {
	switch e.Kind {
	case engine.EvResumed:
		stateOf(e.Seq).backOnHost = e.Seq.State() == engine.Swapped
	case engine.EvToken, engine.EvPreempted, engine.EvPaused:
		if st, ok := e.Seq.PolicyState.(*callState); ok {
			st.backOnHost = false
		}
	}
}
