package planner

import "slices"

// This file is the Runner's dynamic scheduler (SamuLLM §4.3): which planned
// stage is brought up when a model finishes, who gives way, and what runs
// once the plan has run out.

// schedule brings up planned stages as far as allowed, then, once the plan
// has run out, launches left-over models. If a stage cannot come up and
// nothing runs (no finish will come to retry it), the left-overs are
// launched too, so that a run always moves on.
func (r *Runner) schedule() {
	for r.next < len(r.plan.Stages) && r.next < r.allowed {
		if !r.bringUp(r.next) {
			break
		}
		r.next++
	}
	if r.next < len(r.plan.Stages) && r.anyRunning() {
		return
	}
	for _, rm := range r.models {
		if rm.finished || rm.running || !r.inputsUp(rm) {
			continue
		}
		p := rm.lastPlan
		if p.DP == 0 {
			p = Plan{DP: 1, TP: rm.m.tps[0]}
		}
		if p.GPUs() > r.free {
			p = Plan{DP: max(1, r.free/p.TP), TP: p.TP}
		}
		if p.GPUs() <= r.free {
			r.launch(rm, p, 0)
		}
	}
}

func (r *Runner) anyRunning() bool {
	for _, rm := range r.models {
		if rm.running {
			return true
		}
	}
	return false
}

// bringUp starts what stage k plans that is not running yet; it reports
// whether the whole stage is up.
func (r *Runner) bringUp(k int) bool {
	st := &r.plan.Stages[k]
	up := true
	for _, p := range st.Pairs {
		rm := r.models[p.Model]
		if rm.finished || rm.running && rm.plan == p.Plan {
			continue
		}
		if rm.running {
			r.stop(rm) // re-planned: relaunched below with the stage's plan
			rm.report.Preempted++
		}
		if !r.inputsUp(rm) {
			up = false
			continue
		}
		for r.free < p.Plan.GPUs() {
			v := r.victim(k)
			if v == nil {
				break
			}
			r.stop(v)
			v.report.Preempted++
		}
		if r.free < p.Plan.GPUs() {
			up = false
			continue
		}
		r.launch(rm, p.Plan, k+1)
	}
	return up
}

// victim is a running model that stage k does not keep, that no model of
// stage k reads, and that is planned again after k (a model past its last
// planned stage runs to its end).
func (r *Runner) victim(k int) *runModel {
	st := &r.plan.Stages[k]
	for _, rm := range r.models {
		if !rm.running {
			continue
		}
		if i, in := planOf(st.Pairs, rm.m.idx); in && st.Pairs[i].Plan == rm.plan {
			continue
		}
		if slices.ContainsFunc(st.Pairs, func(p Pair) bool { return slices.Contains(r.app.Models[p.Model].inputs, rm.m.idx) }) {
			continue
		}
		if r.lastStage(rm.m.idx) > k {
			return rm
		}
	}
	return nil
}

func (r *Runner) lastStage(mi int) int {
	last := -1
	for k, st := range r.plan.Stages {
		if _, in := planOf(st.Pairs, mi); in {
			last = k
		}
	}
	return last
}

// inputsUp: every input of rm is finished or running.
func (r *Runner) inputsUp(rm *runModel) bool {
	for _, u := range rm.m.inputs {
		if !r.models[u].finished && !r.models[u].running {
			return false
		}
	}
	return true
}
