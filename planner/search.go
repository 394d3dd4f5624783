package planner

import (
	"cmp"
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
		var changed []int // the model each candidate adds or upgrades
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
					changed = append(changed, mi)
				}
			}
		}
		// The stage is complete when no candidate raises its throughput
		// (Algorithm 1, lines 19–20). A model that goes on with its plan,
		// loading nothing, joins even when it adds no work before the
		// stage ends: leaving it out would preempt it for nothing.
		base := cur.throughput(w.now, o)
		eps := 1e-9 * base
		gain := func(e *stageEval) float64 {
			return (e.throughput(w.now, o) - base) / float64(e.gpus()-cur.gpus())
		}
		admissible := func(e *stageEval) bool {
			g := gain(e)
			return g > eps || g >= -eps && e.reloads() == cur.reloads()
		}
		evals, err := priceGreedy(a, s, w, cur, cands, changed, o, func(e *stageEval) float64 {
			if admissible(e) {
				return gain(e)
			}
			return math.Inf(-1)
		})
		if err != nil {
			return nil, err
		}
		var best *stageEval
		bestGain := math.Inf(-1)
		for _, e := range evals {
			if e != nil && admissible(e) && gain(e) > bestGain {
				best, bestGain = e, gain(e)
			}
		}
		if best == nil {
			return cur, nil
		}
		cur = best
	}
}

// priceGreedy prices a greedy step's candidates, leaving nil those that
// cannot win: under ModelRates from the highest gain bound down (see
// prune.go) until the next bound is below the best gain priced, which
// gainOf reports (-Inf for a candidate the step may not take).
func priceGreedy(a *App, s *Simulator, w *world, cur *stageEval, cands [][]Pair, changed []int, o Objective, gainOf func(*stageEval) float64) ([]*stageEval, error) {
	if o != ModelRates || s.priceAll {
		return evaluateAll(a, s, w, cands)
	}
	bounds := make([]float64, len(cands))
	for i, c := range cands {
		b, err := gainBound(a, s, w, cur, c, changed[i])
		if err != nil {
			return nil, err
		}
		bounds[i] = b
	}
	order := make([]int, len(cands))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(x, y int) int { return cmp.Compare(bounds[y], bounds[x]) })
	out := make([]*stageEval, len(cands))
	best := math.Inf(-1)
	chunk := runtime.GOMAXPROCS(0)
	for lo := 0; lo < len(order); lo += chunk {
		if bounds[order[lo]] < best-1e-9*math.Abs(best) {
			break
		}
		idx := order[lo:min(lo+chunk, len(order))]
		batch := make([][]Pair, len(idx))
		for k, i := range idx {
			batch[k] = cands[i]
		}
		evals, err := evaluateAll(a, s, w, batch)
		if err != nil {
			return nil, err
		}
		for k, i := range idx {
			out[i] = evals[k]
			best = max(best, gainOf(evals[k]))
		}
	}
	return out, nil
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
