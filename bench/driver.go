// Package bench replays agent workloads on the engine and measures them: it
// turns workload programs into engine requests, generates arrivals, runs the
// tools of a trace (as timers on the engine's clock) and feeds the metrics
// collector.
package bench

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/pitstop-llm/pitstop/bench/report"
	"github.com/pitstop-llm/pitstop/bench/workload"
	"github.com/pitstop-llm/pitstop/engine"
	"github.com/pitstop-llm/pitstop/handling"
	"github.com/pitstop-llm/pitstop/predictor"
)

// RunConfig is one (workload, policy, rate) run.
type RunConfig struct {
	Workload *workload.Workload
	Engine   engine.Config
	Executor engine.Executor
	Clock    engine.Clock // nil: virtual
	Policy   engine.Policy
	Name     string  // policy name for the report
	Rate     float64 // programs per second (timestamped workloads: the trace is rescaled to this mean rate; 0 keeps its own)
	Duration float64 // arrival window in seconds
	Seed     int64
	// PredictionError is p of the oracle-with-noise predictor: predictions
	// are the truth plus N(0, p·truth).
	PredictionError float64
	// Predictors, when set, replace the oracle-with-noise source.
	Predictors *Predictors
	// Progress, when set, is advanced by one per finished program.
	Progress *report.Progress
	// CheckEvery runs the block invariant check every N iterations (0: only at the end).
	CheckEvery int
	// SLOTTFT and SLOTPOT are the SLOs in seconds that the run's SLO
	// attainment is measured against (report.Collector.SetSLO); 0: none.
	SLOTTFT, SLOTPOT float64
	// StopAfter, when > 0, ends the run at this engine time if programs are
	// still unfinished: a collapsed run (a policy thrashing past its
	// sustainable load) would otherwise take hours to drain. The report
	// marks it stopped (report.Run.StoppedAtS).
	StopAfter time.Duration
	// ProgramDone, when set, is told of every finished program (its arrival
	// and finish on the engine clock); returning true ends the run there,
	// marked stopped, if programs are still unfinished. The sustained-rate
	// search (sustained.go) uses it to judge a run and to end one whose
	// verdict is already known.
	ProgramDone func(p *workload.Program, arrival, finish time.Duration) (stop bool)
	// ClassOf, when set, is the engine.Request.Class of a program's calls
	// (a tenant of a multi-tenant run); nil: every program in class "".
	ClassOf func(p *workload.Program) string
}

// driver runs programs on an engine.
type driver struct {
	cfg    RunConfig
	eng    *engine.Engine
	col    *report.Collector
	noise  *rand.Rand
	tokens tokenSource
	calls  map[callKey]*scriptCall
	// cl, when set, is the set of replicas (bench --replicas); eng is then
	// nil and calls go where its balancer sends them.
	cl     *clusterRun
	iters  int
	failed int
	// programsLeft counts arrivals not yet finished; on a real clock the
	// run ends when it reaches zero (a virtual clock ends by going idle).
	programsLeft int
	done         context.CancelFunc
	stopped      bool // StopAfter ended the run
	// hostWait holds, for a call back from its tool with its KV on the
	// host, when it came back: its next token ends its swap-in wait.
	hostWait map[callKey]float64
}

// programRun is one arrival of a workload program.
type programRun struct {
	id       string
	prog     *workload.Program
	class    string // engine.Request.Class of its calls (RunConfig.ClassOf)
	arrival  time.Duration
	final    map[string][]int32 // finished calls' final contexts (for ContinueParent)
	waiting  map[string]int     // unfinished parents per call id
	left     int
	tokens   int
	children map[string][]int       // call id → indices of calls that list it as a parent
	history  predictor.History      // finished segments, for the length predictor
	blend    predictor.ProgramBlend // the length predictor's errors on them (as serve keeps)
	tools    []string               // the tools its requests offer (offered)
	pos      map[int]string         // call index → its position (report.PosFirst, PosBurst, PosLater), set when released
}

// newDriver is a driver of cfg's workload with an empty collector that
// measures cfg's SLO.
func newDriver(cfg RunConfig) *driver {
	d := &driver{
		cfg:   cfg,
		col:   report.NewCollector(),
		noise: newNoise(cfg.Seed),
		calls: make(map[callKey]*scriptCall),
	}
	d.col.SetSLO(cfg.SLOTTFT, cfg.SLOTPOT)
	return d
}

