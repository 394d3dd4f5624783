package planner

import (
	"math"
	"slices"
)

// A greedy step prices every candidate (each model × each plan) only to
// keep the one with the highest gain per GPU; under the model-rates
// objective most of them can be ruled out unpriced. A model whose requests
// are all ready when it has loaded runs, on dp replicas of TP degree k,
// for load + scale_k × T(dp), T being the replay of dp base replicas with
// no load (simulate.go's scaled runs, exact there). dp replicas, each with
// 1/dp of the requests, take no less than T(1)/dp: a smaller batch pays an
// iteration's fixed cost over fewer tokens
// (TestReplicasScaleAtMostLinearly checks it on the example app). So the
// model's rate under that plan is at most
//
//	left / (load + scale_k × T(1)/dp)
//
// and a candidate whose gain under that bound is below the best priced gain
// cannot win: the step prices candidates from the highest bound down and
// stops there, choosing exactly what pricing them all would choose.

// gainBound is the most candidate c (pairs with one model mi added or
// upgraded) can gain per added GPU over cur under ModelRates; +Inf where
// the bound does not apply (inputs arrive during the run, the plan goes on
// from the last stage, the model feeds another in the stage, memory could
// bind). It replays the model's base plan once (memoised).
func gainBound(a *App, s *Simulator, w *world, cur *stageEval, c []Pair, mi int) (float64, error) {
	inf := math.Inf(1)
	m := a.Models[mi]
	at, _ := planOf(c, mi)
	p := c[at].Plan
	if prev := w.models[mi].run; prev != nil && prev.plan == p || s.fullKV || s.direct {
		return inf, nil
	}
	for _, q := range c {
		if slices.Contains(a.Models[q.Model].inputs, mi) {
			return inf, nil
		}
	}
	cfg := m.byTP[m.baseTP].profile.EngineConfig()
	if unboundBlocks(cfg, m.longest) > cfg.NumBlocks {
		return inf, nil
	}
	items, err := w.pending(a, m, nil)
	if err != nil || len(items) == 0 {
		return inf, nil
	}
	left := 0.0
	for _, it := range items {
		if it.ready > 0 {
			return inf, nil
		}
		for r := it.first; r < len(m.reqs[it.req].out); r++ {
			left += m.flopsTok * float64(a.prompt(m, it.req, r)+m.reqs[it.req].out[r])
		}
	}
	base, err := s.run(m, Plan{DP: 1, TP: m.baseTP}, false, items)
	if err != nil {
		return 0, err
	}
	pp := m.byTP[p.TP]
	ub := left / (pp.load.Seconds() + pp.scale*base.end.Seconds()/float64(p.DP))
	old, added := 0.0, p.GPUs()
	if cur != nil {
		if k, in := planOf(cur.pairs, mi); in {
			old, added = cur.rates[k], added-cur.pairs[k].Plan.GPUs()
		}
	}
	return (ub - old) / float64(added), nil
}
