package policy

// Refresh asks whether some class's program order moved since the last
// full re-rank. Asking every class at every iteration costs time in the
// number of classes (a serve with many tenants: 1,000 classes added about
// 16 µs to the 10,000-call ordering step, BenchmarkOrdering10k), so each
// class's order is kept as last derived and derived again only when one
// of its inputs may have changed:
//   - its program model (programModel.started, ready, cv), which changes
//     only when a sweep rebuilds it (populations.sweep, programModel.refit);
//   - its table shape (tableShape), which changes at a program's first call
//     or a program's second call (processTable.shape reports the class);
//   - aloneInEngine, which for a class is "every call in the engine is
//     mine": it changes for the class whose call count crosses zero, and
//     for every class when the number of busy classes passes through one;
//   - its creation (populations.of).
// Everything else startedOrder and restOrder read is fixed by the options.
// The counts of classes whose order differs from the last re-rank's and
// whose order drifts make the answer O(1); a stale class costs one
// derivation. TestClassOrdersMatchSlow checks the answer against asking
// every class, at every iteration of a run with many classes.

// classOrder is a class's cached program order.
type classOrder struct {
	order programOrder
	known bool // order derived at least once
	stale bool // in orderCache.list
}

// orderCache is the set of classes whose order must be derived again, and
// the counts over the classes whose order is known.
type orderCache struct {
	list     []*population
	all      bool // every class stale
	moved    int  // classes whose order differs from their lastOrder
	drifting int  // classes whose order drifts with their programs' service
}

// mark makes the class's order stale.
func (c *orderCache) mark(pop *population) {
	if c.all || pop.orders.stale {
		return
	}
	pop.orders.stale = true
	c.list = append(c.list, pop)
}

// busyChanged books a class whose calls crossed zero (d +1: its first call
// in the engine; −1: its last finished).
func (ps *populations) busyChanged(pop *population, d int) {
	before := ps.busy
	ps.busy += d
	if min(before, ps.busy) <= 1 {
		// 0↔1 or 1↔2 busy classes: which class is alone, if any, changed,
		// and with it every class's aloneInEngine.
		ps.stale.all = true
		return
	}
	ps.stale.mark(pop) // ≥2 both sides: no class is alone either way
}

// shapeChanged marks the population of a class whose table shape changed.
func (ps *populations) shapeChanged(class string) {
	if ps.pooled {
		class = ""
	}
	if pop := ps.byClass[class]; pop != nil {
		ps.stale.mark(pop)
	}
}

// drifts reports whether a class in order o is re-ranked as its programs'
// service grows.
func drifts(o programOrder) bool {
	return o == byQueue || o == byRemaining || o == byGittins || o == byGittinsRest || o == byCensored
}

// orderNow is the class's program order for ranking a call: the cached
// order while none of its inputs changed since it was derived (every
// change above marks it stale; Refresh derives the stale ones), else
// derived afresh. The same order as orderOf, without its per-call shape
// lookup by class name and tests (BenchmarkOrdering10k's pitstop-classes
// cases); TestClassOrdersMatchSlow checks it at every Priority.
func (p *Pitstop) orderNow(pop *population) programOrder {
	if o := pop.orders; o.known && !o.stale && !p.pops.stale.all {
		return o.order
	}
	return p.orderOf(pop)
}

// derive derives the class's order again and updates the counts.
func (p *Pitstop) derive(pop *population) {
	c := &p.pops.stale
	if o := &pop.orders; o.known {
		if o.order != pop.lastOrder {
			c.moved--
		}
		if drifts(o.order) {
			c.drifting--
		}
	}
	ord := p.orderOf(pop)
	pop.orders = classOrder{order: ord, known: true}
	if ord != pop.lastOrder {
		c.moved++
	}
	if drifts(ord) {
		c.drifting++
	}
}

// ordersMoved reports whether some class's program order differs from the
// one of the last full re-rank, and whether some class's order drifts
// with its programs' service (its calls' classes move between re-ranks).
// Before any class is seen, the order of a class never seen.
func (p *Pitstop) ordersMoved() (moved, drifting bool) {
	ps := &p.pops
	if len(ps.list) == 0 {
		ord := p.orderOf(&ps.cold)
		return ord != ps.cold.lastOrder, drifts(ord)
	}
	if ps.stale.all {
		for _, pop := range ps.list {
			p.derive(pop)
			pop.orders.stale = false
		}
		ps.stale.all = false
	} else {
		for _, pop := range ps.stale.list {
			p.derive(pop)
			pop.orders.stale = false
		}
	}
	ps.stale.list = ps.stale.list[:0]
	return ps.stale.moved > 0, ps.stale.drifting > 0
}

// keepOrders records every class's order at a full re-rank (called just
// after ordersMoved, so every class's cached order is current).
func (p *Pitstop) keepOrders() {
	ps := &p.pops
	if len(ps.list) == 0 {
		ps.cold.lastOrder = p.orderOf(&ps.cold)
		return
	}
	if ps.stale.moved == 0 {
		return
	}
	for _, pop := range ps.list {
		pop.lastOrder = pop.orders.order
	}
	ps.stale.moved = 0
}
