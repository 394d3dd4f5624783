package policy

import (
	"github.com/pitstop-llm/pitstop/engine"
	"github.com/pitstop-llm/pitstop/handling"
)

// InferCept (ICML'24) keeps FCFS order but, at each tool call, picks the
// handling with the least memory waste (preserve, swap or discard) and
// re-checks it every iteration while the call waits, so a preserved call is
// swapped or discarded once its remaining tool time makes that cheaper.
// Swap is only considered while the host tier has room for the call.
type InferCept struct{ engine.BasePolicy }

// Priority is FCFS by first arrival: a resumed call goes back ahead of newer
// ones (InferCept requeues a discarded call at the front of waiting).
func (InferCept) Priority(_ *engine.View, s *engine.Sequence) engine.Priority {
	return engine.Priority{Class: stateClass(s), Key: s.Arrival().Seconds()}
}

func (InferCept) Handle(v *engine.View, s *engine.Sequence) handling.Kind {
	k, _ := handling.Choose(v.Situation(s), v.Cost, allowedKinds(v, s)...)
	return k
}

// Evict picks swap or recompute for a preempted running call, by the same
// waste model with no tool time left to wait.
func (InferCept) Evict(v *engine.View, s *engine.Sequence) handling.Kind {
	return leastWasteEvict(v, s)
}
