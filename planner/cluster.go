package planner

// This file replays a plan's DP replicas as a cluster: their engines step
// on one virtual timeline, and each request is placed by the placer when it
// is due, seeing what the replicas hold at that instant.

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"github.com/pitstop-llm/pitstop/engine"
	"github.com/pitstop-llm/pitstop/engine/policy"
	"github.com/pitstop-llm/pitstop/engine/sim"
)

// replicas runs items on dp engines of the profile's device, loading for
// load first.
func (s *Simulator) replicas(m *Model, prof *sim.Profile, dp int, load time.Duration, items []pending, res *runResult) error {
	cfg := s.engineConfig(m, prof)
	if dp == 1 {
		idx := make([]int, len(items))
		for k := range idx {
			idx[k] = k
		}
		return s.replay(m, cfg, sim.NewExecutor(prof), load, items, idx, res)
	}
	s.mu.Lock()
	name := s.balancer
	s.mu.Unlock()
	pl, err := newPlacer(name, dp)
	if err != nil {
		return err
	}
	engs := make([]*engine.Engine, dp)
	next := make([]time.Duration, dp)
	has := make([]bool, dp)
	for i := range engs {
		if engs[i], err = engine.New(cfg, engine.NewVirtualClock(), sim.NewExecutor(prof), policy.FCFS{}, finishObserver{}); err != nil {
			return err
		}
	}
	due := func(k int) time.Duration { return max(items[k].ready, load) }
	order := make([]int, len(items))
	for k := range order {
		order[k] = k
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(due(a), due(b)) })
	var failed error
	var submit func(rep, k, round int)
	submit = func(rep, k, round int) {
		it := items[k]
		q := &m.reqs[it.req]
		prompt := s.app.prompt(m, it.req, round)
		c := &forcedCall{out: q.out[round]}
		c.finished = func(at time.Duration) {
			res.done[k] = append(res.done[k], at)
			last := round+1 == len(q.out)
			pl.done(rep, it.req, prompt, q.out[round], last)
			if !last {
				pl.add(rep, s.app.prompt(m, it.req, round+1), q.out[round+1])
				engs[rep].At(at, func() { submit(rep, k, round+1) })
			}
		}
		if _, err := engs[rep].SubmitNow(engine.Request{Prompt: s.zeros(prompt), MaxTokens: c.out, Controller: c}); err != nil && failed == nil {
			failed = err
		}
	}
	for q := 0; ; {
		bi := -1
		for i := range engs {
			if has[i] && (bi < 0 || next[i] < next[bi]) {
				bi = i
			}
		}
		if q < len(order) && (bi < 0 || due(order[q]) <= next[bi]) {
			k := order[q]
			q++
			t, it := due(k), items[k]
			rep := pl.place(t, it.req, s.app.prompt(m, it.req, it.first), m.reqs[it.req].out[it.first])
			engs[rep].At(t, func() { submit(rep, k, it.first) })
			if at := max(t, engs[rep].Now()); !has[rep] || at < next[rep] {
				next[rep], has[rep] = at, true
			}
			continue
		}
		if bi < 0 {
			break
		}
		engs[bi].AdvanceTo(next[bi])
		n, ok, err := engs[bi].StepOnce()
		if err != nil {
			return err
		}
		next[bi], has[bi] = n, ok
		if failed != nil {
			return failed
		}
	}
	for k, it := range items {
		if len(res.done[k]) != len(m.reqs[it.req].out)-it.first {
			return fmt.Errorf("request %d did not finish", it.req)
		}
	}
	return nil
}
