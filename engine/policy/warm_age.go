package policy

import (
	"time"

	"github.com/pitstop-llm/pitstop/engine"
)

// ageOf is the age the aging counts for a waiting call (agedKey): the time
// since its arrival, or with PitstopTail "aging+warm", for a call whose
// context is still in the prefix cache (the next call of a chain, or a call
// back from a discard, before its blocks are evicted), the time since its
// program's first arrival when that is longer.
//
// Why: the aging ranks by age so that no call waits far past arrival
// order's tail, but the next call of a chain arrives with age 0 behind a
// backlog that has aged; past capacity it then waits until every older
// call has gone, its context is evicted meanwhile, and it is prefilled
// again in full (react at 12 programs/s: 9 % of the prompt tokens saved by
// the prefix cache against 82 % without the aging, docs/results-policies.md,
// session 10: react past capacity). A warm call is cheap only while it
// waits little, and its program has waited all along: counting the
// program's age lets it go while warm, and once its blocks are evicted it
// ranks by its own age again, as any cold call.
func (p *Pitstop) ageOf(v *engine.View, s *engine.Sequence) time.Duration {
	a := v.Now - s.Arrival()
	if !p.tail.warm {
		return a
	}
	st := stateOf(s)
	if st.row == nil || st.scoreFor.cached <= 0 || st.scoreFor.state != s.State() {
		return a
	}
	return max(a, v.Now-st.row.first)
}
