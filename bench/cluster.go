package bench

import (
	"container/heap"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/pitstop-llm/pitstop/bench/report"
	"github.com/pitstop-llm/pitstop/cluster"
	"github.com/pitstop-llm/pitstop/engine"
)

// Replica is one engine replica of a cluster run: its own KV pool, host
// tier, prefix cache and policy instance.
type Replica struct {
	Profile  string // profile name, for the balancer's view
	Engine   engine.Config
	Executor engine.Executor
	Policy   engine.Policy
	Speed    cluster.Speed
	Weight   float64
}

// ClusterConfig is one (workload, policy, balancer, rate) run on several
// replicas sharing one virtual clock. Run's Engine, Executor, Policy and
// Clock are unused: each replica has its own.
type ClusterConfig struct {
	Run      RunConfig
	Replicas []Replica
	Balancer cluster.Balancer
}

// clusterRun steps the replicas' engines on one timeline: the driver's own
// timers (arrivals, think times) and each engine's next event are handled in
// time order, so a balancer placing a call sees every replica as it stands
// at that instant.
type clusterRun struct {
	d      *driver
	reps   []*replicaRun
	bal    cluster.Balancer
	state  cluster.State
	timers clusterTimers
	now    time.Duration

	promptTokens, cachedTokens int64
	// hashes is the prompt being placed as prefix-cache keys, per block
	// size: hashed once for all replicas of that block size.
	hashes map[int][]uint64
}

func (cl *clusterRun) prefixHashes(prompt []int32, bs int) []uint64 {
	h, ok := cl.hashes[bs]
	if !ok {
		if cl.hashes == nil {
			cl.hashes = make(map[int][]uint64)
		}
		h = engine.PrefixHashes(prompt, bs)
		cl.hashes[bs] = h
	}
	return h
}

type replicaRun struct {
	eng     *engine.Engine
	next    time.Duration
	hasNext bool
	busy    time.Duration // Σ iteration durations
	// load is the engine's Load as of loadAt: it only changes when the
	// engine runs, so calls placed between two of its iterations share it.
	load   engine.Load
	loadAt loadKey
	// pending are calls placed here that the engine has not taken yet (it
	// takes them at its next iteration boundary): the balancer counts them
	// as waiting, so that calls placed at one instant do not all see the
	// same least-loaded replica.
	pendingCalls, pendingTokens, pendingPrefill int
}

type loadKey struct {
	iter int64
	live int
	now  time.Duration
}

func (r *replicaRun) currentLoad() engine.Load {
	k := loadKey{r.eng.Iterations(), r.eng.Live(), r.eng.Now()}
	if k != r.loadAt || k.iter == 0 {
		r.load, r.loadAt = r.eng.Load(), k
	}
	return r.load
}

// replicaObserver routes one engine's events to the driver.
type replicaObserver struct {
	cl *clusterRun
	r  int
}

func (o replicaObserver) Observe(e *engine.Event) {
	o.cl.now = e.Time
	rep := o.cl.reps[o.r]
	switch e.Kind {
	case engine.EvIteration:
		rep.busy += e.Iter.Duration
	case engine.EvPaused, engine.EvFinished:
		o.cl.state.Replicas[o.r].Hold(e.Seq.Program(), e.Seq.NumTokens(), e.Time)
	}
	o.cl.d.observe(rep.eng, o.r, e)
}

