package policy

import (
	"fmt"
	"math"
	"strconv"

	"github.com/pitstop-llm/pitstop/engine"
)

// programLead is how arrival order of programs (pitstop's order for tree
// searches and other DAG programs of one size) treats the bursts of
// parallel calls such programs release: how far ahead of a younger
// program's calls an older program's may go (Options.PitstopProgramLead),
// and where a program's first call waits (Options.PitstopAdmission). The
// defaults since session 9 are admission "started" with a lead of 0; "off"
// for both is arrival order of programs as before.
//
// In arrival order of programs every call of an older program goes ahead of
// every call of a younger one. Tree searches (mcts) release their calls in
// bursts of parallel branches, so an old program's next burst lands ahead
// of the calls already waiting for a younger program, which wait through
// burst after burst: at mcts @0.4 (seed 1), where calls wait for a slot
// (the 256-sequence cap; the token budget and the KV have room), the first
// call of a program waited 26 s on average (p99 139 s) and the calls of
// bursts had a TTFT p99 of 24 s, against 4.5 and 4.9 s in arrival order of
// calls (docs/results-policies.md, session 9).
//
// The lead L: a waiting call ranks by max(its program's arrival, its own
// arrival − L), so no call is passed by one that arrived more than L after
// it. L = 0 is arrival order of calls (a burst's siblings, which arrive
// together, still share one rank and go longest first); L = ∞ (off)
// arrival order of programs. "auto" takes L from the engine: arrival
// order's p99 end-to-end time, learned online by the conservation law
// (fcfsReference); until it is known programs stay in arrival order.
//
// Admission "started": see arrivalClass.
type programLead struct {
	on    bool
	auto  bool
	lead  float64 // seconds, when not auto
	label string
	// started is Options.PitstopAdmission "started": a program's first call
	// ranks after every call of the started programs (see arrivalClass).
	started bool
}

// newProgramLead reads Options.PitstopProgramLead: "" or "off" (the
// default), "auto", or a lead in seconds (>= 0).
func newProgramLead(s string) (programLead, error) {
	switch s {
	case "", "off":
		return programLead{}, nil
	case "auto":
		return programLead{on: true, auto: true, label: s}, nil
	}
	l, err := strconv.ParseFloat(s, 64)
	if err != nil || l < 0 || math.IsNaN(l) || math.IsInf(l, 0) {
		return programLead{}, fmt.Errorf("pitstop program lead %q: want off, auto or a number of seconds >= 0", s)
	}
	return programLead{on: true, lead: l, label: s}, nil
}

// arrival is the time by which arrival order of programs ranks waiting call
// s whose program arrived at program (seconds): later of that and the call's
// own arrival less the lead. Off, or with "auto" before the reference is
// known, it is the program's arrival.
func (l programLead) arrival(s *engine.Sequence, program float64, ref *fcfsReference) float64 {
	if !l.on {
		return program
	}
	lead := l.lead
	if l.auto {
		t, ok := ref.bound(0)
		if !ok || !(t > 0) {
			return program
		}
		lead = t
	}
	return max(program, s.Arrival().Seconds()-lead)
}

// arrivalClass is the class offset of waiting call s in arrival order of
// programs: its rank time (arrival) · 1e-6, plus 1 for the first call of a
// program with admission "started". That admission control is what
// arrival order of programs does for the mean (a program that has not
// started holds one waiting call, where a started one releases bursts):
// programs still start in arrival order, each once no call of a started
// program waits, while the started programs' calls share the engine by
// the lead (0: arrival order of calls). At mcts @0.4 (seed 1) it kept the
// mean below arrival order of programs' and the p99 below arrival order of
// calls' (docs/results-policies.md, session 9). A program's first call is
// the one that arrived with it (its arrival is the program's first).
func (l programLead) arrivalClass(s *engine.Sequence, st *callState, program float64, ref *fcfsReference) float64 {
	c := l.arrival(s, program, ref) * 1e-6
	if l.started && st.row != nil && s.Arrival() == st.row.first {
		c++
	}
	return c
}

// newAdmission reads Options.PitstopAdmission: "" or "off" (the default:
// a program's first call ranks as its program's other calls) or "started".
func newAdmission(s string) (bool, error) {
	switch s {
	case "", "off":
		return false, nil
	case "started":
		return true, nil
	}
	return false, fmt.Errorf("unknown pitstop admission %q (valid: off, started)", s)
}

// badLead is what is wrong with Options.PitstopProgramLead and
// PitstopAdmission, if anything.
func badLead(o Options) error {
	if _, err := newProgramLead(o.PitstopProgramLead); err != nil {
		return err
	}
	_, err := newAdmission(o.PitstopAdmission)
	return err
}
