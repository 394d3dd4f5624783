package policy

import (
	"math"
	"slices"
	"time"
)

// The chains' warm-up of the default order (least attained service until
// ten programs completed, gittins_started.go) is a count threshold. The
// orders "gittins-censored" and "gittins-censored-call" (issue 12, session
// 15) replace it by what the live programs already tell: a program still
// running has received at least its attained service, a censored
// observation of its total. The Kaplan–Meier estimate of the distribution
// of program service over the completed programs (events) and the live
// ones (censored) is known up to the longest completed program; the mass
// beyond (the survival left after the last event, large while few programs
// completed) is unknown and never completes within any horizon the data
// inform, so the Gittins index over it falls towards 0 as a program
// approaches that unknown tail.
//
// Chains (one call of a program at a time) are then ranked:
//   - a program whose attained service is past the last completed program
//     (nothing is known of how far it has to go: G = 0) goes behind the
//     others, in the attained-service queues (least attained service first,
//     the order that assumes nothing of the distribution). Before any
//     program completed every program is there, which is the warm-up;
//   - the others, in "gittins-censored", one level behind a fresh program
//     for each halving of their index below a fresh one's (G(a) < G(0): a
//     started program has probably far to go), never ahead of it (a chain's
//     index above G(0) does not put it first: react in arrival order of
//     programs lost 30 % of its throughput, session 14), then the call's
//     memory-over-time; in "gittins-censored-call", the call's
//     memory-over-time alone (the default's steady state).
//
// "gittins-censored-median" asks the estimate one question for all chains
// instead: is the median of program service known (the survival past the
// last completed program below one half)? Until it is, the queues for every
// chain (the warm-up); after, the call's memory-over-time. Not a count of
// completed programs: while the live programs have run longer than the
// completed ones, the median stays unknown however many completed.
//
// DAG programs keep the default's question (gittins_started.go).

// censoredMode is which of the censored orders is on (0: neither).
type censoredMode uint8

const (
	censoredOff    censoredMode = iota
	censoredLevels              // "gittins-censored"
	censoredCall                // "gittins-censored-call"
	censoredMedian              // "gittins-censored-median"
)

func censoredModeOf(name string) censoredMode {
	switch name {
	case "gittins-censored":
		return censoredLevels
	case "gittins-censored-call":
		return censoredCall
	case "gittins-censored-median":
		return censoredMedian
	}
	return censoredOff
}

// kmService is the Kaplan–Meier estimate of program service: mass[k] at
// event time times[k] (ascending, distinct), tail the survival past the
// last event (the unknown mass), with suffix sums for the index.
type kmService struct {
	times, mass []float64
	sm, st      []float64 // sm[k] = Σ mass[k:], st[k] = Σ mass[k:]·times[k:]
	tail        float64
	grid, index []float64 // G tabulated at grid (ascending, from 0)
	g0          float64   // G(0)
}

// build estimates the distribution from events (completed programs'
// service) and censored (live programs' attained service), both unsorted;
// they are sorted in place. Ties: a censored observation at an event's time
// is at risk at that time (it has received at least that much).
func (k *kmService) build(events, censored []float64) {
	slices.Sort(events)
	slices.Sort(censored)
	k.times, k.mass = k.times[:0], k.mass[:0]
	atRisk := float64(len(events) + len(censored))
	surv := 1.0
	i, j := 0, 0
	for i < len(events) {
		t := events[i]
		for j < len(censored) && censored[j] < t {
			atRisk-- // censored before t: no longer at risk
			j++
		}
		d := 0
		for i < len(events) && events[i] == t {
			d++
			i++
		}
		p := surv * float64(d) / atRisk
		k.times, k.mass = append(k.times, t), append(k.mass, p)
		surv -= p
		atRisk -= float64(d)
	}
	k.tail = max(surv, 0)
	n := len(k.times)
	k.sm = slices.Grow(k.sm[:0], n+1)[:n+1]
	k.st = slices.Grow(k.st[:0], n+1)[:n+1]
	k.sm[n], k.st[n] = 0, 0
	for x := n - 1; x >= 0; x-- {
		k.sm[x] = k.sm[x+1] + k.mass[x]
		k.st[x] = k.st[x+1] + k.mass[x]*k.times[x]
	}
	k.grid, k.index, k.g0 = k.grid[:0], k.index[:0], 0
	if n == 0 {
		return
	}
	for _, a := range gittinsGrid(k.times) {
		k.grid, k.index = append(k.grid, a), append(k.index, k.at(a))
	}
	k.g0 = k.index[0]
}

// at is the Gittins index G(a) over the estimate (gittinsOver): the best
// stopping point is one of the events past a; the unknown mass does not
// complete within it, so it adds work and no completion. 0 past the last
// event.
func (k *kmService) at(a float64) float64 {
	return gittinsOver(k.times, k.sm, k.st, k.tail, a)
}

// level is a started program's place behind a fresh one: 0 while its
// index is at least a fresh one's, one more per halving below it (at most
// 14); informed is false past the last event (or before any), where the
// estimate says nothing.
func (k *kmService) level(a float64) (lvl int, informed bool) {
	if len(k.times) == 0 || a >= k.times[len(k.times)-1] {
		return 0, false
	}
	i, found := slices.BinarySearch(k.grid, a)
	if !found {
		i--
	}
	x := k.index[max(i, 0)]
	if x >= k.g0 {
		return 0, true
	}
	if x <= 0 {
		return 14, true
	}
	return min(int(math.Log2(k.g0/x)), 14), true
}

// medianKnown reports whether the estimate places the median of program
// service: less than half the mass lies past the last completed program.
func (k *kmService) medianKnown() bool {
	return len(k.times) > 0 && k.tail < 0.5
}

// censoredClass is the class offset of a chain's call under the censored
// orders (see the top of the file): the program's level, or 15 plus its
// attained-service queue past what the estimate informs.
func (p *Pitstop) censoredClass(pop *population, attained time.Duration) float64 {
	if p.censored == censoredMedian {
		if pop.model.km.medianKnown() {
			return 0
		}
		return float64(p.a.queues.index(attained))
	}
	lvl, informed := pop.model.km.level(attained.Seconds())
	if !informed {
		return 15 + float64(p.a.queues.index(attained))
	}
	if p.censored == censoredCall {
		return 0
	}
	return float64(lvl)
}

// rebuildCensored re-estimates the distribution from the completed
// programs' samples and the attained service of the class's live rows.
func (m *programModel) rebuildCensored(t *processTable, class string) {
	m.kmEvents = append(m.kmEvents[:0], m.samples...)
	m.kmLive = m.kmLive[:0]
	for _, r := range t.rows {
		if r.class == class {
			m.kmLive = append(m.kmLive, r.attained().Seconds())
		}
	}
	m.km.build(m.kmEvents, m.kmLive)
}
