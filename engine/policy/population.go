package policy

import (
	"time"

	"github.com/pitstop-llm/pitstop/engine"
)

// population is what pitstop learns from one class of programs
// (engine.Request.Class; the runtime's tenant, one class in bench): the
// distribution of its programs' service and calls (programModel: the
// Gittins index behind the program order, the residual, the chance a
// program calls again), the gaps between its programs' calls by pace (the
// reuse probability behind the cache's retention hint, retain_hint.go) and
// the program order last applied to it. A tenant's programs are therefore
// ordered, and its cached contexts kept, by its own programs alone: another
// tenant flooding long programs moves neither its Gittins question nor its
// reuse probabilities.
//
// What stays pooled is what describes the device and its one queue, which
// every class shares: arrival order's p99 (fcfsReference) and the tail
// controllers built on it, the deadline shadow, the cache's eviction rate
// and the LRU head's reuse probability (headReuse: the head's context is
// anyone's), free memory and the host tier. docs/results-policies.md
// (session 16, tenant16) lists every learned statistic and where it lives.
//
// A class starts from the cold prior, as a fresh engine does (programs
// alike until its own complete; no reuse probability until minN of its
// programs complete), not from the pooled statistics: a prior copied from
// the others would be the leak this removes, and the cold prior is the one
// measured as the default's warm-up (gittins_started.go).
type population struct {
	class     string
	model     programModel
	pace      map[int]*gapSamples // gaps, seconds, by paceOf the program's earlier gaps
	lastOrder programOrder        // the program order of the last full re-rank
	calls     int                 // its calls in the engine (arrived, not finished)
	orders    classOrder          // its program order as last derived (class_orders.go)
	lastCall  time.Duration       // when a call of it last arrived or finished
}

// populations holds one population per class seen, in order of first
// sight so that every loop over them is deterministic.
type populations struct {
	byClass   map[string]*population
	list      []*population
	idle      float64 // programModel's idle time, seconds
	censored  bool
	cold      population // a class never seen: the order before any call, and each new class's last order
	lastSweep time.Duration
	pooled    bool // every class learned together (PitstopClasses "pooled")
	// shared: arrival order of programs only while no other class has a
	// call in the engine (PitstopClasses "class-shared", aloneInEngine);
	// alone: the chains' warm-up queues too ("class-alone").
	shared, alone bool
	calls         int // every class's calls in the engine
	// busy is the number of classes with a call in the engine; stale
	// the cache of their program orders (class_orders.go).
	busy  int
	stale orderCache
	// dropAfter and gone: populations dropped after idling (class_lifetime.go).
	dropAfter time.Duration
	gone      droppedCalls
}

func newPopulations(idle float64, censored, pooled bool, firstOrder programOrder) populations {
	ps := populations{byClass: map[string]*population{}, idle: idle, censored: censored, pooled: pooled}
	ps.cold = ps.fresh("")
	ps.cold.lastOrder = firstOrder
	return ps
}

// fresh is a population at the cold prior.
func (ps *populations) fresh(class string) population {
	m := newProgramModel(ps.idle)
	m.censored = ps.censored
	return population{class: class, model: m, pace: map[int]*gapSamples{}}
}

// of is the class's population, made at the cold prior at its first sight
// (the one population when pooled).
func (ps *populations) of(class string) *population {
	if ps.pooled {
		class = ""
	}
	if pop := ps.byClass[class]; pop != nil {
		return pop
	}
	pop := ps.fresh(class)
	pop.lastOrder = ps.cold.lastOrder
	ps.byClass[class] = &pop
	ps.list = append(ps.list, &pop)
	ps.stale.mark(&pop)
	return &pop
}

// popOf is the call's population, kept in its state after the first look.
func (p *Pitstop) popOf(s *engine.Sequence, st *callState) *population {
	if st.pop == nil {
		st.pop = p.pops.of(s.Class())
	}
	return st.pop
}

// sweep turns programs idle for longer than the model's idle time into
// samples of their class's model and drops their rows, at most once per
// idle/8, then lets each model rebuild.
func (ps *populations) sweep(t *processTable, now time.Duration) {
	idle := ps.cold.model.idle
	if now-ps.lastSweep < idle/8 {
		return
	}
	ps.lastSweep = now
	for id, r := range t.rows {
		if r.active <= 0 && now-r.lastFinish > idle {
			ps.of(r.class).model.complete(r)
			delete(t.rows, id)
		}
	}
	for _, pop := range ps.list {
		if pop.model.refit(t, pop.class) {
			ps.stale.mark(pop) // its order reads the model
		}
	}
	ps.dropIdle(t, now)
}

// pooledCalls is the completed programs and their calls over every class
// (headReuse's q̄: the LRU head's context may be any class's).
func (ps *populations) pooledCalls() (programs, calls float64) {
	programs, calls = ps.gone.programs, ps.gone.calls
	for _, pop := range ps.list {
		programs += pop.model.programs
		calls += pop.model.calls
	}
	return programs, calls
}

// aloneInEngine reports whether no class but pop's has a call in the
// engine. Arrival order of programs puts a class's calls after every
// waiting call of the classes in the call's order (its priority class is
// above theirs); with PitstopClasses "class-shared" a class keeps that
// order only while it has the engine to itself, and otherwise goes by the
// call's memory-over-time like the others.
func (ps *populations) aloneInEngine(pop *population) bool {
	return ps.calls == pop.calls
}

// A class's chains go by the attained-service queues until ten of its own
// programs complete (the chains' warm-up, gittins_started.go): its calls
// past the first queue then rank behind every waiting call of the classes
// in the call's order, as arrival order does. A tenant new to serve, or
// back after its statistics were dropped (class_lifetime.go), beside
// tenants already warm waits behind all of them until ten of its programs
// complete: on mixed as three tenants at 0.7, react back after a pause
// waited 4x longer for 580 calls (docs/results-policies.md, session 17,
// tenant17). With PitstopClasses "class-alone" a class keeps every order
// of its own, arrival order and the warm-up queues, only while it has the
// engine to itself (aloneInEngine), and otherwise goes by the call's
// memory-over-time like the others, as a warm class does. One class in
// the engine (bench) is always alone: the same order as "class-shared".

// sharedModes are populations.shared and alone for PitstopClasses name.
func sharedModes(name string) (shared, alone bool) {
	switch name {
	case "class-shared":
		return true, false
	case "class-alone":
		return true, true
	}
	return false, false
}

// warmingUp reports whether the class's chains go by the warm-up queues:
// before its model is ready, and with "class-alone" only while alone.
func (ps *populations) warmingUp(pop *population) bool {
	return !pop.model.ready() && (!ps.alone || ps.aloneInEngine(pop))
}

// count books a call's arrival and finish in its class and in the total.
func (ps *populations) count(e *engine.Event, pop *population) {
	switch e.Kind {
	case engine.EvArrived, engine.EvFinished:
		pop.lastCall = e.Time
	}
	switch e.Kind {
	case engine.EvArrived:
		pop.calls++
		ps.calls++
		if pop.calls == 1 {
			ps.busyChanged(pop, +1)
		}
	case engine.EvFinished:
		pop.calls--
		ps.calls--
		if pop.calls == 0 {
			ps.busyChanged(pop, -1)
		}
	}
}
