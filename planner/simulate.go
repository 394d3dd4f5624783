package planner

import (
	"context"
	"fmt"
	"hash/fnv"
	"sync"
	"time"

	"github.com/pitstop-llm/pitstop/engine"
	"github.com/pitstop-llm/pitstop/engine/policy"
	"github.com/pitstop-llm/pitstop/engine/sim"
)

// pending is one request a run must finish: from round first on, its first
// round ready at offset ready after the run starts.
type pending struct {
	req   int
	first int
	ready time.Duration
}

// runResult is a model's run under one plan: when each pending request
// finished each of its remaining rounds, relative to the run's start (load
// time included).
type runResult struct {
	items []pending
	done  [][]time.Duration // done[k][j]: round items[k].first+j
	end   time.Duration     // the last finish
	at    map[int]int       // request → its item
}

// finishOf is when item k's last round finished.
func (r *runResult) finishOf(k int) time.Duration { d := r.done[k]; return d[len(d)-1] }

// runKey identifies a simulation: the same model, plan, load and pending
// work (with ready times) give the same result.
type runKey struct {
	model    int
	plan     Plan
	load     bool
	sig      uint64
	balancer string
}

// Simulator replays a model's requests on the engine with the simulated
// executor (as `pitstop bench --executor sim` does) and remembers every run
// it made, so that a search asking again pays nothing.
type Simulator struct {
	app *App
	mu  sync.Mutex
	mem map[runKey]*runResult
	// Runs and Busy count the simulations made and their wall time;
	// Replayed the requests those simulations replayed.
	Runs     int
	Replayed int
	Busy     time.Duration
	zero     []int32
	// fullKV simulates every device with the profile's whole KV pool even
	// where memory cannot bind (tests compare the two).
	fullKV bool
	// direct replays every plan, none scaled from another (tests compare).
	direct bool
	// priceAll has the greedy price every candidate, none ruled out by
	// its bound (tests compare).
	priceAll bool
	// balancer places requests on a plan's DP replicas (cluster.Names).
	balancer string
}

// unboundBlocks is a KV pool in which memory can never bind: MaxSeqs
// sequences of the longest length, plus the engine's 1% admission
// watermark. An engine given more blocks behaves the same (no call waits
// for memory, none is preempted), so a simulation sizes its pool to the
// smaller of this and the profile's: making and scanning a block table of
// a TP-8 device's 4 million tokens is most of a short replay's cost.
func unboundBlocks(cfg engine.Config, longest int) int {
	per := (longest+1+cfg.BlockSize-1)/cfg.BlockSize + 1
	return int(float64(cfg.MaxSeqs*per)/0.98) + 2
}

// NewSimulator prices the models of app.
func NewSimulator(app *App) *Simulator {
	return &Simulator{app: app, mem: map[runKey]*runResult{}, balancer: DefaultBalancer}
}

// UseBalancer has the simulator place requests on a plan's DP replicas with
// the named cluster balancer (DefaultBalancer unless told).
func (s *Simulator) UseBalancer(name string) error {
	if _, err := newPlacer(name, 1); err != nil {
		return err
	}
	s.mu.Lock()
	s.balancer = name
	s.mu.Unlock()
	return nil
}

func (s *Simulator) replayed() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.Replayed
}

// signature hashes the pending work: requests, first rounds and ready
// times to the millisecond (runs whose inputs differ by less share a
// replay).
func signature(items []pending) uint64 {
	h := fnv.New64a()
	var b [24]byte
	for _, it := range items {
		put := func(o int, v uint64) {
			for i := range 8 {
				b[o+i] = byte(v >> (8 * i))
			}
		}
		put(0, uint64(it.req))
		put(8, uint64(it.first))
		put(16, uint64(it.ready/time.Millisecond))
		h.Write(b[:])
	}
	return h.Sum64()
}

// run simulates model m finishing items under plan p, loading first when
// load is set. A balancer places items on the DP replicas (cluster.go).
func (s *Simulator) run(m *Model, p Plan, load bool, items []pending) (*runResult, error) {
	key := runKey{m.idx, p, load, signature(items), s.balancer}
	s.mu.Lock()
	if r, ok := s.mem[key]; ok {
		s.mu.Unlock()
		return r, nil
	}
	s.mu.Unlock()
	pp := m.byTP[p.TP]
	var loadT time.Duration
	if load {
		loadT = pp.load
	}
	if res, ok, err := s.scaled(m, p, loadT, items); ok || err != nil {
		if err == nil {
			s.mu.Lock()
			s.mem[key] = res
			s.mu.Unlock()
		}
		return res, err
	}
	t0 := time.Now()
	res := &runResult{items: items, done: make([][]time.Duration, len(items)), at: make(map[int]int, len(items))}
	for k, it := range items {
		res.at[it.req] = k
	}
	if err := s.replicas(m, pp.profile, p.DP, loadT, items, res); err != nil {
		return nil, fmt.Errorf("model %s on %s: %w", m.Name, p, err)
	}
	for k := range res.done {
		res.end = max(res.end, res.finishOf(k))
	}
	if len(items) == 0 {
		res.end = loadT
	}
	s.mu.Lock()
	s.mem[key] = res
	s.Runs++
	s.Replayed += len(items)
	s.Busy += time.Since(t0)
	s.mu.Unlock()
	return res, nil
}

