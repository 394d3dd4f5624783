package planner

import (
	"fmt"
	"slices"
	"time"
)

// Pair is a model with its plan in a stage.
type Pair struct {
	Model int
	Plan  Plan
}

// Stage is a period in which a set of models run with unchanged plans; it
// ends when its first model finishes (SamuLLM §3).
type Stage struct {
	Start, End time.Duration
	Pairs      []Pair
	Loads      []bool // Pairs[i] (re)loads its model at the stage's start
	Finished   []int  // models that finish at End
	GPUs       int
}

// world is the application at a stage boundary: what each model has done,
// and the run each model of the last stage was in (it goes on if the next
// stage keeps its plan).
type world struct {
	now    time.Duration
	models []modelState
}

type modelState struct {
	rounds []int           // rounds done, per request
	doneAt []time.Duration // when a request's last round finished; -1 while not
	left   int             // requests not done
	run    *activeRun      // the run it was in during the last stage; nil if none
}

// activeRun is a simulated run placed on the timeline.
type activeRun struct {
	plan  Plan
	start time.Duration
	res   *runResult
}

func (r *activeRun) end() time.Duration { return r.start + r.res.end }

func newWorld(a *App) *world {
	w := &world{models: make([]modelState, len(a.Models))}
	for i, m := range a.Models {
		st := &w.models[i]
		st.rounds = make([]int, len(m.reqs))
		st.doneAt = make([]time.Duration, len(m.reqs))
		for j := range st.doneAt {
			st.doneAt[j] = -1
		}
		st.left = len(m.reqs)
	}
	return w
}

func (w *world) finished(m int) bool { return w.models[m].left == 0 }

func (w *world) done() bool {
	for i := range w.models {
		if !w.finished(i) {
			return false
		}
	}
	return true
}

// eligible reports whether m may join a stage holding pairs: unfinished,
// each input finished or in the stage (model-level pipelining).
func (w *world) eligible(a *App, m int, pairs []Pair) bool {
	if w.finished(m) {
		return false
	}
	for _, u := range a.Models[m].inputs {
		if !w.finished(u) && !slices.ContainsFunc(pairs, func(p Pair) bool { return p.Model == u }) {
			return false
		}
	}
	return true
}

// stageEval is a candidate stage priced: the runs of its models, when it
// ends and the work (FLOPs) its models finish within it.
type stageEval struct {
	pairs []Pair
	runs  []*activeRun // per pair
	loads []bool
	end   time.Duration
	work  float64   // FLOPs finished within the stage
	rate  float64   // Σ over models of remaining FLOPs / time to finish them
	rates []float64 // per pair: its term of rate
}

// throughput is the stage's FLOPs per second by objective o.
func (e *stageEval) throughput(now time.Duration, o Objective) float64 {
	switch {
	case e == nil || len(e.pairs) == 0:
		return 0
	case o == ModelRates:
		return e.rate
	default:
		return e.work / (e.end - now).Seconds()
	}
}

// reloads counts the models the stage (re)loads.
func (e *stageEval) reloads() int {
	n := 0
	if e != nil {
		for _, l := range e.loads {
			if l {
				n++
			}
		}
	}
	return n
}

func (e *stageEval) gpus() int {
	n := 0
	if e != nil {
		for _, p := range e.pairs {
			n += p.Plan.GPUs()
		}
	}
	return n
}