// Run replays the workload and returns the run's summary. It fails if the
// block invariants break or blocks leak.
func Run(ctx context.Context, cfg RunConfig) (report.Run, error) {
	if cfg.Clock == nil {
		cfg.Clock = engine.NewVirtualClock()
	}
	d := newDriver(cfg)
	eng, err := engine.New(cfg.Engine, cfg.Clock, cfg.Executor, cfg.Policy, d)
	if err != nil {
		return report.Run{}, err
	}
	d.eng = eng
	arrivals, err := d.arrivals()
	if err != nil {
		return report.Run{}, err
	}
	for i, a := range arrivals {
		pr := d.newProgramRun(fmt.Sprintf("p%d", i), a.prog, a.at)
		eng.At(a.at, func() { d.startProgram(pr) })
	}
	if len(arrivals) == 0 {
		return report.Run{}, fmt.Errorf("no program of %s arrives within %g s at rate %g: lengthen the duration", cfg.Workload.Name, cfg.Duration, cfg.Rate)
	}
	d.programsLeft = len(arrivals)
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	d.done = cancel
	if cfg.StopAfter > 0 {
		eng.At(cfg.StopAfter, func() {
			if d.programsLeft > 0 {
				d.stopped = true
				d.col.Stop(eng.Now().Seconds())
				cancel()
			}
		})
	}
	if err := eng.Run(runCtx); err != nil && !((d.programsLeft == 0 || d.stopped) && errors.Is(err, context.Canceled) && ctx.Err() == nil) {
		return report.Run{}, err
	}
	if err := eng.Check(); err != nil {
		return report.Run{}, fmt.Errorf("block invariants broken after the run: %w", err)
	}
	return d.summary(d.leaked(eng)), nil
}

// leaked is the blocks eng leaked, and those its unfinished calls still
// hold unless the run was stopped.
func (d *driver) leaked(eng *engine.Engine) int {
	n := eng.Leaked()
	if eng.Live() > 0 && !d.stopped {
		n += eng.Blocks().UsedBlocks() // anything still held by unfinished calls counts
	}
	return n
}

// summary is the run's report, leaked blocks counted.
func (d *driver) summary(leaked int) report.Run {
	d.col.SetLeakedBlocks(leaked)
	run := d.col.Summarize(d.cfg.Name, d.cfg.Rate)
	run.Seed = d.cfg.Seed
	run.Predictor = d.cfg.Predictors.stats()
	run.DurationS = d.cfg.Duration
	return run
}

func newNoise(seed int64) *rand.Rand { return rand.New(rand.NewPCG(uint64(seed), 0x9e3779b9)) }

type arrival struct {
	at   time.Duration
	prog *workload.Program
}

// arrivals samples programs: Poisson at Rate with replacement, or the trace's
// own timestamps (rescaled to Rate when Rate > 0), over the Duration window.
func (d *driver) arrivals() ([]arrival, error) {
	w := d.cfg.Workload
	if len(w.Programs) == 0 {
		return nil, fmt.Errorf("workload %s has no programs", w.Name)
	}
	if d.cfg.Duration <= 0 {
		return nil, fmt.Errorf("duration must be positive, got %g s", d.cfg.Duration)
	}
	rng := rand.New(rand.NewPCG(uint64(d.cfg.Seed), 0xa11))
	var out []arrival
	if w.Timestamped {
		first, last := w.Programs[0].Arrival, w.Programs[len(w.Programs)-1].Arrival
		scale := 1.0
		if d.cfg.Rate > 0 && last > first {
			scale = (float64(len(w.Programs)) / (last - first)) / d.cfg.Rate
		}
		for i := range w.Programs {
			t := (w.Programs[i].Arrival - first) * scale
			if t >= d.cfg.Duration {
				break
			}
			out = append(out, arrival{at: seconds(t), prog: &w.Programs[i]})
		}
		return out, nil
	}
	if d.cfg.Rate <= 0 {
		return nil, fmt.Errorf("rate must be positive, got %g", d.cfg.Rate)
	}
	for t := rng.ExpFloat64() / d.cfg.Rate; t < d.cfg.Duration; t += rng.ExpFloat64() / d.cfg.Rate {
		out = append(out, arrival{at: seconds(t), prog: &w.Programs[rng.IntN(len(w.Programs))]})
	}
	return out, nil
}

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

func (d *driver) newProgramRun(id string, p *workload.Program, at time.Duration) *programRun {
	pr := &programRun{id: id, prog: p, arrival: at, left: len(p.Calls),
		final: map[string][]int32{}, waiting: map[string]int{}, children: map[string][]int{}, pos: map[int]string{}}
	for i := range p.Calls {
		c := &p.Calls[i]
		pr.waiting[c.ID] = len(c.Parents)
		for _, par := range c.Parents {
			pr.children[par] = append(pr.children[par], i)
		}
	}
	return pr
}

func (d *driver) startProgram(pr *programRun) {
	if d.cfg.ClassOf != nil {
		pr.class = d.cfg.ClassOf(pr.prog)
		d.col.SetClass(pr.id, pr.class)
	}
	d.col.ProgramArrived(pr.id, pr.arrival.Seconds())
	for i := range pr.prog.Calls {
		if len(pr.prog.Calls[i].Parents) == 0 {
			pr.pos[i] = report.PosFirst
			d.scheduleCall(pr, i)
		}
	}
}