// scaled answers a run from the same replicas' run on the base profile
// without load, when that is exact: every request is ready when the model
// has loaded (no input arrives during the run), and KV cannot bind on
// either device (so the engine makes the same batches on both). Every
// iteration then costs scale times the base's (1 on the base profile
// itself), and the run is the base run stretched by scale after the load.
// One replay thus serves every TP degree, loaded or not. It reports false
// when it does not apply.
func (s *Simulator) scaled(m *Model, p Plan, load time.Duration, items []pending) (*runResult, bool, error) {
	pp := m.byTP[p.TP]
	base := m.byTP[m.baseTP]
	if s.fullKV || s.direct || p.TP == m.baseTP && load == 0 {
		return nil, false, nil
	}
	cfg := base.profile.EngineConfig()
	if unboundBlocks(cfg, m.longest) > cfg.NumBlocks {
		return nil, false, nil
	}
	at0 := make([]pending, len(items))
	for k, it := range items {
		if it.ready > load {
			return nil, false, nil
		}
		at0[k] = pending{req: it.req, first: it.first}
	}
	br, err := s.run(m, Plan{DP: p.DP, TP: m.baseTP}, false, at0)
	if err != nil {
		return nil, true, err
	}
	stretch := func(d time.Duration) time.Duration { return load + time.Duration(float64(d)*pp.scale) }
	res := &runResult{items: items, done: make([][]time.Duration, len(items)), at: br.at, end: load}
	for k, d := range br.done {
		res.done[k] = make([]time.Duration, len(d))
		for j, t := range d {
			res.done[k][j] = stretch(t)
		}
		res.end = max(res.end, res.done[k][len(d)-1])
	}
	return res, true, nil
}

// engineConfig is a replica's engine on the profile's device, its KV pool
// no larger than memory can bind.
func (s *Simulator) engineConfig(m *Model, prof *sim.Profile) engine.Config {
	cfg := prof.EngineConfig()
	if b := unboundBlocks(cfg, m.longest); b < cfg.NumBlocks && !s.fullKV {
		cfg.NumBlocks, cfg.HostBlocks = b, 0
	}
	return cfg
}

// Replay runs the first n requests of model m (every round, all ready at
// once) on executor x with engine configuration cfg, on a virtual clock
// that advances by the durations x reports, and returns when the last one
// finished: a real executor's measured iterations on the model's own
// sampled work, for fitting its profile.
func (s *Simulator) Replay(m *Model, cfg engine.Config, x engine.Executor, n int) (time.Duration, error) {
	n = min(n, len(m.reqs))
	items := make([]pending, n)
	idx := make([]int, n)
	for i := range items {
		items[i], idx[i] = pending{req: i}, i
	}
	res := &runResult{items: items, done: make([][]time.Duration, n)}
	if err := s.replay(m, cfg, x, 0, items, idx, res); err != nil {
		return 0, fmt.Errorf("model %s: %w", m.Name, err)
	}
	end := time.Duration(0)
	for k := range res.done {
		end = max(end, res.finishOf(k))
	}
	return end, nil
}

func (s *Simulator) replay(m *Model, cfg engine.Config, x engine.Executor, load time.Duration, items []pending, idx []int, res *runResult) error {
	eng, err := engine.New(cfg, engine.NewVirtualClock(), x, policy.FCFS{}, finishObserver{})
	if err != nil {
		return err
	}
	var failed error
	var submit func(k, round int)
	submit = func(k, round int) {
		it := items[k]
		q := &m.reqs[it.req]
		c := &forcedCall{out: q.out[round]}
		c.finished = func(at time.Duration) {
			res.done[k] = append(res.done[k], at)
			if round+1 < len(q.out) {
				eng.At(at, func() { submit(k, round+1) })
			}
		}
		_, err := eng.SubmitNow(engine.Request{Prompt: s.zeros(s.app.prompt(m, it.req, round)), MaxTokens: c.out, Controller: c})
		if err != nil && failed == nil {
			failed = err
		}
	}
	for _, k := range idx {
		eng.At(max(items[k].ready, load), func() { submit(k, items[k].first) })
	}
	if err := eng.Run(context.Background()); err != nil {
		return err
	}
	if failed != nil {
		return failed
	}
	for _, k := range idx {
		if len(res.done[k]) != len(m.reqs[items[k].req].out)-items[k].first {
			return fmt.Errorf("request %d did not finish", items[k].req)
		}
	}
	return nil
}

// forcedCall generates exactly out tokens, then tells finished the engine
// time (the sampled output length stands for the model's answer).
type forcedCall struct {
	out, made int
	finished  func(at time.Duration)
}

func (c *forcedCall) Next(s *engine.Sequence, _ int32) engine.Action {
	c.made++
	if c.made >= c.out {
		return engine.Action{Kind: engine.Finish}
	}
	return engine.Action{}
}

func (c *forcedCall) Forecast(*engine.Sequence) engine.Forecast {
	p := engine.Prediction{Decode: c.out - c.made}
	return engine.Forecast{Predicted: p, Truth: p, HasTruth: true}
}

// finishObserver tells a forced call when the engine finished it.
type finishObserver struct{}

func (finishObserver) Observe(e *engine.Event) {
	if e.Kind != engine.EvFinished {
		return
	}
	if c, ok := e.Seq.Controller().(*forcedCall); ok && c.finished != nil {
		c.finished(e.Time)
	}
}

// zeros is a prompt of n tokens: the simulator reads only their number,
// and the engine copies a prompt before appending to it, so one buffer
// serves every prompt.
func (s *Simulator) zeros(n int) []int32 {
	s.mu.Lock()
	defer s.mu.Unlock()
	if n > len(s.zero) {
		s.zero = make([]int32, max(n, 2*len(s.zero)))
	}
	return s.zero[:n:n]
}
