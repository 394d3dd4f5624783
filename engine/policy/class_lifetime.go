package policy

import (
	"slices"
	"time"
)

// A serve that sees many tenants over time keeps one population per tenant
// (population.go), each with up to programSamples service samples, their
// sorted copy, suffix sums and index tables, and the gaps by pace: about
// 206 kB once its model is full (TestPopulationSize measures it). Kept for
// good, they grow with every tenant ever seen. With PitstopClassIdle set, a
// population is dropped at a sweep once
//   - its class has no call in the engine (nothing waits to be ranked by
//     it, and its order can move no re-rank),
//   - no program of it is left in the process table (every program has
//     completed into its model: ProgramIdle, 120 s by default, without a
//     call; nothing of the class is still being learned), and
//   - its last call arrived or finished PitstopClassIdle seconds ago.
// What the drop costs is the class's learned model: a later call of it
// starts from the cold prior, as a class never seen does (the prior every
// class starts from, measured as the default's warm-up). The pooled counts
// of its completed programs and calls stay (droppedCalls): headReuse reads
// them over every class, and the LRU head's context may still be its.
// The option's default keeps every population (0): bench's runs have one
// class. serve sets it to its program TTL (runtime.policyOptions), after
// which the tenant's programs are gone from its tables too. A tenant's
// warm-up after its statistics were dropped was measured in session 17
// (cmd/pitstop/class_return_experiment_test.go): under "class-shared" the
// chains' warm-up queues put it behind the warm tenants (react on mixed @0.7
// waited 4-6x longer for about 600 calls); "class-alone" does not.

// droppedCalls is what stays of dropped populations: their completed
// programs and those programs' calls (pooledCalls).
type droppedCalls struct {
	programs, calls float64
}

// dropIdle drops the populations idle past dropAfter (see above), and
// their classes' table shapes.
func (ps *populations) dropIdle(t *processTable, now time.Duration) {
	if ps.dropAfter <= 0 || ps.pooled {
		return
	}
	var idle []*population
	for _, pop := range ps.list {
		if pop.calls == 0 && now-pop.lastCall > ps.dropAfter {
			idle = append(idle, pop)
		}
	}
	if len(idle) == 0 {
		return
	}
	live := map[string]bool{}
	for _, r := range t.rows {
		live[r.class] = true
	}
	gone := map[*population]bool{}
	for _, pop := range idle {
		if !live[pop.class] {
			gone[pop] = true
		}
	}
	if len(gone) == 0 {
		return
	}
	for pop := range gone {
		ps.forget(pop)
		delete(ps.byClass, pop.class)
		delete(t.shapes, pop.class)
	}
	ps.list = slices.DeleteFunc(ps.list, func(pop *population) bool { return gone[pop] })
	ps.stale.list = slices.DeleteFunc(ps.stale.list, func(pop *population) bool { return gone[pop] })
}

// forget takes a dropped population out of the order cache's counts and
// keeps its pooled counts.
func (ps *populations) forget(pop *population) {
	if o := pop.orders; o.known {
		if o.order != pop.lastOrder {
			ps.stale.moved--
		}
		if drifts(o.order) {
			ps.stale.drifting--
		}
	}
	ps.gone.programs += pop.model.programs
	ps.gone.calls += pop.model.calls
}

// Classes are the classes whose program statistics pitstop keeps, in order
// of first sight (none while pooled: the one population has no class). Read
// only; on the engine goroutine, as every hook. The runtime's tests read it
// to see serve drop an idle tenant's population.
func (p *Pitstop) Classes() []string {
	if p.pops.pooled {
		return nil
	}
	classes := make([]string, len(p.pops.list))
	for i, pop := range p.pops.list {
		classes[i] = pop.class
	}
	return classes
}

// ClassOrder names the program order the class's calls are ranked in now
// (Options.ProgramOrder's names: "arrival", "queues" for the chains'
// warm-up, "call", ...); "" for a class whose statistics are not kept.
// Read only, on the engine goroutine; for measurements of a class's
// warm-up (a tenant back after its statistics were dropped).
func (p *Pitstop) ClassOrder(class string) string {
	if p.pops.pooled {
		class = ""
	}
	pop := p.pops.byClass[class]
	if pop == nil {
		return ""
	}
	switch ord := p.orderOf(pop); ord {
	case byGittinsRest:
		return "gittins-rest"
	case byCensored:
		return "gittins-censored"
	default:
		for name, o := range programOrders {
			if o == ord {
				return name
			}
		}
	}
	return ""
}
