package policy

import (
	"slices"
	"sort"
)

// edfSchedule is the deadline lane's overload test (PitstopTail
// "aging+feasible"): the earliest-deadline-first schedule of the calls the
// lane promoted at the last full re-rank, by which a candidate is promoted
// only if it can still end by its deadline (with toP99, "aging+feasible-p99":
// or by its arrival plus the p99 the engine realizes now, if later: bound)
// behind the promoted calls whose deadlines come before its own. EDF is
// optimal while the deadline set is feasible and collapses under overload
// (the domino effect: every call served late makes the next one late);
// overload-aware EDF schedulers (Buttazzo's RED, Haritsa's AED) keep EDF
// for the feasible set and serve the rest by value. Here the rest is left to pitstop's rank, the aging
// memory-over-time order, which is the value order for the mean and the
// throughput. Measured cause (docs/results-policies.md, session 10): at
// infercept-multi @5.2, 87% of aging+deadline's promotions were of calls
// whose laxity was already negative, and 95% of the promoted calls ended
// past their deadline anyway: the device time spent on them bought no
// deadline and cost the mean and the throughput.
//
// The previous re-rank's set stands for the current one: a re-rank visits
// the waiting calls in no deadline order, and the set moves little between
// re-ranks (a call stays promoted until it runs). Nothing is set by hand:
// the device times are the calls' predicted rests, the slots the shadow's.
type edfSchedule struct {
	next []edfCall // the calls promoted in the current full re-rank
	last []edfCall // those of the last one, by deadline, dev as a running sum
	// toP99 (PitstopTail "aging+feasible-p99") tests a call against the
	// later of its deadline and its arrival plus realized, the p99 of the
	// end-to-end times of the calls that finished lately under this policy.
	toP99 bool
	// floor (PitstopTail "aging+feasible-floor") takes the highest p99
	// realized so far in place of the current one (bound).
	floor    bool
	realized p99Window
}

// edfCall is a promoted call: its deadline and its device time (seconds).
type edfCall struct{ deadline, dev float64 }

// add records a call promoted in the current full re-rank.
func (e *edfSchedule) add(deadline, dev float64) {
	e.next = append(e.next, edfCall{deadline, dev})
}

// roll closes a full re-rank: its promoted calls, by deadline with their
// device times summed, are the schedule the next candidates are tested in.
func (e *edfSchedule) roll() {
	e.last, e.next = e.next, e.last[:0]
	slices.SortFunc(e.last, func(a, b edfCall) int {
		switch {
		case a.deadline < b.deadline:
			return -1
		case a.deadline > b.deadline:
			return 1
		}
		return 0
	})
	sum := 0.0
	for i := range e.last {
		sum += e.last[i].dev
		e.last[i].dev = sum
	}
}

// ahead is the device time of the promoted calls whose deadlines come
// strictly before deadline (a call promoted again does not count itself).
func (e *edfSchedule) ahead(deadline float64) float64 {
	i := sort.Search(len(e.last), func(i int) bool { return e.last[i].deadline >= deadline })
	if i == 0 {
		return 0
	}
	return e.last[i-1].dev
}

// feasible reports whether a call with this deadline and laxity (deadline
// less now less its own rest) still ends by its deadline behind the EDF
// calls ahead of it, spread over servers slots.
func (e *edfSchedule) feasible(deadline, laxity float64, servers int) bool {
	return laxity >= e.ahead(deadline)/float64(max(servers, 1))
}

// bound is the time by which a promoted call must end to count: its
// deadline, or, with toP99 and when later, its arrival plus the p99 the
// engine realizes now. A call that ends past the p99 of the end-to-end times counts as one
// call in the tail however late it is, and one that ends within it does
// not count whatever its deadline: the lane's deadlines estimate arrival
// order's p99 from below (the shadow leaves out swaps and recompute), so a
// call past its deadline may still be kept out of the tail.
//
// With floor the realized p99 is the highest the window has had so far, so
// that a tail the lane shortens cannot lower the bound (the bars reward no
// p99 below arrival order's; the deadline already holds the two online
// estimates of it, the shadow's p99 and T: due). Measured (session 10, "a
// floor at arrival order's p99"): the realized p99 rises through a run near
// capacity and the floor barely binds, so it changes little.
func (e *edfSchedule) bound(arrival, deadline float64) float64 {
	if !e.toP99 {
		return deadline
	}
	p, ok := e.realized.p99()
	if e.floor {
		p, ok = e.realized.peak99()
	}
	if ok {
		return max(deadline, arrival+p)
	}
	return deadline
}
