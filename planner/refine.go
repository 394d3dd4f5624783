package planner

import (
	"iter"
	"time"
)

// Refine is the greedy search with a local-improvement pass at every stage
// boundary. The greedy step ranks models by rate per GPU, and on a few
// models with loads as long as their work the model with the lowest rate
// can be the one that decides when the application ends; no per-stage
// measure sees that. So each stage is judged by what the whole application
// takes: the greedy's stage, then the rest of the application planned by
// the greedy (Algorithm 1) from its end. Starting from the greedy's stage,
// a move changes up to reach models' entries at once (add one, drop one,
// give it any other plan: one model gives GPUs up while another takes
// them, or one stage's model is swapped for another, which reorders
// stages); the first move that ends the application sooner is taken, until
// no move helps. Every stage is priced by the same memoised simulator.
//
// The greedy's own stage is the starting point and its completion is the
// greedy's schedule, so the result never ends later than Search's.
// reach is how many models one move may change (1–3 here: with three
// models, 3 is every stage from the boundary). effort caps the simulation
// the refinement may add, counted in requests replayed on the engine: at
// most effort times what the greedy alone replays, or refineFloor
// requests, whichever is more (0: no cap). The greedy is run first, and a
// completion that revisits states it priced costs nothing, so the cap
// counts only new simulation. When it is spent, the remaining stages are
// the greedy's. Small applications are thus refined to the end, while on
// large ones the refinement costs about effort times the greedy.
func Refine(a *App, s *Simulator, gpus int, o Objective, reach int, effort float64) (*Schedule, error) {
	t0 := time.Now()
	r := &refiner{a: a, s: s, gpus: gpus, o: o, reach: max(reach, 1), limit: -1}
	if effort > 0 {
		before := s.replayed()
		if _, err := Search(a, s, gpus, o); err != nil {
			return nil, err
		}
		greedy := s.replayed() - before
		r.limit = s.replayed() + max(int(effort*float64(greedy)), refineFloor)
	}
	sc, err := play(a, "samullm+refine", gpus, r.step)
	if sc != nil {
		sc.Search = time.Since(t0)
	}
	return sc, err
}

type refiner struct {
	a     *App
	s     *Simulator
	gpus  int
	o     Objective
	reach int // models a move may change at once
	limit int // the simulator's replayed-request count at which refining stops; -1: none
}

func (r *refiner) step(w *world) (*stageEval, error) {
	best, err := greedyStage(r.a, r.s, w, r.gpus, r.o)
	if err != nil || best == nil || r.spent() {
		return best, err
	}
	bestT, err := r.complete(w, best)
	if err != nil {
		return nil, err
	}
	for improved := true; improved; {
		improved = false
		for c := range r.moves(w, best.pairs) {
			if r.spent() {
				return best, nil
			}
			e, err := w.evaluate(r.a, r.s, c)
			if err != nil {
				return nil, err
			}
			t, err := r.complete(w, e)
			if err != nil {
				return nil, err
			}
			if t < bestT {
				best, bestT, improved = e, t, true
				break
			}
		}
	}
	return best, nil
}

// refineFloor is the refinement's least allowance, in requests replayed:
// enough for the small cases of TestSearchAgainstExhaustive (at most
// 7,700 each, uncapped) to be refined to the end.
const refineFloor = 20_000

func (r *refiner) spent() bool { return r.limit >= 0 && r.s.replayed() >= r.limit }

// complete is when the application ends if stage e runs from w and the
// greedy plans the rest (a stage after which nothing can run never wins).
func (r *refiner) complete(w *world, e *stageEval) (time.Duration, error) {
	nw, _ := w.commit(r.a, e)
	for !nw.done() {
		g, err := greedyStage(r.a, r.s, nw, r.gpus, r.o)
		if err != nil {
			return 0, err
		}
		if g == nil {
			return time.Duration(1<<62 - 1), nil
		}
		nw, _ = nw.commit(r.a, g)
	}
	return nw.now, nil
}

// moves yields the stages up to reach model changes away from pairs, the
// fewest changes first: each changed model added, dropped or given another
// plan, within the budget, non-empty, and every model's inputs finished or
// in the stage. They are made as the caller asks (a climb stops at its
// first improvement).
func (r *refiner) moves(w *world, pairs []Pair) iter.Seq[[]Pair] {
	n := len(r.a.Models)
	cur := make([]Plan, n) // zero Plan: not in the stage
	for _, p := range pairs {
		cur[p.Model] = p.Plan
	}
	opts := make([][]Plan, n)
	for mi, m := range r.a.Models {
		if !w.finished(mi) {
			opts[mi] = append([]Plan{{}}, m.plans(r.gpus)...)
		}
	}
	return func(yield func([]Pair) bool) {
		sel := make([]Plan, n)
		// rec fills sel from model mi on with exactly want changes; false
		// once the caller has stopped.
		var rec func(mi, want int) bool
		rec = func(mi, want int) bool {
			if want > n-mi {
				return true
			}
			if mi == n {
				var c []Pair
				for m, p := range sel {
					if p.GPUs() > 0 {
						c = append(c, Pair{m, p})
					}
				}
				if len(c) == 0 || gpusOf(c) > r.gpus || !closed(r.a, w, modelsOf(c)) {
					return true
				}
				return yield(c)
			}
			sel[mi] = cur[mi]
			if !rec(mi+1, want) {
				return false
			}
			if want > 0 {
				for _, p := range opts[mi] {
					if p != cur[mi] {
						sel[mi] = p
						if !rec(mi+1, want-1) {
							return false
						}
					}
				}
				sel[mi] = cur[mi]
			}
			return true
		}
		for k := 1; k <= r.reach; k++ {
			if !rec(0, k) {
				return
			}
		}
	}
}
