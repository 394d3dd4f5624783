package policy

import (
	"github.com/pitstop-llm/pitstop/engine"
	"github.com/pitstop-llm/pitstop/handling"
)

// SRPT is the clairvoyant reference: shortest remaining processing time
// first, from the truth of the trace (Forecast().Truth), preemptive, with
// least-waste handling computed with the true tool durations. Remaining time
// is the call's own: the tokens it still has to prefill and decode (at the
// current iteration time) plus the rest of its current tool call; the tools
// of later segments are not in the forecast and are not counted. It is a
// reference point, not a policy a server can run: nothing outside a trace
// knows the truth. Without truth (HasTruth false) it falls back to the
// prediction.
//
// Two knobs make a stronger oracle for this engine (results-policies.md):
// SRPTServiceOnly leaves the tool time out of the rank (a tool does not use
// the engine, and ranking a call late because a long tool follows delays the
// start of that tool), and SRPTRunningFirst keeps calls on the device
// running first instead of preempting them.
type SRPT struct {
	engine.BasePolicy
	serviceOnly, runningFirst bool
}

// NewSRPT builds the policy.
func NewSRPT(o Options) *SRPT {
	return &SRPT{serviceOnly: o.SRPTServiceOnly, runningFirst: o.SRPTRunningFirst}
}

func (p *SRPT) truth(s *engine.Sequence) engine.Prediction {
	f := s.Forecast()
	if f.HasTruth {
		return f.Truth
	}
	return f.Predicted
}

// remaining is the call's remaining time in seconds if it ran alone in the
// current load: its uncomputed context in chunks, its decodes at one
// iteration each, and its tool.
func (p *SRPT) remaining(v *engine.View, s *engine.Sequence) float64 {
	t := p.truth(s)
	st := stateOf(s)
	dec := decodeLeft(t, s, st) + max(t.After, 0)
	rem := v.Cost.RecomputeTime(s.Remaining(), v.Running) + float64(dec)*v.Cost.IterTime(v.Running+1)
	if t.HasTool {
		rem += v.Cost.RecomputeTime(t.ToolReturn, v.Running)
		if !p.serviceOnly {
			rem += max(t.ToolTime, 0)
		}
	}
	return rem
}

func (p *SRPT) Priority(v *engine.View, s *engine.Sequence) engine.Priority {
	if p.runningFirst && s.State() == engine.Running {
		return engine.Priority{Class: 0, Key: s.Arrival().Seconds()}
	}
	return engine.Priority{Class: 1, Key: p.remaining(v, s)}
}

// Handle is InferCept's least waste with the true remaining tool time.
func (p *SRPT) Handle(v *engine.View, s *engine.Sequence) handling.Kind {
	sit := v.Situation(s)
	t := p.truth(s)
	sit.ToolRemaining = max(t.ToolTime-s.ToolElapsed(v.Now), 0)
	k, _ := handling.Choose(sit, v.Cost, allowedKinds(v, s)...)
	return k
}

func (p *SRPT) Evict(v *engine.View, s *engine.Sequence) handling.Kind {
	return leastWasteEvict(v, s)
}

func (p *SRPT) Traits() engine.Traits {
	return engine.Traits{PrefixCache: true, Preemptive: !p.runningFirst}
}

func (p *SRPT) Observe(e *engine.Event) {
	if e.Kind == engine.EvResumed {
		stateOf(e.Seq).newSegment(e.Seq)
	}
}
