package policy

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/pitstop-llm/pitstop/engine"
)

// retainHint is pitstop's say in which cached contexts the prefix cache
// gives up first (Options.PitstopEvict, engine.Retainer):
//
//   - lru: no hint; the engine's free queue stays LRU.
//   - program (the default since session 14): Belady's rule, evict what is least likely to be reused, with
//     probabilities learned online from the programs, family-agnostic. A
//     program's context, freed when its last call in the engine finishes
//     and not yet matched again t seconds later, comes back with
//     probability qS / (qS + 1 − q), where q is that a program with its k
//     calls makes another (programModel.nextCall: Kaplan–Meier over the
//     completed and live programs, with a uniform prior) and S that the gap
//     to its next call exceeds t (the gaps seen so far between a finish
//     that left a program idle and its next call, among programs paced
//     alike: paceOf the mean of their earlier gaps, so that a program paced
//     by a user's think time is not read from the tools' seconds). The
//     context the LRU order evicts next has been free for the cache's
//     horizon H (free blocks over the eviction rate) and comes back with
//     the same formula over every program and gap (headReuse). A context
//     less likely to come back than that head is, by Belady's rule, to be
//     evicted before it: its blocks move to the engine's cold segment
//     (engine.RetainLow at the finish, engine.RetainWatch and Cold after),
//     which goes before every other free block. Nothing is set by hand; the
//     watch is read once a second of the clock. Measured first with an even
//     odds threshold (one half) in place of the head's probability: it
//     demoted live react chains waiting on a long tool, whose blocks then
//     went before dead ones at the head (docs/results-policies.md, session
//     14).
type retainHint struct {
	byProgram bool
	watch     map[string]watched  // programs idle with their context watched
	gaps      map[string]*gapStat // per program in the engine's table: its gaps so far
	all       gapSamples          // every class's gaps, seconds (headReuse); by pace, per class in population.pace
	head      float64             // the LRU head's probability of reuse, at the last Cold; 0: unknown
	lastCold  time.Duration
}

// watched is an idle program whose context is watched.
type watched struct {
	since time.Duration // its last call's finish
	pop   *population   // its class's statistics (population.go)
	q     float64       // probability it makes another call, given its calls
	scale float64       // mean of its gaps so far, seconds (paceOf); 0: none yet
}

// gapStat is a program's gaps between a finish that left it idle and its
// next arrival.
type gapStat struct {
	sum, n    float64
	idle      bool
	idleSince time.Duration
}

// mean is the program's mean gap so far, seconds (paceOf's input); 0
// before its first gap.
func (g *gapStat) mean() float64 {
	if g == nil || g.n == 0 {
		return 0
	}
	return g.sum / g.n
}

// gapSamples is a bounded sample of gaps with its sorted copy.
type gapSamples struct {
	ring   []float64
	next   int
	sorted []float64
	fresh  int
}

const gapSampleCap = 4096

func (g *gapSamples) add(x float64) {
	g.ring, g.next = pushRing(g.ring, g.next, x, gapSampleCap) // program_model.go
	g.fresh++
}

// survival is the share of the samples above x; ok is false with fewer
// than minN samples.
func (g *gapSamples) survival(x float64, minN int) (float64, bool) {
	if len(g.ring) < minN {
		return 0, false
	}
	if g.fresh > 0 {
		g.sorted = append(g.sorted[:0], g.ring...)
		slices.Sort(g.sorted)
		g.fresh = 0
	}
	return float64(len(g.sorted)-firstAbove(g.sorted, x)) / float64(len(g.sorted)), true
}

// paceOf is the class of a program's pace, the mean of its gaps so far in
// seconds: its binary order of magnitude, or noPace before its first gap.
// A program's next gap is read from the gaps of programs paced alike.
func paceOf(mean float64) int {
	if mean <= 0 {
		return noPace
	}
	return int(math.Floor(math.Log2(mean)))
}

const noPace = math.MinInt

// newRetainHint reads Options.PitstopEvict.
func newRetainHint(mode string) (retainHint, error) {
	switch mode {
	case "lru":
		return retainHint{}, nil
	case "", "program":
		return retainHint{byProgram: true, watch: map[string]watched{}, gaps: map[string]*gapStat{}}, nil
	}
	return retainHint{}, fmt.Errorf("unknown pitstop eviction hint %q (valid: lru, program)", mode)
}

// badEvict is newRetainHint's error on o.PitstopEvict.
func badEvict(o Options) error { _, err := newRetainHint(o.PitstopEvict); return err }

