package engine

import (
	"time"

	"github.com/pitstop-llm/pitstop/handling"
)

// Policy is a scheduling policy. The engine owns the mechanism (batches,
// blocks, swap-out, swap-in, discard, preemption, the host tier) and asks the
// policy every decision: which call runs first, what happens to a paused
// call's KV, which call gives way when memory runs short and how. Policies
// live in engine/policy, one per file; they see the engine only through View
// and Sequence's read methods. The engine/policy package doc lists every hook
// with its default.
//
// Priority and Handle have no default. Every other hook has one in
// BasePolicy, the engine's behaviour before it asked: a policy embeds
// BasePolicy and overrides what it decides differently. A wrapper embeds the
// Policy it wraps and overrides only what it changes; every other hook,
// present or added later, reaches the wrapped policy untouched.
type Policy interface {
	// Priority ranks a runnable call (lower first). The engine caches it and
	// asks again when the call changes: it arrives, runs an iteration, is
	// preempted or resumes. Priorities that drift with time alone ask for a
	// full re-rank through Refresh.
	Priority(v *View, s *Sequence) Priority
	// Handle chooses preserve, swap or discard for a call paused on a tool:
	// once at the tool call and again each iteration while its KV is still
	// on the device (so a preserved call can be swapped or discarded later).
	Handle(v *View, s *Sequence) handling.Kind

	Traiter
	Refresher
	Shaper
	Admission
	Victims
	HostRanker
	Retainer
	Observer
	Queuer
}

// Traits are a policy's switches for the engine's mechanism.
type Traits struct {
	PrefixCache bool // keep freed blocks' hashes and reuse prefixes (vLLM's automatic prefix caching)
	Preemptive  bool // may evict lower-ranked running calls to admit higher-ranked waiting ones
}

// WithPrefixCache returns p with the engine's prefix cache turned on and
// nothing else changed: it overrides Traits only, and every other hook is
// p's, by embedding. The runtime runs every policy so (a program's next call
// finds its KV again), and bench gives baselines pitstop's engine features
// with it.
func WithPrefixCache(p Policy) Policy { return prefixCached{p} }

type prefixCached struct{ Policy }

func (p prefixCached) Traits() Traits {
	t := p.Policy.Traits()
	t.PrefixCache = true
	return t
}

// Traiter gives the policy's traits; the engine reads them once, in New.
// Default: no prefix cache, not preemptive.
type Traiter interface{ Traits() Traits }

// Refresher is asked once per iteration, after the calls that changed are
// ranked: when Refresh reports true, every runnable call is ranked again
// (aging, starvation counters, program-level service). Default: false.
type Refresher interface{ Refresh(v *View) bool }

// Shaper shapes an iteration's batch beyond ranking it: SOLA's per-iteration
// caps (n_i calls, k_i tokens) and its peak-memory admission, vLLM's
// prefill-first scheduler. Default: the engine fills Config.MaxBatchedTokens
// and Config.MaxSeqs in rank order and every call is admitted.
//
// The engine asks Shape once per iteration, after ranking and before building
// the batch, then Admit for each runnable call it is about to add, in rank
// order. A refused call is skipped, not a stop: it keeps its state and its KV
// (a waiting call stays waiting holding nothing, a swapped one stays on the
// host, a running one stays on the device without running this iteration),
// and lower-ranked calls are still considered. When the shaped batch ends up
// empty although Admit refused a call, the engine runs the one call it would
// have run first without the shaping, so that a policy cannot idle the device
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
	// RefusalHolds says that Admit's refusal of a waiting or swapped call
	// refuses, with no side effect, every waiting and swapped call ranked
	// after it in this iteration (pitstop's host room): the engine stops
	// asking, as after a HoldBack, and its walk of the run queue ends at the
	// last running call.
	RefusalHolds bool
}

// Admission decides what a waiting or swapped call that does not fit (no
// blocks even after evictions, or no swap budget) does to the calls ranked
// after it.
type Admission interface {
	// HoldBack reports whether s holds back the waiting and swapped calls
	// ranked after it for the rest of this iteration (running calls still
	// run). Default: true, so that no lower-ranked call overtakes a call
	// that waits for memory (vLLM's admission); false lets smaller calls
	// behind it fill the room that is left.
	HoldBack(v *View, s *Sequence) bool
}

// Victims decides who gives way when a call needs device blocks that are not
// free: first paused calls' KV, then, for a running call or under a
// preemptive policy, running calls ranked below it.
type Victims interface {
	// PausedVictim picks the paused call whose device KV is evicted next;
	// paused holds the candidates (paused on a tool with blocks on the
	// device; valid only during the call). nil evicts none of them.
	// Default: the one with the most predicted tool time remaining.
	PausedVictim(v *View, paused []*Sequence) *Sequence
	// EvictPaused is how the victim's KV leaves the device: Swap (to the
	// host tier, discarded instead when the tier has no room) or anything
	// else for Discard. Default: Swap.
	EvictPaused(v *View, s *Sequence) handling.Kind
	// PreemptVictim picks the running call that is preempted to make room
	// for s; running holds the candidates (running calls ranked below s
	// that have not run in this iteration's batch; valid only during the
	// call). nil preempts none: a waiting s is not admitted, a running s is
	// preempted itself. Default: the lowest-ranked candidate.
	PreemptVictim(v *View, s *Sequence, running []*Sequence) *Sequence
	// Evict is how a preempted running call's KV leaves the device: Swap
	// (discarded instead when the host tier has no room) or anything else
	// for Discard (recomputed later). Default: Discard, as vLLM recomputes.
	Evict(v *View, s *Sequence) handling.Kind
}

// HostRanker orders the KV on the host tier for eviction. When a swap-out
// finds the tier without room, the parked calls (paused on a tool with their
// KV on the host) that rank strictly after the newcomer give way, latest
// first, until it fits: their KV is discarded and recomputed when their tool
// returns. When even all of them would not make room, none gives way and the
// newcomer's KV is discarded instead.
type HostRanker interface {
	// HostRank is how soon s needs its KV back, lower sooner. Default: 0
	// for every call, so nothing gives way and a newcomer that finds the
	// tier full is discarded. View.ResumesIn as the rank is Belady's rule
	// with predicted tool durations (engine/policy.ResumeOrder). The engine
	// orders the parked calls once per iteration (again only when they
	// change), so a rank that drifts within an iteration is read once.
	HostRank(v *View, s *Sequence) float64
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

	eng *Engine // for HostRoom; nil in a View made by hand
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

// ResumesIn is the predicted seconds until s needs its KV again: the rest of
// its tool for a paused call, 0 for a runnable one.
func (v *View) ResumesIn(s *Sequence) float64 {
	if s.state != Paused {
		return 0
	}
	return v.ToolRemaining(s)
}

// HostRoom is the host blocks s's KV could take now: the free ones
// (HostFree) and those of parked calls the policy's HostRank puts after s.
func (v *View) HostRoom(s *Sequence) int {
	if v.eng == nil {
		return v.HostFree
	}
	return v.HostFree + v.eng.displaceable(s)
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
