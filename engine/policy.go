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

// Shaper is implemented by policies that shape an iteration's batch beyond
// ranking it: SOLA's per-iteration caps (n_i calls, k_i tokens) and its
// peak-memory admission, vLLM's prefill-first scheduler. Without it the engine
// fills Config.MaxBatchedTokens and Config.MaxSeqs in rank order, and nothing
// of this is asked.
//
// The engine asks Shape once per iteration, after ranking and before building
// the batch, then Admit for each runnable call it is about to add, in rank
// order. A refused call is skipped, not a stop: it keeps its state and its KV
// (a waiting call stays waiting holding nothing, a swapped one stays on the
// host, a running one stays on the device without running this iteration),
// and lower-ranked calls are still considered. When the shaped batch ends up
// empty although Admit refused a call, the engine runs the one call it would
// have run first without the Shaper, so that a Shaper cannot idle the device
// while calls are runnable.
type Shaper interface {
	Shape(v *View) BatchLimits
	// Admit reports whether s may join this iteration's batch. It is asked
	// before the engine takes any block, host slot or prefix hit for s;
	// budget is the tokens left in this iteration's budget (s would get
	// min(s.Remaining(), budget), fewer after prefix-cache hits). true does
	// not guarantee that s runs: it may not fit in memory.
	Admit(v *View, s *Sequence, budget int) bool
}

// BatchLimits caps one iteration's batch. A zero field keeps the engine's
// limit; the engine's limits are never exceeded.
type BatchLimits struct {
	Tokens int // tokens in the batch (SOLA's k_i): prefill chunks and decodes together
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
