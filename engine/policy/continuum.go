package policy

import (
	"github.com/pitstop-llm/pitstop/engine"
	"github.com/pitstop-llm/pitstop/handling"
)

// Continuum (Li et al., 2025) schedules programs first-come first-served (a
// call ranks by its program's first arrival, so a program that returns from a
// tool goes ahead of programs that arrived after it) and pins the KV of a
// call that stops at a tool on the device for a time-to-live. Our reading of
// its TTL: keeping the KV saves the reload (recomputing the context, chunked
// beside the running calls) and the queueing an evicted call sees before it
// runs again (a moving average of the wait calls saw in their last
// segment), so the pin lasts TTLScale × (reload + queueing), ski-rental
// style; a tool predicted to outlast the TTL is not pinned at all. When the
// TTL runs out the KV is dropped. Not preemptive; preemption recomputes
// (vLLM); prefix cache on (Continuum builds on vLLM with it).
type Continuum struct {
	engine.BasePolicy
	scale     float64
	queueing  float64 // seconds, moving average of per-segment wait
	haveQueue bool
}

// NewContinuum builds the policy.
func NewContinuum(o Options) *Continuum { return &Continuum{scale: o.Defaults().TTLScale} }

func (p *Continuum) Priority(v *engine.View, s *engine.Sequence) engine.Priority {
	first := s.Arrival()
	if v.Programs != nil {
		if r := v.Programs.Get(s.Program()); r != nil {
			first = r.FirstArrival
		}
	}
	return engine.Priority{Class: stateClass(s), Key: first.Seconds()}
}

// TTL is the pin time of a call paused at a tool, in seconds.
func (p *Continuum) TTL(v *engine.View, s *engine.Sequence) float64 {
	reload := v.Cost.RecomputeTime(s.Computed(), v.Running)
	return p.scale * (reload + p.queueing)
}

func (p *Continuum) Handle(v *engine.View, s *engine.Sequence) handling.Kind {
	st := stateOf(s)
	if st.ttl < 0 { // at the tool call
		st.ttl = p.TTL(v, s)
		if s.Tool().Expected > st.ttl {
			st.ttl = 0 // the tool is predicted to outlast the pin: drop now
		}
	}
	if s.ToolElapsed(v.Now) >= st.ttl {
		return handling.Discard
	}
	return handling.Preserve
}

func (p *Continuum) Traits() engine.Traits { return engine.Traits{PrefixCache: true} }

// Observe keeps the queueing estimate: the wait each segment saw.
func (p *Continuum) Observe(e *engine.Event) {
	switch e.Kind {
	case engine.EvArrived:
		st := stateOf(e.Seq)
		st.segWait = e.Seq.Waited()
	case engine.EvResumed:
		st := stateOf(e.Seq)
		st.newSegment(e.Seq)
		st.segWait = e.Seq.Waited()
	case engine.EvPaused, engine.EvFinished:
		st := stateOf(e.Seq)
		w := (e.Seq.Waited() - st.segWait).Seconds()
		if !p.haveQueue {
			p.queueing, p.haveQueue = w, true
		} else {
			p.queueing += 0.05 * (w - p.queueing)
		}
	}
}
