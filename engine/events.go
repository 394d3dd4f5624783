package engine

import (
	"time"

	"github.com/pitstop-llm/pitstop/handling"
)

// EventKind names a state change the engine reports.
type EventKind uint8

const (
	EvArrived   EventKind = iota // submitted
	EvToken                      // a token was generated (Token)
	EvPaused                     // stopped at a tool call; Handling says what happens to its KV
	EvHandled                    // a paused call's handling changed while it waited (Handling)
	EvResumed                    // tool result appended, runnable again
	EvPreempted                  // evicted while running (Handling: swap or discard)
	EvFinished                   // done, or cancelled (Seq.Cancelled) or failed (Err)
	EvIteration                  // one engine iteration ran (Iter)
)

// LossCause is why a call's KV left the device without a copy.
type LossCause uint8

const (
	LostAtTool    LossCause = iota // discarded at its tool call, or evicted while paused
	LostPreempted                  // preempted while running, recomputed
	LostFromHost                   // parked on the host, gave way to a newcomer (HostRanker)
	NumLossCauses
)

// Event is one state change. Seq is nil for EvIteration.
type Event struct {
	Kind     EventKind
	Time     time.Duration
	Seq      *Sequence
	Token    int32
	Handling handling.Kind
	// Context is, at EvPaused, the call's computed context when the policy
	// chose Handling: a discard has freed it by the time the event is seen.
	Context int
	Err     error
	Iter    *IterationStats
}

// IterationStats summarises one iteration.
type IterationStats struct {
	Duration      time.Duration
	Seqs          int
	PrefillTokens int
	DecodeTokens  int
	// DecodeContext is Σ context tokens the decodes read (Start+1 each): a
	// decode reads its whole context's KV, so what it costs grows with it.
	DecodeContext   int
	UsedBlocks      int
	TotalBlocks     int
	HostUsed        int
	SwapOutBlocks   int
	SwapInBlocks    int
	SwapOutBytes    int64
	SwapInBytes     int64
	RecomputeTokens int
	// RecomputeBy splits RecomputeTokens by why the call's KV was dropped
	// (LossCause): discarded at or during a tool call, preempted while
	// running, or its host copy given way to another call's.
	RecomputeBy   [NumLossCauses]int
	Preemptions   int
	HostEvictions int // parked calls whose host KV gave way to a newcomer (HostRanker)
	Rescued       int // discarded contexts swapped out before the prefix cache evicted them (rescue.go)
	// RefusedSwaps and RefusedSwapBlocks count the swap-outs that found the
	// host tier full and discarded the KV instead, by where they were asked.
	RefusedSwaps      [NumSwapSites]int
	RefusedSwapBlocks [NumSwapSites]int
	HostRunnable      int // host blocks held by runnable calls waiting for a swap-in
	Waiting           int // runnable calls left out of the batch
	Paused            int
}

// Observer receives every event on the engine's goroutine; it must not block
// and must not keep the *Event (the engine reuses it). The policy observes
// first (default: it ignores them), then the observers given to New.
type Observer interface{ Observe(e *Event) }
