package policy

// The default program order (Options.ProgramOrder "auto", also named
// "gittins-started" since session 14) asks the learned index one question
// in place of the last two hand rules before it (arrival order of DAG
// programs below a CV of 0.7, and the warm-up orders until ten programs
// completed): may a fresh program go ahead of a started one? Under the
// Gittins rule a program that has attained a seconds of critical-path
// service goes ahead of a fresh one exactly when G(a) ≥ G(0) (gittinsTable,
// over the same critical-path samples, so attained service is measured in
// the unit the distribution is learned in). When that holds at every
// attained service the samples inform, the index never admits a fresh
// program ahead of a started one, which is arrival order of programs
// (new-better-than-used programs: tree searches of about one size); where
// the index falls below G(0) (a heavy tail: a started program has probably
// far to go) programs are not ordered by age and the call's
// memory-over-time decides.
//
// Why one question and not the index as a rank: the empirical index is not
// monotone in attained service (it jumps just below each cluster of
// samples), so ranking programs by it, as gittins-rest does, orders a third
// of the pairs of mcts's programs against their attained service and lost
// mcts @0.4's p99 bar (docs/results-policies.md, session 14). The question
// is robust to those upward jumps.
//
// The index orders programs, the bars are on calls: arrival order of
// programs applies only where most programs are DAGs (the shape test kept
// from auto; since session 18 over the programs that have begun, a held
// program having shown no shape: shape_shown.go), whose calls wait on each
// other's branches. Chains (one call
// of a program at a time) stay in the call's order whatever the index says:
// react (CV 0.63, its index never below G(0)) in arrival order of programs
// lost 30 % of its throughput at 12 programs/s (session 14).
//
// Before any program has completed the distribution is a prior: programs
// alike (one size), whose index rises with attained service, so arrival
// order of DAG programs until the samples say otherwise (the old warm-up
// order for DAGs). Chains, until ten programs have completed (the model is
// not ready), go by the attained-service queues (least attained service
// first, the order that assumes nothing of the distribution), then by the
// call's order. That warm-up was kept by measurement, not derived: without
// it ("gittins-started-call") chat's sustained rate fell one step on two of
// three seeds (0.525 to 0.517 programs/s, below lamps's 0.521; the p99 at
// the knife's edge, 85.4 against the 84.6 s target), while react @12's mean
// gained 1-2.7 % (docs/results-policies.md, session 14, lead).
//
// "Where the samples inform" is where at least programModel.minN (10)
// completed programs survive past a: the index of a tail that fewer
// samples reach is not trusted (past the last sample it is 0 by
// construction), the same count after which the model is trusted at all.

// startedFirst reports whether the index puts every started program the
// samples inform ahead of a fresh one: G(a) ≥ G(0) at every tabulated a
// with at least minN samples above it. True with no samples (the prior).
func (m *programModel) startedFirst() bool {
	g := &m.gittins
	if len(g.at) == 0 {
		return true
	}
	g0 := g.index[0] // the grid starts at 0 (gittinsGrid)
	for i, a := range g.at {
		if len(m.sorted)-firstAbove(m.sorted, a) < m.minN {
			break // at ascending, so fewer survive from here on
		}
		if g.index[i] < g0 {
			return false
		}
	}
	return true
}

// startedOrder is the default program-level order (Pitstop.order): the
// call's own order while every program is a single call (as auto), else,
// for mostly-DAG programs, arrival order of programs while the index never
// lets a fresh program pass a started one (startedFirst, the prior until
// programs complete), for chains the attained-service queues until the
// model is ready (unless "gittins-started-call"), else the call's
// memory-over-time.
func (p *Pitstop) startedOrder(pop *population) programOrder {
	t := p.a.table.shapeOf(pop.class)
	if p.noQueues || !t.anyMulti {
		return byCall
	}
	dags := t.dags(p.shapeTest)
	switch {
	case dags && pop.model.started && (!p.pops.shared || p.pops.aloneInEngine(pop)):
		return byArrival
	case !dags && p.censored != censoredOff:
		return byCensored // gittins_censored.go
	case !dags && !p.chainsCall && p.pops.warmingUp(pop):
		return byQueue // chains' warm-up: least attained service first (population.go)
	}
	return byCall
}
