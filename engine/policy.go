package engine

import (
	"time"

	"github.com/pitstop-llm/pitstop/handling"
)

// Policy is a scheduling policy: it ranks the runnable calls and decides
// what happens to a paused call's KV. Policies live in engine/policy, one per
// file; they see the engine only through View and Sequence's read methods.
type Policy interface {
	// Priority ranks a runnable call (lower first). The engine caches it and
	// asks again when the call changes: it arrives, runs an iteration, is
	// preempted or resumes. Priorities that drift with time alone need a
	// Refresher.
	Priority(v *View, s *Sequence) Priority
	// Handle chooses preserve, swap or discard for a call paused on a tool:
	// once at the tool call and again each iteration while its KV is still
	// on the device (so a preserved call can be swapped or discarded later).
	Handle(v *View, s *Sequence) handling.Kind
}

// Traits are a policy's switches for the engine's mechanism.
type Traits struct {
	PrefixCache bool // keep freed blocks' hashes and reuse prefixes (vLLM's automatic prefix caching)
	Preemptive  bool // may evict lower-ranked running calls to admit higher-ranked waiting ones
}

// Refresher is implemented by policies whose priorities change with time
// alone (aging, starvation counters, program-level service): when Refresh
// reports true, every runnable call is ranked again this iteration.
type Refresher interface{ Refresh(v *View) bool }

// Traiter is implemented by policies that need other traits than the default
// (no prefix cache, not preemptive).
type Traiter interface{ Traits() Traits }

// Evicter chooses how to evict a running call under memory pressure: swap or
// discard (recompute later). Without it the engine recomputes, as vLLM does.
type Evicter interface {
	Evict(v *View, s *Sequence) handling.Kind
}

// View is the read-only state a policy decides on.
type View struct {
	Now         time.Duration
	Iteration   int64
	BlockSize   int
	TotalBlocks int
	FreeBlocks  int
	HostBlocks  int // host tier capacity, in blocks
	HostFree    int
	Running     int // sequences that ran in the last iteration
	RunningCtx  int // their context tokens
	Cost        handling.CostModel
	Programs    *ProgramTable
}

// Wait is the time a call has been runnable but not running: in earlier
// runnable stretches plus the current one.
func (v *View) Wait(s *Sequence) time.Duration {
	w := s.waitAccum
	if s.Runnable() {
		w += (v.Now - s.readyAt) - (s.service - s.readySvc)
	}
	return max(w, 0)
}

// Starvation is the number of iterations a runnable call has gone without
// running (LAMPS's starvation counter).
func (v *View) Starvation(s *Sequence) int64 {
	if !s.Runnable() {
		return 0
	}
	return v.Iteration - s.lastRun
}

// ToolRemaining is the predicted remaining tool time of a paused call, never
// below zero.
func (v *View) ToolRemaining(s *Sequence) float64 {
	r := s.tool.Expected - s.ToolElapsed(v.Now)
	return max(r, 0)
}

// Situation is the handling model's view of a paused call.
func (v *View) Situation(s *Sequence) handling.Situation {
	return handling.Situation{
		Context:       s.computed,
		OtherRunning:  v.RunningCtx,
		RunningTokens: v.Running,
		ToolRemaining: v.ToolRemaining(s),
	}
}
