package policy

import "github.com/pitstop-llm/pitstop/engine"

// firstWait is the deadline lane's first-wait test (PitstopTail
// "aging+warm+first"): only a call that has not produced its first token
// (its first wait: a new call, or one preempted before its first token) is
// promoted; a call that has started, paused on a tool, been evicted or
// swapped, waits in the aging rank however late it is.
//
// Why: where the p99 target binds (azure-code, infercept-single), the
// calls the tail is made of are long prompts that memory-over-time serves
// last, and what they lose is the wait to start (docs/results-policies.md,
// session 10, "Why, per failed bar"): reordering the prefills of calls
// that hold nothing yet is all the lane needs there. A started call's
// promotion is the expensive kind: it comes back from a tool or an eviction
// holding a long context, which it must swap in or recompute, and which
// holds the device while it decodes; where the device's throughput binds
// (infercept-multi) that is the cost the lane's promotions paid (its
// sustained rate fell from aging's 5.0 to 4.333–4.667, session 10). No
// threshold: a call has started or it has not.
func firstWait(s *engine.Sequence) bool { return s.Generated() == 0 }
