package policy

import (
	"strings"

	"github.com/pitstop-llm/pitstop/engine"
)

// restRules are the hand-set program-level rules of the order before
// ProgramOrder "gittins-rest" (Pitstop.order's "auto" until session 14), each switched back
// on beside the index by a suffix of the order's name, for the ablation
// (docs/results-policies.md, session 11): "+cv" the CV thresholds
// (ProgramCVLow: arrival order of programs for DAG programs of about one
// size; the attained-service queues for a heavy tail went with that rule
// in "auto" in session 13),
// "+shape" the queues where DAG and chain programs are mixed (no longer in
// "auto" since session 13: there it never changed a report), "+warmup"
// arrival order (mostly DAGs) or the queues until the program model is
// ready ("+guard", the tail guard, went with the guard in session 13).
// Without them the index
// alone orders programs, from the first call on: until ten programs have
// completed it knows nothing of programs and is the call's own order.
type restRules struct {
	cv, shape, warmup bool
}

// parseProgramOrder reads Options.ProgramOrder's fixed orders: a name of
// programOrders, or "gittins-rest" followed by any of the suffixes of
// restRules.
func parseProgramOrder(name string) (programOrder, restRules, bool) {
	if o, ok := programOrders[name]; ok {
		return o, restRules{}, true
	}
	base, suffixes, more := strings.Cut(name, "+")
	if base != "gittins-rest" {
		return 0, restRules{}, false
	}
	var r restRules
	if !more {
		return byGittinsRest, r, true
	}
	for _, x := range strings.Split(suffixes, "+") {
		switch x {
		case "cv":
			r.cv = true
		case "shape":
			r.shape = true
		case "warmup":
			r.warmup = true
		default:
			return 0, restRules{}, false
		}
	}
	return byGittinsRest, r, true
}

// restOrder is the program-level order under "gittins-rest": the index,
// unless a hand-set rule switched back on (restRules) picks the order it
// picked in "auto".
func (p *Pitstop) restOrder(pop *population) programOrder {
	t, m, r := p.a.table.shapeOf(pop.class), &pop.model, p.restRules
	dags := 2*t.threaded >= t.programs
	if p.noQueues || !t.anyMulti {
		return byGittinsRest
	}
	switch {
	case r.warmup && !m.ready() && dags:
		return byArrival
	case r.warmup && !m.ready():
		return byQueue
	case r.cv && m.ready() && m.cv < p.cvLow && dags:
		return byArrival
	case r.shape && m.ready() && t.threaded > 0 && !dags:
		return byQueue
	}
	return byGittinsRest
}

// restKey is the waiting call's key under "gittins-rest": 1/G of its
// program's remaining service (restIndex) for a call whose own rest is m,
// its memory-over-time. The program will have attained its attained
// service plus the call's predicted rest of service (restOfService without
// the tool time, which is not service) when the call ends; the call is its
// program's last with the learned probability, or surely not while another
// call of the program is in the engine. Until the program model is ready
// the key is m.
func (p *Pitstop) restKey(v *engine.View, s *engine.Sequence, st *callState, m float64) float64 {
	pop := p.popOf(s, st)
	if !pop.model.ready() || st.row == nil || !(m > 0) {
		return m
	}
	q := pop.model.lastCall()
	if st.row.active > 1 {
		q = 0
	}
	rest := restOfService(v, s, st)
	if pr := s.Forecast().Predicted; pr.HasTool {
		rest -= max(pr.ToolTime, 0)
	}
	b := st.row.attained().Seconds() + max(rest, 0)
	return pop.model.rest.key(m, b, q, pop.model.scale())
}

// forcedOrder is the order Options.ProgramOrder fixes (byCall if it fixes
// none; Validate rejects unknown names).
func forcedOrder(name string) programOrder {
	o, _, _ := parseProgramOrder(name)
	return o
}

// restRulesOf is the hand-set rules Options.ProgramOrder switches back on.
func restRulesOf(name string) restRules {
	_, r, _ := parseProgramOrder(name)
	return r
}
