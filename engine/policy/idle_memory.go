package policy

import (
	"fmt"

	"github.com/pitstop-llm/pitstop/engine"
	"github.com/pitstop-llm/pitstop/handling"
)

// idleMemory prices device memory by what it is worth now
// (Options.PitstopHandling "idle"). InferCept's wastes charge a preserved
// call for the memory it holds over its tool (T·C) as if another call could
// have used it; at light load none could: nothing waits for blocks, and the
// free pool covers what the running calls take next. There a preserve
// wastes nothing, while a discard costs its recompute when the freed blocks
// are evicted from the prefix cache before the tool returns (short
// contexts, which are not rescued by a swap: engine/rescue.go), and a swap
// costs its copies. So while memory is idle a paused call is preserved, and
// the choice is made again at every iteration of its tool (the engine asks
// Handle for each call preserved on the device); from the first iteration
// in which memory is short, the call's handling is the default's
// (least expected waste, Pitstop.Handle), priced as before. Memory that
// becomes short before that re-check is taken back by the engine's eviction
// of paused calls (a swap while the host has room, PausedVictim), as for
// any preserved call.
//
// Memory is short in an iteration when a call had to wait for it or make
// room: a waiting or swapped call held back for blocks (HoldBack), an
// admission refused by the host-room or peak rule (Admit), a paused call
// evicted for room (PausedVictim) or a running call preempted (Evict). It
// is idle when it was short in neither this iteration nor the last and the
// free blocks above the watermark cover one iteration's growth of the
// batch: a full token budget of prefill plus a block for each running call.
// No threshold: blocks against blocks.
//
// "idle-lost" preserves a call at idle memory only when a discard is
// predicted to lose its context: when the prefix cache more likely than
// not evicts the freed blocks before the tool returns (Pitstop.evictionRisk
// at least 1/2, the tool's median outlasting the free blocks' survival).
// Otherwise the discard keeps the blocks cached at no expected cost and
// leaves them to whoever needs them, and the call comes back through the
// rank instead of ahead of it as a preserved call does (the engine resumes
// a call whose KV is on the device as running).
type idleMemory struct {
	on, lost bool
	short    int64 // the last iteration in which memory was short, -1 never
}

// newIdleMemory reads Options.PitstopHandling.
func newIdleMemory(mode string) (idleMemory, error) {
	switch mode {
	case "", "waste":
		return idleMemory{short: -1}, nil
	case "idle":
		return idleMemory{on: true, short: -1}, nil
	case "idle-lost":
		return idleMemory{on: true, lost: true, short: -1}, nil
	}
	return idleMemory{}, fmt.Errorf("unknown pitstop handling %q (valid: waste, idle, idle-lost)", mode)
}

// wanted records that memory was short in the view's iteration.
func (m *idleMemory) wanted(v *engine.View) {
	m.short = max(m.short, v.Iteration)
}

// idle reports whether memory is worth nothing now (see idleMemory).
func (m *idleMemory) idle(v *engine.View) bool {
	if !m.on || (m.short >= 0 && m.short >= v.Iteration-1) {
		return false
	}
	bs := max(v.BlockSize, 1)
	growth := (max(v.Cost.TokenBudget, 0)+bs-1)/bs + v.Running
	return v.FreeNow()-v.Watermark() >= growth
}

// HoldBack records that a waiting or swapped call found no room, and holds
// back the calls ranked after it as the engine's default does.
func (p *Pitstop) HoldBack(v *engine.View, s *engine.Sequence) bool {
	p.memory.wanted(v)
	return p.BasePolicy.HoldBack(v, s)
}

// idleHandle is Handle's choice while memory is idle: preserve, with the
// default choice left unmade so that the next iteration asks again.
func (p *Pitstop) idleHandle(v *engine.View, s *engine.Sequence) (handling.Kind, bool) {
	if !p.memory.idle(v) {
		return 0, false
	}
	st := stateOf(s)
	if st.kindSet && st.kind != handling.Preserve {
		return 0, false // chosen while memory was short, and still on the device: a swap on its way out
	}
	if p.memory.lost && p.evictionRisk(v, s) < 0.5 {
		return 0, false // a discard keeps the context cached: the default's choice
	}
	return handling.Preserve, true
}