// RunCluster replays the workload on the replicas and returns the run's
// summary with the cluster's fields (replicas, balancer, per-replica
// utilisation, prefix-hit rate). It fails if any replica's block invariants
// break or blocks leak.
func RunCluster(ctx context.Context, cfg ClusterConfig) (report.Run, error) {
	if len(cfg.Replicas) == 0 {
		return report.Run{}, errors.New("bench: a cluster run needs at least one replica")
	}
	if cfg.Balancer == nil {
		return report.Run{}, errors.New("bench: a cluster run needs a balancer")
	}
	rc := cfg.Run
	rc.Clock = engine.NewVirtualClock() // the driver's notion of virtual time
	d := newDriver(rc)
	cl := &clusterRun{d: d, bal: cfg.Balancer, state: cluster.State{Replicas: make([]cluster.Replica, len(cfg.Replicas))}}
	d.cl = cl
	for i, r := range cfg.Replicas {
		eng, err := engine.New(r.Engine, engine.NewVirtualClock(), r.Executor, r.Policy, replicaObserver{cl, i})
		if err != nil {
			return report.Run{}, fmt.Errorf("replica %d: %w", i, err)
		}
		cl.reps = append(cl.reps, &replicaRun{eng: eng})
		cl.state.Replicas[i] = cluster.Replica{
			Name: fmt.Sprintf("r%d", i), Profile: r.Profile, Weight: r.Weight, Speed: r.Speed,
			TotalBlocks: r.Engine.NumBlocks, BlockSize: r.Engine.BlockSize, MaxSeqs: r.Engine.MaxSeqs,
		}
	}
	arrivals, err := d.arrivals()
	if err != nil {
		return report.Run{}, err
	}
	if len(arrivals) == 0 {
		return report.Run{}, fmt.Errorf("no program of %s arrives within %g s at rate %g: lengthen the duration", rc.Workload.Name, rc.Duration, rc.Rate)
	}
	for i, a := range arrivals {
		pr := d.newProgramRun(fmt.Sprintf("p%d", i), a.prog, a.at)
		cl.at(a.at, func() { d.startProgram(pr) })
	}
	d.programsLeft = len(arrivals)
	if rc.StopAfter > 0 {
		cl.at(rc.StopAfter, func() {
			if d.programsLeft > 0 {
				d.stopped = true
				d.col.Stop(cl.now.Seconds())
			}
		})
	}
	if err := cl.run(ctx); err != nil {
		return report.Run{}, err
	}
	leaked := 0
	for i, r := range cl.reps {
		if err := r.eng.Check(); err != nil {
			return report.Run{}, fmt.Errorf("replica %d: block invariants broken after the run: %w", i, err)
		}
		leaked += d.leaked(r.eng)
	}
	run := d.summary(leaked)
	run.Replicas = len(cl.reps)
	run.Balancer = cfg.Balancer.Name()
	if cl.promptTokens > 0 {
		run.PrefixHitRate = float64(cl.cachedTokens) / float64(cl.promptTokens)
	}
	for _, r := range cl.reps {
		u := 0.0
		if run.VirtualS > 0 {
			u = r.busy.Seconds() / run.VirtualS
		}
		run.ReplicaUtil = append(run.ReplicaUtil, u)
	}
	return run, nil
}

// run handles events in time order until none is left (or the run stops).
func (cl *clusterRun) run(ctx context.Context) error {
	for n := 0; ; n++ {
		if n%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		if cl.d.stopped {
			return nil
		}
		bi := -1
		for i, r := range cl.reps {
			if r.hasNext && (bi < 0 || r.next < cl.reps[bi].next) {
				bi = i
			}
		}
		if t, ok := cl.timers.next(); ok && (bi < 0 || t <= cl.reps[bi].next) {
			cl.now = t
			cl.timers.pop()()
			continue
		}
		if bi < 0 {
			return nil
		}
		r := cl.reps[bi]
		r.eng.AdvanceTo(r.next)
		cl.now = r.next
		next, ok, err := r.eng.StepOnce()
		if err != nil {
			return fmt.Errorf("replica %d: %w", bi, err)
		}
		r.next, r.hasNext = next, ok
	}
}

// at runs fn at instant t on the shared timeline.
func (cl *clusterRun) at(t time.Duration, fn func()) { cl.timers.add(t, fn) }

