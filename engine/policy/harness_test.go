package policy

import (
	"cmp"
	"context"
	"slices"
	"testing"
	"time"

	"github.com/pitstop-llm/pitstop/engine"
	"github.com/pitstop-llm/pitstop/handling"
)

// iterTime is the fake executor's iteration time.
const iterTime = 10 * time.Millisecond

// fakeExec takes iterTime per iteration and samples token 7.
type fakeExec struct{}

func (fakeExec) Step(b *engine.Batch) (time.Duration, error) {
	for i := range b.Items {
		b.Items[i].Token = 7
	}
	return iterTime, nil
}

// seg is one segment of a scripted call: decode tokens, then (all but the
// last segment) a tool of tool seconds returning ret tokens.
type seg struct {
	decode int
	tool   float64
	ret    int
}

// ctl drives a call through its segments; truth is what happens, pred what
// its forecast predicts (nil: the truth).
type ctl struct {
	truth, pred []seg
	cur, n      int
}

func (c *ctl) Next(*engine.Sequence, int32) engine.Action {
	c.n++
	tok := int32(1000 + c.n)
	if c.n < max(c.truth[c.cur].decode, 1) {
		return engine.Action{Token: tok}
	}
	if c.cur == len(c.truth)-1 {
		return engine.Action{Token: tok, Kind: engine.Finish}
	}
	return engine.Action{Token: tok, Kind: engine.Pause, Tool: engine.ToolCall{Name: "t", Expected: c.predSegs()[c.cur].tool}}
}

func (c *ctl) predSegs() []seg {
	if c.pred != nil {
		return c.pred
	}
	return c.truth
}

func forecastOf(segs []seg, cur, n int) engine.Prediction {
	p := engine.Prediction{Decode: max(segs[cur].decode, 1) - n}
	if cur < len(segs)-1 {
		p.HasTool, p.ToolTime, p.ToolReturn = true, segs[cur].tool, segs[cur].ret
	}
	for _, s := range segs[cur+1:] {
		p.After += max(s.decode, 1)
	}
	return p
}

func (c *ctl) Forecast(*engine.Sequence) engine.Forecast {
	return engine.Forecast{Predicted: forecastOf(c.predSegs(), c.cur, c.n), Truth: forecastOf(c.truth, c.cur, c.n), HasTruth: true}
}

// testCost is the handling cost model of the test engine (10 ms iterations).
func testCost() handling.CostModel {
	return handling.CostModel{IterBase: 0.0099, PerToken: 0.000001, TokenBudget: 32, BlockTokens: 4, SwapPerTransfer: 0.002, KVBytesPerToken: 1000, SwapBandwidth: 1e9}
}

func testConfig() engine.Config {
	return engine.Config{NumBlocks: 512, BlockSize: 4, HostBlocks: 512, MaxBatchedTokens: 32, MaxSeqs: 8, Cost: testCost()}
}

// harness runs a policy on a small engine with a virtual clock; tools return
// after their true duration with ret tokens.
type harness struct {
	t      testing.TB
	e      *engine.Engine
	p      engine.Policy
	ctls   map[engine.SeqID]*ctl
	seqs   map[string]*engine.Sequence
	paused map[string][]handling.Kind // handling at each pause
	later  map[string][]handling.Kind // handling changes while paused (EvHandled)
	done   map[string]time.Duration
	stop   func(*engine.Event) bool
	cancel context.CancelFunc
	onDone func(name string)
}

func newHarness(t testing.TB, p engine.Policy, cfg engine.Config) *harness {
	h := &harness{t: t, p: p, ctls: map[engine.SeqID]*ctl{}, seqs: map[string]*engine.Sequence{},
		paused: map[string][]handling.Kind{}, later: map[string][]handling.Kind{}, done: map[string]time.Duration{}}
	e, err := engine.New(cfg, engine.NewVirtualClock(), fakeExec{}, p, h)
	if err != nil {
		t.Fatal(err)
	}
	h.e = e
	return h
}

// submit adds a call now: prompt tokens, its true segments and (optionally)
// predicted ones.
func (h *harness) submit(name, program, thread string, prompt int, truth, pred []seg) *engine.Sequence {
	h.t.Helper()
	return h.submitIn("", name, program, thread, prompt, truth, pred)
}

// submitIn is submit for a call of the class (engine.Request.Class).
func (h *harness) submitIn(class, name, program, thread string, prompt int, truth, pred []seg) *engine.Sequence {
	h.t.Helper()
	toks := make([]int32, prompt)
	for i := range toks {
		toks[i] = int32(len(h.seqs)*100000 + i + 1)
	}
	c := &ctl{truth: truth, pred: pred}
	s, err := h.e.SubmitNow(engine.Request{Name: name, Program: program, Thread: thread, Prompt: toks, Controller: c, Class: class})
	if err != nil {
		h.t.Fatal(err)
	}
	h.ctls[s.ID()] = c
	h.seqs[name] = s
	return s
}