// callKey names a call across replicas (each engine numbers its own).
type callKey struct {
	replica int
	id      engine.SeqID
}

// now is the time of the event being handled.
func (d *driver) now() time.Duration {
	if d.cl != nil {
		return d.cl.now
	}
	return d.eng.Now()
}

// at runs fn at instant t: on the engine, or on the replicas' shared timeline.
func (d *driver) at(t time.Duration, fn func()) {
	if d.cl != nil {
		d.cl.at(t, fn)
		return
	}
	d.eng.At(t, fn)
}

// scheduleCall submits a call after its think time.
func (d *driver) scheduleCall(pr *programRun, i int) {
	c := &pr.prog.Calls[i]
	d.at(d.now()+seconds(c.ThinkTime), func() { d.submit(pr, i) })
}

func (d *driver) submit(pr *programRun, i int) {
	c := &pr.prog.Calls[i]
	var prompt []int32
	if c.ContinueParent && len(c.Parents) > 0 {
		parent := pr.final[c.Parents[0]]
		prompt = make([]int32, len(parent), len(parent)+c.PromptFromPrefix()+c.NewTokens)
		copy(prompt, parent)
	}
	for _, id := range c.SharedPrefix {
		prompt = sharedChunk(prompt, id, c.SharedPrefixBlock)
	}
	prompt = d.freshTokens(prompt, c.NewTokens)
	if d.cl != nil {
		d.cl.place(pr, i, prompt)
		return
	}
	d.submitTo(d.eng, 0, pr, i, prompt)
}

// submitTo submits a call to one engine (replica r) now.
func (d *driver) submitTo(eng *engine.Engine, r int, pr *programRun, i int, prompt []int32) {
	c := &pr.prog.Calls[i]
	sc := &scriptCall{d: d, prog: pr, call: c, replica: r}
	name := pr.id + "/" + c.ID
	d.col.SetPosition(name, pr.pos[i])
	thread := c.Thread
	if thread == "" {
		thread = "main"
	}
	s, err := eng.SubmitNow(engine.Request{
		Name: name, Program: pr.id, Thread: thread, Parents: c.Parents,
		Prompt: prompt, Controller: sc, Class: pr.class,
	})
	if err != nil {
		// The call can never run (its prompt exceeds the device): count it
		// as arrived and not completed, and let the program go on.
		d.failed++
		d.col.CallArrived(name, pr.id, eng.Now().Seconds())
		d.callDone(pr, c, prompt)
		return
	}
	sc.seq = s
	d.calls[callKey{r, s.ID()}] = sc
}

// callDone records a finished call and starts the children it unblocks.
func (d *driver) callDone(pr *programRun, c *workload.Call, final []int32) {
	pr.left--
	if len(pr.children[c.ID]) > 0 {
		pr.final[c.ID] = final
	}
	var ready []int
	for _, ci := range pr.children[c.ID] {
		child := &pr.prog.Calls[ci]
		pr.waiting[child.ID]--
		if pr.waiting[child.ID] == 0 {
			ready = append(ready, ci)
		}
	}
	for _, ci := range ready {
		pr.pos[ci] = report.PosLater
		if len(ready) > 1 {
			pr.pos[ci] = report.PosBurst // released with its siblings: a burst of parallel branches
		}
		d.scheduleCall(pr, ci)
	}
	if pr.left == 0 {
		if d.cl != nil {
			d.cl.programDone(pr.id)
		}
		now := d.now().Seconds()
		d.col.ProgramFinished(pr.id, now, now-pr.arrival.Seconds(), pr.tokens)
		if d.cfg.Progress != nil {
			d.cfg.Progress.Add(1)
		}
		pr.final = nil
		if d.programsLeft--; d.programsLeft == 0 && d.cl == nil && !d.cfg.Clock.Virtual() {
			d.done()
		}
		if f := d.cfg.ProgramDone; f != nil && f(pr.prog, pr.arrival, d.now()) && d.programsLeft > 0 && !d.stopped {
			d.stopped = true
			d.col.Stop(now)
			if d.done != nil { // a cluster run has no context to cancel: its loop sees stopped
				d.done()
			}
		}
	}
}

// bookDecision prices the handling chosen at a tool call (report.DecisionCost):
// InferCept's waste with the predicted tool time, with the true one, and the
// least waste with the true one. C is the context at the tool call (all but
// the sampled tool-call token), whatever the handling did to it since.
func (d *driver) bookDecision(eng *engine.Engine, e *engine.Event, truth float64) {
	if !e.Handling.Valid() {
		return
	}
	v := eng.View()
	sit := v.Situation(e.Seq)
	sit.Context = max(e.Seq.NumTokens()-1, 0)
	sit.ToolRemaining = max(e.Seq.Tool().Expected, 0)
	expected := handling.Waste(e.Handling, sit, v.Cost)
	sit.ToolRemaining = truth
	_, w := handling.Choose(sit, v.Cost)
	d.col.AddDecisionCost(e.Handling.String(), expected, w[e.Handling], min(w[0], w[1], w[2]))
}

