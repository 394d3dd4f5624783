package policy

import (
	"fmt"
	"math"
	"strings"

	"github.com/pitstop-llm/pitstop/engine"
)

// tailRules is which of pitstop's tail rules are on (Options.PitstopTail).
type tailRules struct {
	aging   bool // generalized cμ aging against the arrival-order reference (agedKey)
	age     bool // experimental: age since arrival in place of the wait
	power   int  // experimental: exponent of the marginal cost (0 or 1: linear; -1: exponential)
	started bool // started calls keep their place ahead of fresh ones (startedFirst)
}

// parseTailRules reads Options.PitstopTail: "guard" (none of the rules
// below: the tail guard alone, the behaviour before them), or a
// "+"-separated list of "aging" and "started"; "" is the default.
func parseTailRules(s string) (tailRules, error) {
	var r tailRules
	if s == "" || s == "guard" {
		return r, nil
	}
	for _, f := range strings.Split(s, "+") {
		switch f {
		case "aging":
			r.aging = true
		case "aging2":
			r.aging, r.power = true, 2
		case "aging3":
			r.aging, r.power = true, 3
		case "age":
			r.age = true
		case "agingexp":
			r.aging, r.power = true, -1
		case "started":
			r.started = true
		default:
			return r, fmt.Errorf("unknown pitstop tail rule %q in %q (valid: guard, or aging, started joined by +)", f, s)
		}
	}
	return r, nil
}

// agedKey is the generalized cμ rule (Van Mieghem 1995) for a delay cost
// that is linear (the mean) plus quadratic past the tail of arrival order:
// c(w) = w + w²/(2T), whose marginal cost 1 + w/T divides the call's cost to
// the engine (its memory-over-time, the key). T is arrival order's p99
// end-to-end time, learned online (fcfsReference: the conservation-law wait
// plus the p99 of the calls' own times), so no time scale is set by hand: a
// call that has waited T is served as if it were half its size, one that has
// waited 3T a quarter. Until the reference is known, the key stands.
func (p *Pitstop) agedKey(v *engine.View, s *engine.Sequence, key float64) float64 {
	t, ok := p.fcfs.bound(p.fcfsSlack)
	if !ok || t <= 0 {
		return key
	}
	x := v.Wait(s).Seconds() / t
	if p.tail.age {
		x = (v.Now - s.Arrival()).Seconds() / t
	}
	switch p.tail.power {
	case 2:
		return key / ((1 + x) * (1 + x))
	case 3:
		return key / ((1 + x) * (1 + x) * (1 + x))
	case -1:
		return key * math.Exp(-x)
	}
	return key / (1 + x)
}

// startedFirst reports whether a waiting call has started (it produced a
// token, then was preempted or came back from its tool without its KV on
// the device): such a call goes ahead of the calls that have not started,
// so the calls arriving after it cannot push it back indefinitely (past
// capacity they never stop arriving).
func startedFirst(s *engine.Sequence) bool {
	return s.Generated() > 0 && s.State() != engine.Running
}