// Retain is the hint for a finished call's blocks.
func (p *Pitstop) Retain(v *engine.View, s *engine.Sequence) engine.Retention {
	h := &p.retain
	if !h.byProgram {
		return engine.RetainLRU
	}
	prog := s.ProgramStats()
	if prog == nil || prog.Active > 1 {
		return engine.RetainLRU // another call of the program is in the engine
	}
	pop := p.popOf(s, stateOf(s))
	q, ok := pop.model.nextCall(prog.Calls)
	if !ok {
		return engine.RetainLRU
	}
	if q < h.head {
		return engine.RetainLow
	}
	h.watch[prog.ID] = watched{since: v.Now, pop: pop, q: q, scale: h.gaps[prog.ID].mean()}
	return engine.RetainWatch
}

// Cold names the watched programs whose context is now less likely to come
// back than the LRU head's, and those idle for longer than the program
// model's idle time, which it counts as completed (so that nothing is
// watched for good where the cache never evicts).
func (p *Pitstop) Cold(v *engine.View) []string {
	h := &p.retain
	if !h.byProgram || len(h.watch) == 0 || v.Now-h.lastCold < time.Second {
		return nil
	}
	h.lastCold = v.Now
	h.head = p.headReuse(v)
	for id, g := range h.gaps {
		if g.idle && v.Now-g.idleSince > p.pops.cold.model.idle {
			delete(h.gaps, id) // completed, as programModel.sweep counts it
		}
	}
	type goneCold struct {
		id    string
		since time.Duration
	}
	var gone []goneCold
	for id, w := range h.watch {
		if v.Now-w.since > p.pops.cold.model.idle || h.head > 0 && p.comesBack(w, v.Now) < h.head {
			gone = append(gone, goneCold{id, w.since})
			delete(h.watch, id)
		}
	}
	// The longest idle first, and never the map's order: it sets the
	// eviction order within the cold segment.
	slices.SortFunc(gone, func(a, b goneCold) int {
		if a.since != b.since {
			return cmp.Compare(a.since, b.since)
		}
		return strings.Compare(a.id, b.id)
	})
	cold := make([]string, len(gone))
	for i, g := range gone {
		cold[i] = g.id
	}
	return cold
}

// comesBack is the probability that a watched program calls again, now
// that its context has been free since w.since: qS / (qS + 1 − q); 1 while
// its pace has too few gaps to tell. The gaps are its class's.
func (p *Pitstop) comesBack(w watched, now time.Duration) float64 {
	g := w.pop.pace[paceOf(w.scale)]
	if g == nil {
		return 1
	}
	surv, ok := g.survival((now - w.since).Seconds(), w.pop.model.minN)
	if !ok {
		return 1
	}
	return w.q * surv / (w.q*surv + 1 - w.q)
}

// headReuse is the probability that the context the LRU order evicts next
// is matched again: it has been free for the cache's horizon H (free blocks
// over the eviction rate, View.CacheEvictions as readmitCache measures it),
// so it comes back with q̄S̄(H) / (q̄S̄(H) + 1 − q̄), q̄ the share of calls
// that are not their program's last and S̄ the share of all gaps longer
// than H, both over every class: the head's context may be any class's.
// 0 while nothing is evicted or too little is known.
func (p *Pitstop) headReuse(v *engine.View) float64 {
	rate := p.recache.evicted.perSecond
	if rate <= 0 || v.FreeBlocks <= 0 {
		return 0
	}
	minN := p.pops.cold.model.minN
	s, ok := p.retain.all.survival(float64(v.FreeBlocks)/rate, minN)
	programs, calls := p.pops.pooledCalls()
	if !ok || programs < float64(minN) {
		return 0
	}
	q := 0.0 // programModel.lastCall over every class
	if calls > 0 {
		q = 1 - programs/calls
	}
	if q*s+1-q <= 0 {
		return 0
	}
	return q * s / (q*s + 1 - q)
}

// observe learns the gaps between a program's calls, by pace in its
// class's population.
func (h *retainHint) observe(e *engine.Event, pops *populations) {
	if !h.byProgram {
		return
	}
	switch e.Kind {
	case engine.EvArrived:
		id := e.Seq.Program()
		delete(h.watch, id)
		pop := pops.of(e.Seq.Class())
		if prog := e.Seq.ProgramStats(); prog != nil {
			pop.model.arrived(prog.Calls)
		}
		g := h.gaps[id]
		if g == nil {
			h.gaps[id] = &gapStat{}
			return
		}
		if g.idle {
			gap := (e.Time - g.idleSince).Seconds()
			pace := paceOf(g.mean())
			if pop.pace[pace] == nil {
				pop.pace[pace] = &gapSamples{}
			}
			pop.pace[pace].add(gap)
			h.all.add(gap)
			g.sum += gap
			g.n++
			g.idle = false
		}
	case engine.EvFinished:
		if prog := e.Seq.ProgramStats(); prog != nil && prog.Active == 0 {
			if g := h.gaps[prog.ID]; g != nil {
				g.idle, g.idleSince = true, e.Time
			}
		}
	}
}
