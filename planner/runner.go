package planner

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/pitstop-llm/pitstop/engine"
	"github.com/pitstop-llm/pitstop/engine/policy"
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
	gpus  int
	load  Loader
	start time.Time

	mu     sync.Mutex
	events []runEvent
	wake   chan struct{}

	models  []*runModel
	free    int
	allowed int // stages that may be brought up (1 + model finishes so far)
	next    int // first stage not brought up
	rep     RunReport
	failed  error
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
	rr       int
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
	r := &Runner{app: app, plan: plan, gpus: gpus, load: load, free: gpus, allowed: 1, wake: make(chan struct{}, 1)}
	for _, m := range app.Models {
		rm := &runModel{m: m, rounds: make([]int, len(m.reqs)), done: make([]bool, len(m.reqs)), left: len(m.reqs)}
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
	if rm.rounds[ev.req] < len(rm.m.reqs[ev.req].out) {
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

// schedule brings up planned stages as far as allowed, then, once the plan
// has run out, launches left-over models.
func (r *Runner) schedule() {
	for r.next < len(r.plan.Stages) && r.next < r.allowed {
		if !r.bringUp(r.next) {
			return
		}
		r.next++
	}
	if r.next < len(r.plan.Stages) {
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

// victim is a running model that stage k does not keep and that is planned
// again after k (a model past its last planned stage runs to its end).
func (r *Runner) victim(k int) *runModel {
	st := &r.plan.Stages[k]
	for _, rm := range r.models {
		if !rm.running {
			continue
		}
		if i, in := planOf(st.Pairs, rm.m.idx); in && st.Pairs[i].Plan == rm.plan {
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

// launch starts rm on plan p: DP replicas load in their own goroutines;
// the requests whose inputs are done go to them in turn.
func (r *Runner) launch(rm *runModel, p Plan, stage int) {
	rm.gen++
	rm.plan, rm.lastPlan, rm.running = p, p, true
	rm.replicas = nil
	r.free -= p.GPUs()
	r.rep.Launches = append(r.rep.Launches, Launch{AtS: r.now().Seconds(), Model: rm.m.Name, DP: p.DP, TP: p.TP, Stage: stage})
	for range p.DP {
		rep := &replica{rm: rm, gen: rm.gen, done: make(chan struct{})}
		rm.replicas = append(rm.replicas, rep)
		go r.serve(rep, p.TP)
	}
	for i := range rm.m.reqs {
		if !rm.done[i] && r.depsDone(&rm.m.reqs[i]) {
			r.dispatch(rm, i)
		}
	}
}

// dispatch sends request i of rm to its next replica.
func (r *Runner) dispatch(rm *runModel, i int) {
	rep := rm.replicas[rm.rr%len(rm.replicas)]
	rm.rr++
	if !rep.ready {
		rep.queued = append(rep.queued, i)
		return
	}
	r.submit(rep, i)
}

// submit posts request i's next round to the replica's engine; the rounds
// after it are submitted on the engine's goroutine as each one finishes.
func (r *Runner) submit(rep *replica, i int) {
	rm := rep.rm
	first := rm.rounds[i]
	m := rm.m
	var sub func(round int)
	sub = func(round int) {
		c := &forcedCall{out: m.reqs[i].out[round]}
		c.finished = func(time.Duration) {
			r.post(runEvent{model: m.idx, gen: rep.gen, req: i, round: round, at: r.now()})
			if round+1 < len(m.reqs[i].out) {
				rep.eng.At(rep.eng.Now(), func() { sub(round + 1) })
			}
		}
		if _, err := rep.eng.SubmitNow(engine.Request{Prompt: make([]int32, r.app.prompt(m, i, round)), MaxTokens: c.out, Controller: c}); err != nil {
			r.post(runEvent{model: m.idx, gen: rep.gen, err: err})
		}
	}
	rep.eng.Post(func() { sub(first) })
}

// serve loads a replica, reports it loaded and runs its engine until stopped.
func (r *Runner) serve(rep *replica, tp int) {
	defer close(rep.done)
	t0 := time.Now()
	x, cfg, err := r.load(rep.rm.m, tp)
	if err != nil {
		r.post(runEvent{model: rep.rm.m.idx, gen: rep.gen, err: err})
		return
	}
	loadS := time.Since(t0).Seconds()
	eng, err := engine.New(cfg, engine.NewRealClock(), x, policy.FCFS{}, finishObserver{})
	if err != nil {
		r.post(runEvent{model: rep.rm.m.idx, gen: rep.gen, err: err})
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	r.mu.Lock()
	rep.eng, rep.cancel = eng, cancel
	rep.rm.report.LoadS += loadS
	r.mu.Unlock()
	r.post(runEvent{model: rep.rm.m.idx, gen: rep.gen, loaded: rep})
	if err := eng.Run(ctx); err != nil && !errors.Is(err, context.Canceled) {
		r.post(runEvent{model: rep.rm.m.idx, gen: rep.gen, err: err})
	}
}

// stop ends rm's launch: its engines stop, requests in flight lose their
// progress (rounds already done are kept), its GPUs are free.
func (r *Runner) stop(rm *runModel) {
	if !rm.running {
		return
	}
	rm.running = false
	r.free += rm.plan.GPUs()
	for _, rep := range rm.replicas {
		go func() {
			// A replica still loading stops as soon as it has loaded.
			for {
				r.mu.Lock()
				c := rep.cancel
				r.mu.Unlock()
				if c != nil {
					c()
					return
				}
				select {
				case <-rep.done:
					return
				case <-time.After(time.Millisecond):
				}
			}
		}()
	}
}

func (r *Runner) stopAll() {
	for _, rm := range r.models {
		r.stop(rm)
	}
	for _, rm := range r.models {
		for _, rep := range rm.replicas {
			<-rep.done
		}
	}
}
