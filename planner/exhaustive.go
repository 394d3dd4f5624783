package planner

import (
	"fmt"
	"time"
)

// Exhaustive finds the best schedule over the same space as Search (stages
// that end at their first model's finish, each a set of ready models with
// plans within the budget) by trying every stage at every step. The space
// grows as (plans per model)^models per stage, so it is for checking the
// search on small cases only: it gives up after limit stage evaluations.
func Exhaustive(a *App, s *Simulator, gpus, limit int) (*Schedule, error) {
	if err := check(a, gpus); err != nil {
		return nil, err
	}
	t0 := time.Now()
	x := &exhaustive{a: a, s: s, gpus: gpus, limit: limit}
	total, stages, err := x.best(newWorld(a))
	if err != nil {
		return nil, err
	}
	return &Schedule{Method: "exhaustive", GPUs: gpus, Stages: stages, Total: total, Search: time.Since(t0)}, nil
}

type exhaustive struct {
	a           *App
	s           *Simulator
	gpus, limit int
	evals       int
}

func (x *exhaustive) best(w *world) (time.Duration, []Stage, error) {
	if w.done() {
		return w.now, nil, nil
	}
	bestT := time.Duration(-1)
	var bestStages []Stage
	var rec func(mi int, pairs []Pair) error
	rec = func(mi int, pairs []Pair) error {
		if mi == len(x.a.Models) {
			if len(pairs) == 0 || !closed(x.a, w, modelsOf(pairs)) {
				return nil
			}
			if x.evals++; x.evals > x.limit {
				return fmt.Errorf("exhaustive search: more than %d stages to price: too large a case", x.limit)
			}
			e, err := w.evaluate(x.a, x.s, pairs)
			if err != nil {
				return err
			}
			nw, st := w.commit(x.a, e)
			t, rest, err := x.best(nw)
			if err != nil {
				return err
			}
			if bestT < 0 || t < bestT {
				bestT, bestStages = t, append([]Stage{st}, rest...)
			}
			return nil
		}
		if err := rec(mi+1, pairs); err != nil {
			return err
		}
		if w.finished(mi) {
			return nil
		}
		for _, p := range x.a.Models[mi].plans(x.gpus) {
			if gpusOf(pairs)+p.GPUs() <= x.gpus {
				if err := rec(mi+1, append(pairs[:len(pairs):len(pairs)], Pair{mi, p})); err != nil {
					return err
				}
			}
		}
		return nil
	}
	if err := rec(0, nil); err != nil {
		return 0, nil, err
	}
	if bestT < 0 {
		return 0, nil, fmt.Errorf("exhaustive search: no stage can run at %.1f s", w.now.Seconds())
	}
	return bestT, bestStages, nil
}

func modelsOf(pairs []Pair) []int {
	m := make([]int, len(pairs))
	for i, p := range pairs {
		m[i] = p.Model
	}
	return m
}
