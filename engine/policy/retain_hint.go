package policy

import (
	"fmt"

	"github.com/pitstop-llm/pitstop/engine"
)

// retainHint is pitstop's say in which cached contexts the prefix cache
// gives up first (Options.PitstopEvict, engine.Retainer):
//
//   - lru (the default): no hint; the engine's free queue stays LRU.
//   - program: when a call finishes and its program has no other call in
//     the engine, its context is worth keeping in proportion to the
//     probability that the program makes another call, learned online from
//     the programs that completed (programModel.nextCall: of the completed
//     programs that made at least k calls, the share that made k+1). When
//     that probability is below one half (the program more likely over than
//     not), the blocks go to the free queue's cold segment and are evicted
//     before every context likelier to come back: Belady's rule with two
//     classes, family-agnostic, nothing set by hand but the even odds. Until
//     enough programs completed (the model's minN), or for a program longer
//     than every completed one, no hint.
type retainHint struct{ byProgram bool }

// newRetainHint reads Options.PitstopEvict.
func newRetainHint(mode string) (retainHint, error) {
	switch mode {
	case "", "lru":
		return retainHint{}, nil
	case "program":
		return retainHint{byProgram: true}, nil
	}
	return retainHint{}, fmt.Errorf("unknown pitstop eviction hint %q (valid: lru, program)", mode)
}

// badEvict is newRetainHint's error on o.PitstopEvict.
func badEvict(o Options) error { _, err := newRetainHint(o.PitstopEvict); return err }

// Retain is the hint for a finished call's blocks.
func (p *Pitstop) Retain(_ *engine.View, s *engine.Sequence) engine.Retention {
	if !p.retain.byProgram {
		return engine.RetainLRU
	}
	prog := s.ProgramStats()
	if prog == nil || prog.Active > 1 {
		return engine.RetainLRU // another call of the program is in the engine
	}
	if q, ok := p.model.nextCall(prog.Calls); ok && q < 0.5 {
		return engine.RetainLow
	}
	return engine.RetainLRU
}