func (h *harness) Observe(ev *engine.Event) {
	switch ev.Kind {
	case engine.EvPaused:
		name := ev.Seq.Name()
		h.paused[name] = append(h.paused[name], ev.Handling)
		c := h.ctls[ev.Seq.ID()]
		id := ev.Seq.ID()
		d := time.Duration(c.truth[c.cur].tool * float64(time.Second))
		ret := c.truth[c.cur].ret
		h.e.At(ev.Time+d, func() {
			c.cur++
			c.n = 0
			if err := h.e.Resume(id, make([]int32, ret)); err != nil {
				h.e.Stop(err)
			}
		})
	case engine.EvHandled:
		h.later[ev.Seq.Name()] = append(h.later[ev.Seq.Name()], ev.Handling)
	case engine.EvFinished:
		h.done[ev.Seq.Name()] = ev.Time
		if h.onDone != nil {
			name := ev.Seq.Name()
			h.e.At(ev.Time, func() { h.onDone(name) })
		}
	case engine.EvIteration:
		if err := h.e.Check(); err != nil {
			h.e.Stop(err)
		}
	}
	if h.stop != nil && h.stop(ev) && h.cancel != nil {
		h.cancel()
	}
}

// run drives the engine until stop reports true (nil: until it drains).
func (h *harness) run(stop func(*engine.Event) bool) {
	h.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	h.stop, h.cancel = stop, cancel
	err := h.e.Run(ctx)
	h.stop, h.cancel = nil, nil
	if err != nil && ctx.Err() == nil {
		h.t.Fatal(err)
	}
	if stop == nil {
		if n := h.e.Leaked(); n != 0 {
			h.t.Fatalf("%d blocks leaked", n)
		}
		if h.e.Live() != 0 {
			h.t.Fatalf("%d calls unfinished", h.e.Live())
		}
	}
}

// view is a View of the harness's engine at time now and iteration it.
func (h *harness) view(now time.Duration, it int64) *engine.View {
	cfg := testConfig()
	return &engine.View{Now: now, Iteration: it, BlockSize: cfg.BlockSize, TotalBlocks: cfg.NumBlocks,
		FreeBlocks: h.e.Blocks().FreeBlocks(), HostBlocks: cfg.HostBlocks, HostFree: cfg.HostBlocks - h.e.Host().Used(),
		Cost: cfg.Cost, Programs: h.e.Programs()}
}

// order ranks the named calls by p's priorities, as the run queue would.
func order(p engine.Policy, v *engine.View, seqs ...*engine.Sequence) []string {
	type ranked struct {
		pr engine.Priority
		s  *engine.Sequence
	}
	rs := make([]ranked, len(seqs))
	for i, s := range seqs {
		rs[i] = ranked{p.Priority(v, s), s}
	}
	slices.SortFunc(rs, func(a, b ranked) int {
		if c := cmp.Compare(a.pr.Class, b.pr.Class); c != 0 {
			return c
		}
		if c := cmp.Compare(a.pr.Key, b.pr.Key); c != 0 {
			return c
		}
		return cmp.Compare(a.s.ID(), b.s.ID())
	})
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.s.Name()
	}
	return out
}

// untilIteration stops a run after iteration n.
func untilIteration(n int) func(*engine.Event) bool {
	i := 0
	return func(ev *engine.Event) bool {
		if ev.Kind == engine.EvIteration {
			i++
		}
		return i >= n
	}
}

// submitCachedAndFresh runs a 40-token call "a" to its end, then submits
// "b", whose prompt is a's first 40 tokens (36 of them cached: nine whole
// blocks of 4), and "c", a fresh 40-token prompt; both decode 4 tokens.
func submitCachedAndFresh(t testing.TB, h *harness) (b, c *engine.Sequence) {
	t.Helper()
	a := h.submit("a", "pa", "main", 40, []seg{{decode: 4}}, nil)
	h.run(nil)
	prompt := append([]int32(nil), a.Tokens()[:40]...)
	b, err := h.e.SubmitNow(engine.Request{Name: "b", Program: "pb", Thread: "main", Prompt: prompt, Controller: &ctl{truth: []seg{{decode: 4}}}})
	if err != nil {
		t.Fatal(err)
	}
	return b, h.submit("c", "pc", "main", 40, []seg{{decode: 4}}, nil)
}
