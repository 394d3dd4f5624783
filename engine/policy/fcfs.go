package policy

import (
	"github.com/pitstop-llm/pitstop/engine"
	"github.com/pitstop-llm/pitstop/handling"
)

// FCFS is vLLM V0's scheduler: running calls first, then swapped, then
// waiting, each in arrival order; a tool call ends the request (its KV is
// discarded and the tool's return is a new prompt), preemption recomputes.
type FCFS struct{ engine.BasePolicy }

func (FCFS) Priority(_ *engine.View, s *engine.Sequence) engine.Priority {
	return engine.Priority{Class: stateClass(s), Key: s.ReadyAt().Seconds()}
}

func (FCFS) Handle(*engine.View, *engine.Sequence) handling.Kind { return handling.Discard }

// stateClass keeps calls with KV on the device ahead of those that must be
// brought back (swapped) or admitted (waiting): vLLM's running, swapped and
// waiting queues. FCFS orders inside each by the time the call entered the
// queue, so a tool's return queues as a new request, as vLLM sees it, while
// a preempted call keeps its place.
func stateClass(s *engine.Sequence) float64 {
	switch s.State() {
	case engine.Running:
		return 0
	case engine.Swapped:
		return 1
	default:
		return 2
	}
}

// VLLMOpt is the optimised vLLM baseline of Autellix: FCFS with automatic
// prefix caching and chunked prefill, so a program's next call reuses the
// KV its previous call left in the cache.
type VLLMOpt struct{ FCFS }

func (VLLMOpt) Traits() engine.Traits { return engine.Traits{PrefixCache: true} }