// Observe feeds engine events to the collector and runs the trace's tools.
func (d *driver) Observe(e *engine.Event) { d.observe(d.eng, 0, e) }

// observe handles an event of replica r's engine.
func (d *driver) observe(eng *engine.Engine, r int, e *engine.Event) {
	t := e.Time.Seconds()
	switch e.Kind {
	case engine.EvArrived:
		d.col.CallArrived(e.Seq.Name(), e.Seq.Program(), t)
	case engine.EvToken:
		if e.Seq.Generated() == 1 {
			d.col.FirstToken(e.Seq.Name(), t)
			d.col.AddPrompt(len(e.Seq.Tokens()) - 1)
		}
		d.col.TokenGenerated(e.Seq.Name(), t)
		if len(d.hostWait) > 0 {
			if t0, ok := d.hostWait[callKey{r, e.Seq.ID()}]; ok {
				delete(d.hostWait, callKey{r, e.Seq.ID()})
				d.col.AddSwapInWait(t - t0)
			}
		}
	case engine.EvPaused:
		d.col.CallPaused(e.Seq.Name(), t)
		d.col.AddHandling(e.Handling.String())
		sc := d.calls[callKey{r, e.Seq.ID()}]
		seg := sc.call.Segments[sc.seg]
		d.bookDecision(eng, e, seg.ToolTime)
		d.cfg.Predictors.learnSegment(sc, e.Seq)
		sc.prog.history = sc.prog.history.Observe(sc.decoded, seg.Tool)
		id := e.Seq.ID()
		eng.At(e.Time+seconds(seg.ToolTime), func() {
			if p := d.cfg.Predictors; p != nil {
				p.learnTool(seg.Tool, seg.ToolTime)
			}
			sc.resumed()
			ret := d.freshTokens(nil, seg.ToolReturn)
			// Input the call takes in after its first token: the tool's
			// return and the token sampled before the pause (not yet in KV).
			d.col.AddPrompt(len(ret) + 1)
			if err := eng.Resume(id, ret); err != nil {
				eng.Stop(err)
			}
		})
	case engine.EvResumed:
		d.col.CallResumed(e.Seq.Name(), t)
		if e.Seq.Place() == engine.OnHost {
			if d.hostWait == nil {
				d.hostWait = map[callKey]float64{}
			}
			d.hostWait[callKey{r, e.Seq.ID()}] = t
		}
	case engine.EvPreempted:
		d.col.AddPreemption()
	case engine.EvFinished:
		sc := d.calls[callKey{r, e.Seq.ID()}]
		delete(d.calls, callKey{r, e.Seq.ID()})
		delete(d.hostWait, callKey{r, e.Seq.ID()})
		if e.Err != nil {
			d.failed++
		} else {
			d.col.CallFinished(e.Seq.Name(), t, e.Seq.Generated())
		}
		sc.prog.tokens += e.Seq.Generated()
		d.cfg.Predictors.learnSegment(sc, e.Seq)
		sc.prog.history = sc.prog.history.Observe(sc.decoded, "")
		d.callDone(sc.prog, sc.call, slices.Clip(e.Seq.Tokens()))
	case engine.EvIteration:
		it := e.Iter
		d.col.Iteration(t, it.Duration.Seconds(), it.UsedBlocks, it.TotalBlocks)
		d.col.AddSwap(it.SwapOutBytes, it.SwapInBytes)
		d.col.AddPrefill(it.PrefillTokens)
		by := it.RecomputeBy
		d.col.AddRecompute(it.RecomputeTokens, by[engine.LostAtTool], by[engine.LostPreempted], by[engine.LostFromHost])
		d.hostTier(eng, it)
		d.iters++
		if d.cfg.CheckEvery > 0 && d.iters%d.cfg.CheckEvery == 0 {
			if err := eng.Check(); err != nil {
				eng.Stop(fmt.Errorf("iteration %d: %w", d.iters, err))
			}
		}
	}
}

// hostTier feeds one iteration's host-tier figures to the collector.
func (d *driver) hostTier(eng *engine.Engine, it *engine.IterationStats) {
	v := eng.View()
	d.col.AddHostTier(it.Duration.Seconds(), v.HostBlocks, it.HostUsed, it.HostRunnable)
	for site, n := range it.RefusedSwaps {
		if n > 0 {
			d.col.AddRefusedSwaps(engine.SwapSite(site).String(), n, int64(it.RefusedSwapBlocks[site])*int64(v.BlockSize))
		}
	}
}
