package policy

import (
	"github.com/pitstop-llm/pitstop/engine"
	"github.com/pitstop-llm/pitstop/handling"
)

// LAMPS (LLM API- and Memory-based Predictive Scheduling) ranks waiting and
// swapped calls by the memory-over-time of their current segment under the
// handling predicted for its tool call (LAMPS §4.2–4.3; handling.RankAt: the
// area under the call's memory curve plus what its handling costs the other
// running calls), lowest first. The handling is predicted once per segment,
// when the segment is first ranked (at arrival or at the resume that starts
// it), from Forecast().Predicted, and applied at the tool call as predicted.
// Running calls keep FCFS order ahead of waiting ones (MARS sorts only the
// waiting and swapped queues). A call that has not run for
// StarvationThreshold iterations goes to the head of its queue until it
// finishes (§4.4). Not preemptive; a preempted call is swapped or recomputed,
// whichever wastes less (InferCept, which LAMPS extends).
type LAMPS struct {
	engine.BasePolicy
	starve  starvation
	refresh scoreRefresh
}

// NewLAMPS builds the policy.
func NewLAMPS(o Options) *LAMPS {
	o = o.Defaults()
	return &LAMPS{starve: newStarvation(o), refresh: scoreRefresh{every: o.ScoreRefresh}}
}

// Priority classes: starving running calls, running calls (FCFS), starving
// waiting calls, waiting and swapped calls (by score).
func (p *LAMPS) Priority(v *engine.View, s *engine.Sequence) engine.Priority {
	st := stateOf(s)
	starved := p.starve.ranked(v, s, st)
	if s.State() == engine.Running {
		if starved {
			return engine.Priority{Class: 0, Key: s.Arrival().Seconds()}
		}
		return engine.Priority{Class: 1, Key: s.Arrival().Seconds()}
	}
	score := p.score(v, s, st)
	if starved {
		return engine.Priority{Class: 2, Key: score}
	}
	return engine.Priority{Class: 3, Key: score}
}

// score is the memory-over-time rank of the call's current segment under its
// predicted handling, choosing that handling on the segment's first ranking.
// A call that has not changed since it was scored keeps its score until the
// next ScoreRefresh (LAMPS's cached scores).
func (p *LAMPS) score(v *engine.View, s *engine.Sequence, st *callState) float64 {
	key := keyOf(s)
	if st.scoreFor == key && st.kindSet && !p.refresh.now {
		return st.score
	}
	seg := segmentOf(s.Forecast().Predicted, s, st)
	if st.kindSet {
		st.score, _ = handling.RankAt(seg, v.Cost, loadOf(v), st.kind)
	} else {
		st.score, st.kind = handling.RankAt(seg, v.Cost, loadOf(v))
		st.kindSet = true
	}
	st.scoreFor = key
	return st.score
}

// Handle applies the handling predicted for the segment (swap falls back to
// discard when the host tier is full); it is never revised while the call
// waits.
func (p *LAMPS) Handle(v *engine.View, s *engine.Sequence) handling.Kind {
	st := stateOf(s)
	if !st.kindSet {
		_, st.kind = handling.RankAt(segmentOf(s.Forecast().Predicted, s, st), v.Cost, loadOf(v))
		st.kindSet = true
	}
	if st.kind == handling.Swap && !hostFits(v, s) {
		return handling.Discard
	}
	return st.kind
}

func (p *LAMPS) Evict(v *engine.View, s *engine.Sequence) handling.Kind {
	return leastWasteEvict(v, s)
}

// Refresh re-ranks everything when a call starved, or every ScoreRefresh
// iterations when set.
func (p *LAMPS) Refresh(v *engine.View) bool {
	due := p.starve.refresh(v)
	return p.refresh.due(v) || due
}

func (p *LAMPS) Observe(e *engine.Event) {
	if e.Kind == engine.EvResumed {
		stateOf(e.Seq).newSegment(e.Seq)
	}
}

// scoreRefresh is LAMPS's score-refresh interval (lamps, pitstop): every
// `every` iterations (0: never) all runnable calls are re-scored; now says
// whether this iteration's re-rank is such a refresh (cached scores are
// then recomputed).
type scoreRefresh struct {
	every, last int64
	now         bool
}

func (r *scoreRefresh) due(v *engine.View) bool {
	r.now = r.every > 0 && v.Iteration-r.last >= r.every
	if r.now {
		r.last = v.Iteration
	}
	return r.now
}
