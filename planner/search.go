package planner

import (
	"math"
	"runtime"
	"slices"
	"sync"
)

// Search is SamuLLM's greedy search (Algorithm 1, adapted from Optimus):
// each stage starts empty and repeatedly takes the candidate with the
// highest gain in stage throughput per added GPU, a candidate being a model
// whose inputs are finished or in the stage with a plan (added, or
// replacing the model's plan by one with more GPUs) within the budget. A
// stage is complete when no candidate raises its throughput; it lasts until
// its first model finishes; the next stage is searched from there.
//
// How a stage's throughput is measured is the objective: see Objective.
func Search(a *App, s *Simulator, gpus int, o Objective) (*Schedule, error) {
	return play(a, "samullm", gpus, func(w *world) (*stageEval, error) { return greedyStage(a, s, w, gpus, o) })
}

func greedyStage(a *App, s *Simulator, w *world, gpus int, o Objective) (*stageEval, error) {
	var cur *stageEval
	for {
		var pairs []Pair
		if cur != nil {
			pairs = cur.pairs
		}
		var cands [][]Pair
		for mi, m := range a.Models {
			if !w.eligible(a, mi, pairs) {
				continue
			}
			at, in := planOf(pairs, mi)
			for _, p := range m.plans(gpus) {
				var c []Pair
				if in {
					if p.GPUs() <= pairs[at].Plan.GPUs() {
						continue
					}
					c = slices.Clone(pairs)
					c[at].Plan = p
				} else {
					c = append(slices.Clone(pairs), Pair{mi, p})
				}
				if gpusOf(c) <= gpus {
					cands = append(cands, c)
				}
			}
		}
		evals, err := evaluateAll(a, s, w, cands)
		if err != nil {
			return nil, err
		}
		// The stage is complete when no candidate raises its throughput
		// (Algorithm 1, lines 19–20). A model that goes on with its plan,
		// loading nothing, joins even when it adds no work before the
		// stage ends: leaving it out would preempt it for nothing.
		var best *stageEval
		bestGain := math.Inf(-1)
		base := cur.throughput(w.now, o)
		eps := 1e-9 * base
		for _, e := range evals {
			gain := (e.throughput(w.now, o) - base) / float64(e.gpus()-cur.gpus())
			if (gain > eps || gain >= -eps && e.reloads() == cur.reloads()) && gain > bestGain {
				best, bestGain = e, gain
			}
		}
		if best == nil {
			return cur, nil
		}
		cur = best
	}
}

// evaluateAll prices candidate stages in parallel (the paper's simulator
// also runs plans in parallel); results keep the candidates' order.
func evaluateAll(a *App, s *Simulator, w *world, cands [][]Pair) ([]*stageEval, error) {
	out := make([]*stageEval, len(cands))
	errs := make([]error, len(cands))
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	for i, c := range cands {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			out[i], errs[i] = w.evaluate(a, s, c)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}
