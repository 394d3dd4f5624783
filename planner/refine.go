package planner

import (
	"slices"
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
// budget caps the greedy completions priced over the whole search (0: no
// cap); when it is spent the remaining stages are the greedy's.
// reach is how many models one move may change (1–3 here: with three
// models, 3 is every stage from the boundary).
func Refine(a *App, s *Simulator, gpus int, o Objective, reach, budget int) (*Schedule, error) {
	r := &refiner{a: a, s: s, gpus: gpus, o: o, budget: budget, reach: max(reach, 1)}
	sc, err := play(a, "samullm", gpus, r.step)
	if sc != nil {
		sc.Method = "samullm+refine"
	}
	return sc, err
}

type refiner struct {
	a      *App
	s      *Simulator
	gpus   int
	o      Objective
	budget int
	spent  int // greedy completions priced
	reach  int // models a move may change at once
}

func (r *refiner) step(w *world) (*stageEval, error) {
	best, err := greedyStage(r.a, r.s, w, r.gpus, r.o)
	if err != nil || best == nil || r.budget > 0 && r.spent >= r.budget {
		return best, err
	}
	bestT, err := r.complete(w, best)
	if err != nil {
		return nil, err
	}
	for improved := true; improved; {
		improved = false
		for _, c := range r.moves(w, best.pairs) {
			if r.budget > 0 && r.spent >= r.budget {
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

// complete is when the application ends if stage e runs from w and the
// greedy plans the rest (a stage after which nothing can run never wins).
func (r *refiner) complete(w *world, e *stageEval) (time.Duration, error) {
	r.spent++
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

// moves lists the stages up to reach model changes away from pairs, the
// fewest changes first: each changed model added, dropped or given another
// plan, within the budget, non-empty, and every model's inputs finished or
// in the stage.
func (r *refiner) moves(w *world, pairs []Pair) [][]Pair {
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
	out := make([][][]Pair, r.reach+1) // by number of changes
	emit := func(sel []Plan, changes int) {
		var c []Pair
		for mi, p := range sel {
			if p.GPUs() > 0 {
				c = append(c, Pair{mi, p})
			}
		}
		if len(c) > 0 && gpusOf(c) <= r.gpus && closed(r.a, w, modelsOf(c)) {
			out[changes] = append(out[changes], c)
		}
	}
	sel := make([]Plan, n)
	var rec func(mi, changes int)
	rec = func(mi, changes int) {
		if mi == n {
			if changes > 0 {
				emit(sel, changes)
			}
			return
		}
		sel[mi] = cur[mi]
		rec(mi+1, changes)
		if changes == r.reach {
			return
		}
		for _, p := range opts[mi] {
			if p != cur[mi] {
				sel[mi] = p
				rec(mi+1, changes+1)
			}
		}
		sel[mi] = cur[mi]
	}
	rec(0, 0)
	return slices.Concat(out...)
}
