package planner

// This file is a model's launch in the Runner: its DP replicas, each an
// engine that loads and runs in its own goroutine, the requests sent to
// them, and stopping them.

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/pitstop-llm/pitstop/engine"
	"github.com/pitstop-llm/pitstop/engine/policy"
)

// launch starts rm on plan p: DP replicas load in their own goroutines;
// the requests whose inputs are done are placed on them by the balancer.
func (r *Runner) launch(rm *runModel, p Plan, stage int) {
	pl, err := newPlacer(r.balancer, p.DP)
	if err != nil { // UseBalancer checked the name: not expected
		r.failed = fmt.Errorf("model %s: %w", rm.m.Name, err)
		return
	}
	rm.gen++
	rm.plan, rm.lastPlan, rm.running = p, p, true
	rm.replicas, rm.placer = nil, pl
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

// dispatch sends request i of rm to the replica the placer picks.
func (r *Runner) dispatch(rm *runModel, i int) {
	round := rm.rounds[i]
	at := rm.placer.place(r.now(), i, r.app.prompt(rm.m, i, round), rm.m.reqs[i].out[round])
	rm.on[i] = at
	rep := rm.replicas[at]
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
