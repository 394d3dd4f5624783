package policy

import "github.com/pitstop-llm/pitstop/engine"

// workOf is the call's work in the shadow: workOf's, and with cached
// (PitstopTail "aging+warm+first-final-gated-fit-cached" or
// "...-queue-cached") its prefill less the part of its context the
// engine's prefix cache holds now beyond what it has computed.
//
// Why: the engine (arrival order's as well as this one: the prefix cache
// is an engine feature every policy runs with) does not prefill a cached
// prefix again, and a program's later calls arrive with their whole context
// cached or nearly so. The plain shadow prefills every call's context from
// nothing, which on mixed (agent programs whose calls carry thousands of
// tokens of context) overloads its prefill server: its arrival-order p99 is
// 2,123 s at @0.7 against fcfs's real 112 s (22.5 s with the cache
// counted; docs/results-policies.md, session 14). The cache at the call's
// arrival is this policy's, the only one known online; arrival order's
// could hold less.
func (f *fcfsShadow) workOf(v *engine.View, s *engine.Sequence, st *callState) shadowWork {
	w := workOf(s, st)
	if f.cached && s.State() != engine.Running {
		w.prefill = max(w.prefill-max(v.CachedPrefix(s)-s.Computed(), 0), 0)
	}
	return w
}