// evaluate prices a stage: each model in topological order either goes on
// with the run it was in (same plan, and its running inputs go on too) or
// starts a run from what it has done, loading unless its plan is unchanged.
func (w *world) evaluate(a *App, s *Simulator, pairs []Pair) (*stageEval, error) {
	pairs = slices.Clone(pairs)
	slices.SortFunc(pairs, func(x, y Pair) int { return x.Model - y.Model })
	e := &stageEval{pairs: pairs, runs: make([]*activeRun, len(pairs)), loads: make([]bool, len(pairs)), rates: make([]float64, len(pairs)), end: -1}
	runOf := map[int]*activeRun{}
	kept := map[int]bool{}
	for i, p := range pairs {
		m := a.Models[p.Model]
		prev := w.models[p.Model].run
		same := prev != nil && prev.plan == p.Plan
		goesOn := same
		for _, u := range m.inputs {
			if !w.finished(u) && !kept[u] {
				goesOn = false
			}
		}
		var r *activeRun
		if goesOn {
			r = prev
			kept[p.Model] = true
		} else {
			items, err := w.pending(a, m, runOf)
			if err != nil {
				return nil, err
			}
			res, err := s.run(m, p.Plan, !same, items)
			if err != nil {
				return nil, err
			}
			r = &activeRun{plan: p.Plan, start: w.now, res: res}
			e.loads[i] = !same
		}
		runOf[p.Model] = r
		e.runs[i] = r
		if e.end < 0 || r.end() < e.end {
			e.end = r.end()
		}
	}
	for i, p := range pairs {
		m := a.Models[p.Model]
		r := e.runs[i]
		left := 0.0
		for k, it := range r.res.items {
			for j, f := range r.res.done[k] {
				if at := r.start + f; at > w.now {
					flops := m.flopsTok * float64(a.prompt(m, it.req, it.first+j)+m.reqs[it.req].out[it.first+j])
					left += flops
					if at <= e.end {
						e.work += flops
					}
				}
			}
		}
		e.rates[i] = left / (r.end() - w.now).Seconds()
		e.rate += e.rates[i]
	}
	return e, nil
}

// pending is what m has left, each request ready when its inputs are: now
// if done before, else when the input's run in this stage finishes it.
func (w *world) pending(a *App, m *Model, runOf map[int]*activeRun) ([]pending, error) {
	st := &w.models[m.idx]
	var items []pending
	for i, q := range m.reqs {
		if st.rounds[i] == len(q.out) {
			continue
		}
		it := pending{req: i, first: st.rounds[i]}
		if it.first == 0 {
			for _, d := range q.deps {
				if w.models[d.model].doneAt[d.req] >= 0 {
					continue
				}
				r := runOf[d.model]
				if r == nil {
					return nil, fmt.Errorf("model %s: input %s is neither finished nor in the stage", m.Name, a.Models[d.model].Name)
				}
				k, ok := r.res.at[d.req]
				if !ok {
					return nil, fmt.Errorf("model %s: request %d of %s is in no run", m.Name, d.req, a.Models[d.model].Name)
				}
				it.ready = max(it.ready, r.start+r.res.finishOf(k)-w.now)
			}
		}
		items = append(items, it)
	}
	return items, nil
}

// commit moves the world to the end of a stage.
func (w *world) commit(a *App, e *stageEval) (*world, Stage) {
	nw := &world{now: e.end, models: make([]modelState, len(w.models))}
	for i := range w.models {
		old := &w.models[i]
		nw.models[i] = modelState{rounds: old.rounds, doneAt: old.doneAt, left: old.left}
	}
	st := Stage{Start: w.now, End: e.end, Pairs: e.pairs, Loads: e.loads, GPUs: e.gpus()}
	for i, p := range e.pairs {
		ms := &nw.models[p.Model]
		ms.rounds = slices.Clone(ms.rounds)
		ms.doneAt = slices.Clone(ms.doneAt)
		r := e.runs[i]
		for k, it := range r.res.items {
			n := 0
			for _, f := range r.res.done[k] {
				if r.start+f <= e.end {
					n++
				}
			}
			if it.first+n > ms.rounds[it.req] {
				ms.rounds[it.req] = it.first + n
				if ms.rounds[it.req] == len(a.Models[p.Model].reqs[it.req].out) {
					ms.doneAt[it.req] = r.start + r.res.finishOf(k)
					ms.left--
				}
			}
		}
		ms.run = r
		if ms.left == 0 {
			ms.run = nil
			st.Finished = append(st.Finished, p.Model)
		}
	}
	return nw, st
}
