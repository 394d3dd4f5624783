package planner

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/pitstop-llm/pitstop/engine"
)

// Loader loads one replica of a model with tp workers: the executor and the
// engine configuration sized for it. Its wall time is the model's load time.
type Loader func(m *Model, tp int) (engine.Executor, engine.Config, error)

// RunReport is what a run did: when each model finished, planned and
// actual, and the launches the dynamic scheduler made.
type RunReport struct {
	PlannedS float64       `json:"planned_s"`
	ActualS  float64       `json:"actual_s"`
	Models   []ModelReport `json:"models"`
	Launches []Launch      `json:"launches"`
}

// ModelReport is one model's planned and actual finish.
type ModelReport struct {
	Model     string  `json:"model"`
	PlannedS  float64 `json:"planned_finish_s"`
	ActualS   float64 `json:"actual_finish_s"`
	Requests  int     `json:"requests"`
	LoadS     float64 `json:"load_s"` // measured, summed over its launches' replicas
	Preempted int     `json:"preempted"`
}

// Launch is one start of a model on a plan.
type Launch struct {
	AtS   float64 `json:"at_s"`
	Model string  `json:"model"`
	DP    int     `json:"dp"`
	TP    int     `json:"tp"`
	Stage int     `json:"stage"` // the planned stage it serves (1-based; 0: after the plan ran out)
}

// Runner executes a schedule on real engines (one per replica, each in its
// own goroutine on the wall clock) and adjusts it as SamuLLM's dynamic
// scheduler does (§4.3): when any model finishes, the next planned stage
// is brought up — its models that already run with their planned plan go
// on, the others are launched, preempting models that are planned again
// later when GPUs are short; a model whose last planned stage has passed
// runs until it finishes; a stage is brought up only after the one before
// it is. A model left over when the plan runs out (it finished later than
// planned) is launched with its last plan when GPUs are free.
type Runner struct {
	app   *App // the requests as they really are (their own draw)
	plan  *Schedule
	load  Loader
	start time.Time

	mu     sync.Mutex
	events []runEvent
	wake   chan struct{}

	models  []*runModel
	free    int // GPUs no launch holds
	allowed int // stages that may be brought up (1 + model finishes so far)
	next    int // first stage not brought up
	rep     RunReport
	failed  error
	// balancer places requests on a launch's DP replicas (cluster.Names).
	balancer string
}

type runEvent struct {
	model, gen int
	req, round int
	at         time.Duration
	loaded     *replica // a replica finished loading
	err        error
}

type runModel struct {
	m        *Model
	rounds   []int
	done     []bool
	left     int
	finished bool
	finishAt time.Duration
	// The current launch, if any.
	gen      int
	plan     Plan
	running  bool
	replicas []*replica
	placer   *placer
	on       []int // request → the replica it was placed on
	lastPlan Plan
	report   *ModelReport
}

type replica struct {
	rm     *runModel
	gen    int
	eng    *engine.Engine
	cancel context.CancelFunc
	ready  bool
	queued []int // requests to submit once loaded
	done   chan struct{}
}

// NewRunner prepares a run of plan for app on gpus.
func NewRunner(app *App, plan *Schedule, gpus int, load Loader) *Runner {
	r := &Runner{app: app, plan: plan, load: load, free: gpus, allowed: 1, wake: make(chan struct{}, 1), balancer: DefaultBalancer}
	for _, m := range app.Models {
		rm := &runModel{m: m, rounds: make([]int, len(m.reqs)), done: make([]bool, len(m.reqs)), left: len(m.reqs), on: make([]int, len(m.reqs))}
		rm.report = &ModelReport{Model: m.Name, Requests: len(m.reqs), PlannedS: -1}
		r.models = append(r.models, rm)
	}
	for _, st := range plan.Stages {
		for _, mi := range st.Finished {
			r.models[mi].report.PlannedS = st.End.Seconds()
		}
	}
	return r
}

// UseBalancer has the run place requests on a launch's DP replicas with the
// named cluster balancer (DefaultBalancer unless told): the simulator that
// made the plan should use the same.
func (r *Runner) UseBalancer(name string) error {
	if _, err := newPlacer(name, 1); err != nil {
		return err
	}
	r.balancer = name
	return nil
}

func (r *Runner) now() time.Duration { return time.Since(r.start) }

func (r *Runner) post(ev runEvent) {
	r.mu.Lock()
	r.events = append(r.events, ev)
	r.mu.Unlock()
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// Run executes the plan and reports planned against actual.
func (r *Runner) Run(ctx context.Context) (*RunReport, error) {
	r.start = time.Now()
	r.rep.PlannedS = r.plan.Total.Seconds()
	r.schedule()
	for !r.allFinished() && r.failed == nil {
		select {
		case <-ctx.Done():
			r.stopAll()
			return nil, ctx.Err()
		case <-r.wake:
		}
		r.mu.Lock()
		evs := r.events
		r.events = nil
		r.mu.Unlock()
		for _, ev := range evs {
			r.handle(ev)
		}
	}
	r.stopAll()
	if r.failed != nil {
		return nil, r.failed
	}
	end := time.Duration(0)
	for _, rm := range r.models {
		rm.report.ActualS = rm.finishAt.Seconds()
		end = max(end, rm.finishAt)
		r.rep.Models = append(r.rep.Models, *rm.report)
	}
	r.rep.ActualS = end.Seconds()
	return &r.rep, nil
}

func (r *Runner) allFinished() bool {
	for _, rm := range r.models {
		if !rm.finished {
			return false
		}
	}
	return true
}

func (r *Runner) handle(ev runEvent) {
	rm := r.models[ev.model]
	if ev.err != nil {
		r.failed = fmt.Errorf("model %s: %w", rm.m.Name, ev.err)
		return
	}
	if ev.gen != rm.gen || !rm.running {
		return // from a launch since stopped
	}
	if ev.loaded != nil {
		ev.loaded.ready = true
		for _, q := range ev.loaded.queued {
			r.submit(ev.loaded, q)
		}
		ev.loaded.queued = nil
		return
	}
	rm.rounds[ev.req] = ev.round + 1
	q := &rm.m.reqs[ev.req]
	last := rm.rounds[ev.req] == len(q.out)
	rm.placer.done(rm.on[ev.req], ev.req, r.app.prompt(rm.m, ev.req, ev.round), q.out[ev.round], last)
	if !last {
		rm.placer.add(rm.on[ev.req], r.app.prompt(rm.m, ev.req, ev.round+1), q.out[ev.round+1])
		return // the replica submits the next round itself
	}
	rm.done[ev.req] = true
	rm.left--
	// Requests of running models that read this one may be ready now.
	for _, down := range r.models {
		if down.running && slices.Contains(down.m.inputs, rm.m.idx) {
			for i := range down.m.reqs {
				if r.isNewlyReady(down, i, rm.m.idx, ev.req) {
					r.dispatch(down, i)
				}
			}
		}
	}
	if rm.left == 0 {
		rm.finished, rm.finishAt = true, ev.at
		r.stop(rm)
		r.allowed++
		r.schedule()
	}
}

// isNewlyReady: request i of down reads request req of model up and every
// request it reads is done.
func (r *Runner) isNewlyReady(down *runModel, i, up, req int) bool {
	q := &down.m.reqs[i]
	if down.done[i] || down.rounds[i] > 0 || !slices.Contains(q.deps, reqRef{up, req}) {
		return false
	}
	return r.depsDone(q)
}

func (r *Runner) depsDone(q *request) bool {
	for _, d := range q.deps {
		if !r.models[d.model].done[d.req] {
			return false
		}
	}
	return true
}
