package policy

import (
	"github.com/pitstop-llm/pitstop/engine"
	"github.com/pitstop-llm/pitstop/handling"
)

// Autellix is the family of attained-service multilevel queue policies of
// Autellix (§4.2): calls sit in K queues by attained service, run FCFS
// inside a queue (by the time they entered it), are demoted when they use up
// their queue's quantum and promoted to the first queue when their program
// has waited β times its service. A higher queue preempts a lower one: the
// engine evicts the lowest-ranked running calls (swapped while the host tier
// has room). At a tool call the KV is discarded; the prefix cache keeps it
// for the resume while no one needs the blocks. The three members differ in
// where a call starts:
//
//   - mlfq (FastServe, Autellix's baseline): every call starts in the first
//     queue; only its own service counts.
//   - plas: the queue of its program's service, summed over completed calls.
//   - atlas: the queue of its program's longest critical path over threads.
type Autellix struct {
	engine.BasePolicy
	a attained
}

// NewMLFQ is the call-level multilevel feedback queue.
func NewMLFQ(o Options) *Autellix { return &Autellix{a: newAttained(callService, o.Defaults())} }

func (p *Autellix) Priority(v *engine.View, s *engine.Sequence) engine.Priority {
	st := stateOf(s)
	q := p.a.queueOf(v, s, st)
	if p.a.betweenSteps(v) && s.State() == engine.Running {
		// Multi-step scheduling: between scheduling points the batch keeps
		// running; waiting calls only fill free room.
		return engine.Priority{Class: -1, Key: float64(q)*1e9 + st.entered}
	}
	return engine.Priority{Class: float64(q), Key: st.entered}
}

func (p *Autellix) Handle(*engine.View, *engine.Sequence) handling.Kind { return handling.Discard }

func (p *Autellix) Evict(v *engine.View, s *engine.Sequence) handling.Kind { return swapIfRoom(v, s) }

func (p *Autellix) Traits() engine.Traits {
	return engine.Traits{PrefixCache: true, Preemptive: true}
}

func (p *Autellix) Refresh(v *engine.View) bool {
	return p.a.refresh(v) || (p.a.multiStep > 1 && v.Iteration%p.a.multiStep == 0)
}

func (p *Autellix) Observe(e *engine.Event) { p.a.observe(e) }

// Queue is the call's attained-service queue (-1: promoted by β), for metrics.
func (p *Autellix) Queue(s *engine.Sequence) int { return stateOf(s).queue }
