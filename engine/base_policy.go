package engine

import "github.com/pitstop-llm/pitstop/handling"

// BasePolicy supplies every Policy hook but Priority and Handle with the
// engine's default decision; policies embed it and override what they decide
// differently. Each method's doc says what it decides.
type BasePolicy struct{}

// Traits: no prefix cache, not preemptive.
func (BasePolicy) Traits() Traits { return Traits{} }

// Refresh: priorities do not drift with time alone.
func (BasePolicy) Refresh(*View) bool { return false }

// Shape: the engine's own limits.
func (BasePolicy) Shape(*View) BatchLimits { return BatchLimits{} }

// Admit: every call.
func (BasePolicy) Admit(*View, *Sequence, int) bool { return true }

// HoldBack: a call that waits for memory holds back the calls ranked after it.
func (BasePolicy) HoldBack(*View, *Sequence) bool { return true }

// PausedVictim: the paused call with the most predicted tool time remaining
// (the first of them on a tie).
func (BasePolicy) PausedVictim(v *View, paused []*Sequence) *Sequence {
	var best *Sequence
	bestLeft := -1.0
	for _, p := range paused {
		if left := v.ToolRemaining(p); left > bestLeft {
			best, bestLeft = p, left
		}
	}
	return best
}

// EvictPaused: swap, discarded instead when the host tier has no room.
func (BasePolicy) EvictPaused(*View, *Sequence) handling.Kind { return handling.Swap }

// PreemptVictim: the lowest-ranked candidate.
func (BasePolicy) PreemptVictim(_ *View, _ *Sequence, running []*Sequence) *Sequence {
	var worst *Sequence
	for _, r := range running {
		if worst == nil || worst.RanksBefore(r) {
			worst = r
		}
	}
	return worst
}

// Evict: discard; the call is recomputed (vLLM).
func (BasePolicy) Evict(*View, *Sequence) handling.Kind { return handling.Discard }

// HostRank: all alike, so nothing on the host tier gives way to a newcomer.
func (BasePolicy) HostRank(*View, *Sequence) float64 { return 0 }

// Retain: RetainLRU, the free queue in LRU order.
func (BasePolicy) Retain(*View, *Sequence) Retention { return RetainLRU }

// Cold: none.
func (BasePolicy) Cold(*View) []string { return nil }

// Observe: nothing.
func (BasePolicy) Observe(*Event) {}

// Queue: every call in queue 0.
func (BasePolicy) Queue(*Sequence) int { return 0 }
