package planner

// The paper's two baselines (SamuLLM §5). Both use the same cost model and
// re-plan when a stage's first model finishes (they "support preemption").

// MaxHeuristic gives all GPUs to one model at a time (the first unfinished
// model whose inputs are done, in topological order), with the plan of the
// highest throughput among those that use every GPU (the largest that fit
// when none does).
func MaxHeuristic(a *App, s *Simulator, gpus int) (*Schedule, error) {
	return play(a, "max-heuristic", gpus, func(w *world) (*stageEval, error) {
		for mi, m := range a.Models {
			if !w.eligible(a, mi, nil) {
				continue
			}
			plans := m.plans(gpus)
			most := 0
			for _, p := range plans {
				most = max(most, p.GPUs())
			}
			var cands [][]Pair
			for _, p := range plans {
				if p.GPUs() == most {
					cands = append(cands, []Pair{{mi, p}})
				}
			}
			return bestOf(a, s, w, cands)
		}
		return nil, nil
	})
}

// MinHeuristic runs as many models at once as it can, the GPUs split as
// evenly as possible among them (Nagrecha and Kumar's Min-heuristic as
// SamuLLM adapts it): with k models ready, each gets ⌊N/k⌋ GPUs and N mod k
// of them one more; every way of choosing those is priced, each model on
// its share with the plan of the most replicas that fills it, and the split
// of highest stage throughput wins. Models whose inputs run in the same
// stage count as ready.
func MinHeuristic(a *App, s *Simulator, gpus int) (*Schedule, error) {
	return play(a, "min-heuristic", gpus, func(w *world) (*stageEval, error) {
		var ready []int
		for mi := range a.Models {
			if len(ready) < gpus && w.eligible(a, mi, pairsOf(ready)) {
				ready = append(ready, mi)
			}
		}
		for k := len(ready); k > 0; k-- {
			models := ready[:k]
			if !closed(a, w, models) {
				continue
			}
			var cands [][]Pair
			for _, extra := range subsets(k, gpus%k) {
				c, ok := evenSplit(a, models, gpus/k, extra, gpus)
				if ok {
					cands = append(cands, c)
				}
			}
			if len(cands) > 0 {
				return bestOf(a, s, w, cands)
			}
		}
		return nil, nil
	})
}

// evenSplit gives models[i] share (+1 when extra[i]) GPUs, each with its
// plan of the most replicas at the largest tensor-parallel degree that use
// the share exactly, or the largest plan within it.
func evenSplit(a *App, models []int, share int, extra []bool, gpus int) ([]Pair, bool) {
	var c []Pair
	for i, mi := range models {
		g := share
		if extra[i] {
			g++
		}
		var pick Plan
		for _, p := range a.Models[mi].plans(gpus) {
			if p.GPUs() <= g && (p.GPUs() > pick.GPUs() || p.GPUs() == pick.GPUs() && p.TP < pick.TP) {
				pick = p
			}
		}
		if pick.DP == 0 {
			return nil, false
		}
		c = append(c, Pair{mi, pick})
	}
	return c, true
}

// closed reports whether every model's unfinished inputs are among models.
func closed(a *App, w *world, models []int) bool {
	for _, mi := range models {
		if !w.eligible(a, mi, pairsOf(models)) {
			return false
		}
	}
	return true
}

func pairsOf(models []int) []Pair {
	p := make([]Pair, len(models))
	for i, m := range models {
		p[i] = Pair{Model: m}
	}
	return p
}

// subsets lists every choice of r of n positions.
func subsets(n, r int) [][]bool {
	var out [][]bool
	cur := make([]bool, n)
	var rec func(i, left int)
	rec = func(i, left int) {
		if left == 0 {
			out = append(out, append([]bool(nil), cur...))
			return
		}
		if n-i < left {
			return
		}
		cur[i] = true
		rec(i+1, left-1)
		cur[i] = false
		rec(i+1, left)
	}
	rec(0, r)
	return out
}

// bestOf prices candidate stages and returns the one of highest throughput.
func bestOf(a *App, s *Simulator, w *world, cands [][]Pair) (*stageEval, error) {
	evals, err := evaluateAll(a, s, w, cands)
	if err != nil {
		return nil, err
	}
	var best *stageEval
	for _, e := range evals {
		if best == nil || e.throughput(w.now, StageWork) > best.throughput(w.now, StageWork) {
			best = e
		}
	}
	return best, nil
}
