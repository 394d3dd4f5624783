package planner

import (
	"fmt"
	"time"
)

// Schedule is an application plan: its stages in order and the estimated
// time to answer every request (the end of the last stage).
type Schedule struct {
	Method string
	GPUs   int
	Stages []Stage
	Total  time.Duration // estimated inference time
	Search time.Duration // wall time spent finding it
}

// Check rejects a budget some model cannot run within, naming the model.
func Check(a *App, gpus int) error { return check(a, gpus) }

func check(a *App, gpus int) error {
	if gpus <= 0 {
		return fmt.Errorf("the GPU budget must be positive, got %d", gpus)
	}
	for _, m := range a.Models {
		need := m.minGPUs()
		switch {
		case need == 0:
			return fmt.Errorf("model %s: no plan holds its longest sequence (%d tokens) in KV (tensor-parallel degrees %v)", m.Name, m.longest, m.tps)
		case need > gpus:
			return fmt.Errorf("model %s: its smallest plan needs %d GPUs (tensor-parallel degrees %v), the budget is %d", m.Name, need, m.tps, gpus)
		}
	}
	return nil
}

// stepper picks the next stage from a world, or nil when no stage is found.
type stepper func(w *world) (*stageEval, error)

// play builds a schedule stage by stage until every model has finished.
func play(a *App, method string, gpus int, next stepper) (*Schedule, error) {
	if err := check(a, gpus); err != nil {
		return nil, err
	}
	t0 := time.Now()
	sc := &Schedule{Method: method, GPUs: gpus}
	w := newWorld(a)
	for !w.done() {
		e, err := next(w)
		if err != nil {
			return nil, err
		}
		if e == nil {
			return nil, fmt.Errorf("%s: no stage can run at %.1f s with %d GPUs", method, w.now.Seconds(), gpus)
		}
		var st Stage
		w, st = w.commit(a, e)
		sc.Stages = append(sc.Stages, st)
	}
	sc.Total = w.now
	sc.Search = time.Since(t0)
	return sc, nil
}

// planOf is the plan of model m in pairs, if any.
func planOf(pairs []Pair, m int) (int, bool) {
	for i, p := range pairs {
		if p.Model == m {
			return i, true
		}
	}
	return -1, false
}

func gpusOf(pairs []Pair) int {
	n := 0
	for _, p := range pairs {
		n += p.Plan.GPUs()
	}
	return n
}