// place asks the balancer where call i of a program goes and submits it
// there at the replica's next iteration boundary.
func (cl *clusterRun) place(pr *programRun, i int, prompt []int32) {
	cl.state.Now = cl.now
	for j, r := range cl.reps {
		l := r.currentLoad()
		s := &cl.state.Replicas[j]
		s.WaitingCalls, s.RunningCalls, s.PausedCalls = l.Waiting+r.pendingCalls, l.Running, l.Paused
		s.WaitingTokens, s.RunningTokens = l.WaitingTokens+r.pendingTokens, l.RunningTokens
		s.WaitingPrefill, s.RunningContext, s.FreeBlocks = l.WaitingPrefill+r.pendingPrefill, l.RunningContext, l.FreeBlocks
		bs := r.eng.BlockSize()
		s.CachedPrefix = r.eng.CachedBlocks(cl.prefixHashes(prompt, bs)) * bs
	}
	clear(cl.hashes)
	call := cl.predict(pr, i, len(prompt))
	idx := cl.bal.Pick(&call, &cl.state)
	if idx < 0 || idx >= len(cl.reps) {
		cl.reps[0].eng.Stop(fmt.Errorf("balancer %s picked replica %d of %d", cl.bal.Name(), idx, len(cl.reps)))
		idx = 0
	}
	cl.promptTokens += int64(len(prompt))
	cl.cachedTokens += int64(cl.state.Replicas[idx].CachedPrefix)
	r := cl.reps[idx]
	miss := len(prompt) - cl.state.Replicas[idx].CachedPrefix
	work := miss + call.PredictedDecode
	r.pendingCalls, r.pendingTokens, r.pendingPrefill = r.pendingCalls+1, r.pendingTokens+work, r.pendingPrefill+miss
	// Due at the placing instant: a busy engine takes it at its next
	// iteration boundary, in time order with its own timers.
	r.eng.At(cl.now, func() {
		r.pendingCalls, r.pendingTokens, r.pendingPrefill = r.pendingCalls-1, r.pendingTokens-work, r.pendingPrefill-miss
		cl.d.submitTo(r.eng, idx, pr, i, prompt)
	})
	if t := max(cl.now, r.eng.Now()); !r.hasNext || t < r.next {
		r.next, r.hasNext = t, true
	}
}

// predict is the call as the balancer knows it. With the run's predictors
// (bench --predictor serve, onnx, history) that is what a router in front of
// pitstop serve would know: the length model's forecast of the tokens the
// call's first segment generates, from its prompt length and the program's
// history; no tool time (the tool is known only once the call makes it) and
// no program remainder (a server does not see the program's future calls).
// With the oracle (--predictor oracle) it is the truth plus the run's
// --prediction-error noise.
func (cl *clusterRun) predict(pr *programRun, i, promptTokens int) cluster.Call {
	c := &pr.prog.Calls[i]
	call := cluster.Call{Program: pr.id, Thread: c.Thread, PromptTokens: promptTokens}
	if p := cl.d.cfg.Predictors; p != nil {
		if p.Length != nil {
			n, _ := p.Length.PredictLength(segmentInput(&scriptCall{prog: pr, call: c}, promptTokens))
			call.PredictedDecode = max(n, 1)
		}
		return call
	}
	d := cl.d
	if len(c.Segments) > 0 {
		call.PredictedDecode = int(d.noisy(float64(max(c.Segments[0].Decode, 1))))
		for _, s := range c.Segments[:len(c.Segments)-1] {
			call.PredictedToolS += d.noisy(s.ToolTime)
		}
	}
	remaining := 0
	for j := range pr.prog.Calls[i+1:] {
		for _, s := range pr.prog.Calls[i+1+j].Segments {
			remaining += max(s.Decode, 1)
		}
	}
	call.ProgramRemaining = int(d.noisy(float64(remaining)))
	return call
}

// programDone tells the state and the balancer that a program ended.
func (cl *clusterRun) programDone(program string) {
	cl.state.ProgramDone(program)
	if e, ok := cl.bal.(cluster.ProgramEnder); ok {
		e.ProgramDone(program)
	}
}

// clusterTimers is the shared timeline's timer queue; seq keeps FIFO order
// among equal instants.
type clusterTimers struct {
	h   clusterTimerHeap
	seq uint64
}

type clusterTimer struct {
	at  time.Duration
	seq uint64
	fn  func()
}

type clusterTimerHeap []clusterTimer

func (h clusterTimerHeap) Len() int { return len(h) }
func (h clusterTimerHeap) Less(i, j int) bool {
	if h[i].at != h[j].at {
		return h[i].at < h[j].at
	}
	return h[i].seq < h[j].seq
}
func (h clusterTimerHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *clusterTimerHeap) Push(x any)   { *h = append(*h, x.(clusterTimer)) }
func (h *clusterTimerHeap) Pop() any {
	old := *h
	t := old[len(old)-1]
	*h = old[:len(old)-1]
	return t
}

func (t *clusterTimers) add(at time.Duration, fn func()) {
	t.seq++
	heap.Push(&t.h, clusterTimer{at: at, seq: t.seq, fn: fn})
}

func (t *clusterTimers) next() (time.Duration, bool) {
	if len(t.h) == 0 {
		return 0, false
	}
	return t.h[0].at, true
}

func (t *clusterTimers) pop() func() { return heap.Pop(&t.h).(clusterTimer).fn }
