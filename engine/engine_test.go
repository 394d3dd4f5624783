package engine

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/pitstop-llm/pitstop/handling"
)

// fixedExec takes 10 ms per iteration and samples token 7.
type fixedExec struct{ steps, swapOut, swapIn int }

func (x *fixedExec) Step(b *Batch) (time.Duration, error) {
	x.steps++
	x.swapOut += len(b.SwapOut)
	x.swapIn += len(b.SwapIn)
	for i := range b.Items {
		b.Items[i].Token = 7
	}
	return 10 * time.Millisecond, nil
}

// testPolicy is FCFS by arrival with a fixed handling.
type testPolicy struct {
	BasePolicy
	kind   handling.Kind
	traits Traits
	evict  handling.Kind
}

func (p testPolicy) Priority(_ *View, s *Sequence) Priority { return Priority{} }
func (p testPolicy) Handle(*View, *Sequence) handling.Kind  { return p.kind }
func (p testPolicy) Traits() Traits                         { return p.traits }
func (p testPolicy) Evict(*View, *Sequence) handling.Kind   { return p.evict }

// script generates decode[i] tokens per segment and pauses between them;
// each token it appends is the sampled one plus a counter, so runs under
// different handling must produce identical contexts.
type script struct {
	decode []int
	seg    int
	n      int
	next   int32
}

func (c *script) Next(_ *Sequence, sampled int32) Action {
	c.n++
	c.next++
	tok := sampled*1000 + c.next
	if c.n < c.decode[c.seg] {
		return Action{Token: tok}
	}
	if c.seg == len(c.decode)-1 {
		return Action{Token: tok, Kind: Finish}
	}
	return Action{Token: tok, Kind: Pause, Tool: ToolCall{Name: "t", Expected: 1}}
}

func (c *script) Forecast(*Sequence) Forecast { return Forecast{} }

// toolRunner resumes paused calls after a fixed tool time with 5 tokens.
type toolRunner struct {
	e      *Engine
	scr    map[SeqID]*script
	done   map[SeqID][]int32
	events map[EventKind]int
	check  func()
	watch  []func(*Engine, *Event)
}

func (r *toolRunner) Observe(ev *Event) {
	r.events[ev.Kind]++
	for _, w := range r.watch {
		w(r.e, ev)
	}
	switch ev.Kind {
	case EvPaused:
		id := ev.Seq.ID()
		r.e.At(ev.Time+500*time.Millisecond, func() {
			r.scr[id].seg++
			r.scr[id].n = 0
			if err := r.e.Resume(id, []int32{101, 102, 103, 104, 105}); err != nil {
				r.e.Stop(err)
			}
		})
	case EvFinished:
		r.done[ev.Seq.ID()] = slices.Clone(ev.Seq.Tokens())
	case EvIteration:
		if err := r.e.Check(); err != nil {
			r.e.Stop(err)
		}
	}
}

type runResult struct {
	done   map[SeqID][]int32
	events map[EventKind]int
	exec   *fixedExec
	end    time.Duration
}

// runEngine runs prompts to the end under p; watch sees every event after
// the tool runner.
func runEngine(t *testing.T, cfg Config, p Policy, prompts [][]int32, decode []int, watch ...func(*Engine, *Event)) runResult {
	t.Helper()
	x := &fixedExec{}
	r := &toolRunner{scr: map[SeqID]*script{}, done: map[SeqID][]int32{}, events: map[EventKind]int{}, watch: watch}
	clock := NewVirtualClock()
	e, err := New(cfg, clock, x, p, r)
	if err != nil {
		t.Fatal(err)
	}
	r.e = e
	for _, pr := range prompts {
		sc := &script{decode: decode}
		s, err := e.SubmitNow(Request{Prompt: pr, Controller: sc})
		if err != nil {
			t.Fatal(err)
		}
		r.scr[s.ID()] = sc
	}
	if err := e.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := e.Check(); err != nil {
		t.Fatal(err)
	}
	if n := e.Leaked(); n != 0 {
		t.Fatalf("%d blocks leaked", n)
	}
	if e.Blocks().UsedBlocks() != 0 || e.Host().Used() != 0 {
		t.Fatalf("after the run %d device blocks and %d host slots are held", e.Blocks().UsedBlocks(), e.Host().Used())
	}
	return runResult{done: r.done, events: r.events, exec: x, end: clock.Now()}
}

func prompts(n, length int) [][]int32 {
	out := make([][]int32, n)
	for i := range out {
		for j := range length {
			out[i] = append(out[i], int32(i*10000+j+1))
		}
	}
	return out
}

func baseConfig() Config {
	return Config{NumBlocks: 64, BlockSize: 4, HostBlocks: 64, MaxBatchedTokens: 32, MaxSeqs: 8}
}

func TestHandlingKeepsContextsIdentical(t *testing.T) {
	ps := prompts(3, 13)
	decode := []int{6, 4, 3}
	var want map[SeqID][]int32
	for _, k := range []handling.Kind{handling.Preserve, handling.Swap, handling.Discard} {
		res := runEngine(t, baseConfig(), testPolicy{kind: k}, ps, decode)
		if len(res.done) != 3 {
			t.Fatalf("%v: %d of 3 calls finished", k, len(res.done))
		}
		if res.events[EvPaused] != 6 || res.events[EvResumed] != 6 {
			t.Fatalf("%v: %d pauses and %d resumes, want 6 each", k, res.events[EvPaused], res.events[EvResumed])
		}
		for id, toks := range res.done {
			if len(toks) != 13+13+2*5 {
				t.Fatalf("%v: call %d has %d tokens, want %d", k, id, len(toks), 13+13+10)
			}
		}
		if k == handling.Swap && (res.exec.swapOut == 0 || res.exec.swapIn == 0) {
			t.Fatalf("swap handling moved %d out and %d in", res.exec.swapOut, res.exec.swapIn)
		}
		if k != handling.Swap && (res.exec.swapOut != 0 || res.exec.swapIn != 0) {
			t.Fatalf("%v handling moved blocks: %d out, %d in", k, res.exec.swapOut, res.exec.swapIn)
		}
		if want == nil {
			want = res.done
			continue
		}
		for id := range want {
			if !slices.Equal(want[id], res.done[id]) {
				t.Fatalf("%v: call %d context differs from preserve's", k, id)
			}
		}
	}
}

func TestMemoryPressurePreemptsAndCompletes(t *testing.T) {
	cfg := baseConfig()
	cfg.NumBlocks = 12 // 48 tokens for 6 calls of up to 13+30 tokens
	for _, ev := range []handling.Kind{handling.Discard, handling.Swap} {
		res := runEngine(t, cfg, testPolicy{kind: handling.Preserve, evict: ev}, prompts(6, 13), []int{30})
		if len(res.done) != 6 {
			t.Fatalf("evict %v: %d of 6 finished", ev, len(res.done))
		}
		if res.events[EvPreempted] == 0 {
			t.Fatalf("evict %v: no preemption under pressure", ev)
		}
	}
}

func TestPausedCallsAreEvictedUnderPressure(t *testing.T) {
	cfg := baseConfig()
	cfg.NumBlocks = 14
	res := runEngine(t, cfg, testPolicy{kind: handling.Preserve}, prompts(5, 13), []int{8, 8})
	if len(res.done) != 5 {
		t.Fatalf("%d of 5 finished", len(res.done))
	}
	if res.events[EvHandled] == 0 {
		t.Fatal("no paused call was evicted although memory was short")
	}
}

func TestPrefixCacheSkipsRecompute(t *testing.T) {
	cfg := baseConfig()
	ps := prompts(1, 40)
	with := runEngine(t, cfg, testPolicy{kind: handling.Discard, traits: Traits{PrefixCache: true}}, ps, []int{2, 2})
	without := runEngine(t, cfg, testPolicy{kind: handling.Discard}, ps, []int{2, 2})
	if with.exec.steps >= without.exec.steps {
		t.Fatalf("prefix cache took %d iterations, without %d: the recompute after discard should hit the cache", with.exec.steps, without.exec.steps)
	}
}

func TestRejectsPromptLargerThanDevice(t *testing.T) {
	e, err := New(baseConfig(), NewVirtualClock(), &fixedExec{}, testPolicy{}, nil...)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.SubmitNow(Request{Prompt: make([]int32, 64*4+1), Controller: &script{decode: []int{1}}}); err == nil {
		t.Fatal("a prompt larger than the device was accepted")
	}
	if _, err := e.SubmitNow(Request{Prompt: nil, Controller: &script{decode: []int{1}}}); err == nil {
		t.Fatal("an empty prompt was accepted")
	}
}

func TestCancelFreesBlocks(t *testing.T) {
	e, err := New(baseConfig(), NewVirtualClock(), &fixedExec{}, testPolicy{kind: handling.Preserve})
	if err != nil {
		t.Fatal(err)
	}
	s, _ := e.SubmitNow(Request{Prompt: prompts(1, 20)[0], Controller: &script{decode: []int{1000}}})
	for range 5 {
		if _, err := e.step(); err != nil {
			t.Fatal(err)
		}
	}
	if e.Blocks().UsedBlocks() == 0 {
		t.Fatal("running call holds no blocks")
	}
	e.Cancel(s.ID())
	if e.Blocks().UsedBlocks() != 0 || e.Live() != 0 {
		t.Fatalf("after cancel: %d blocks used, %d live", e.Blocks().UsedBlocks(), e.Live())
	}
	if err := e.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func TestRealClockRunsToolsFromOtherGoroutines(t *testing.T) {
	e, err := New(baseConfig(), NewRealClock(), &fixedExecFast{}, testPolicy{kind: handling.Swap})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	done := make(chan []int32, 1)
	sc := &script{decode: []int{3, 3}}
	obs := observerFunc(func(ev *Event) {
		switch ev.Kind {
		case EvPaused:
			id := ev.Seq.ID()
			go func() { // a tool on its own goroutine
				time.Sleep(5 * time.Millisecond)
				e.Post(func() {
					sc.seg, sc.n = sc.seg+1, 0
					_ = e.Resume(id, []int32{9, 9})
				})
			}()
		case EvFinished:
			done <- slices.Clone(ev.Seq.Tokens())
			cancel()
		}
	})
	e.observer = append(e.observer, obs)
	go e.Post(func() {
		_, _ = e.SubmitNow(Request{Prompt: prompts(1, 9)[0], Controller: sc})
	})
	_ = e.Run(ctx)
	select {
	case toks := <-done:
		if len(toks) != 9+3+2+3 {
			t.Fatalf("got %d tokens, want 17", len(toks))
		}
	default:
		t.Fatal("call did not finish on the real clock")
	}
}

type fixedExecFast struct{}

func (fixedExecFast) Step(b *Batch) (time.Duration, error) { return time.Microsecond, nil }

type observerFunc func(*Event)

func (f observerFunc) Observe(e *Event) { f(e) }

// A full host tier turns swaps into discards; a tight swap budget delays
// swaps over iterations. Neither may fail a call or leak a block.
func TestSwapLimits(t *testing.T) {
	cases := []struct {
		name            string
		hostBlocks, per int
		wantSwaps       bool
	}{
		{"host tier full", 2, 0, false},
		{"no host tier", 0, 0, false},
		{"budget of one call per iteration", 64, 8, true},
		{"budget below a call's blocks", 64, 1, false}, // such a call is discarded instead
	}
	for _, c := range cases {
		cfg := baseConfig()
		cfg.HostBlocks, cfg.SwapBlocksPerIter = c.hostBlocks, c.per
		res := runEngine(t, cfg, testPolicy{kind: handling.Swap, evict: handling.Swap}, prompts(4, 13), []int{5, 5, 5})
		if len(res.done) != 4 {
			t.Fatalf("%s: %d of 4 finished", c.name, len(res.done))
		}
		if c.wantSwaps != (res.exec.swapOut > 0) {
			t.Fatalf("%s: %d blocks swapped out, want swaps: %v", c.name, res.exec.swapOut, c.wantSwaps)
		}
		if !c.wantSwaps && res.events[EvHandled] == 0 {
			t.Fatalf("%s: no swap decision fell back to discard", c.name)
		}
	}
}

func TestProgramTableAccounting(t *testing.T) {
	x := &fixedExec{}
	e, err := New(baseConfig(), NewVirtualClock(), x, testPolicy{kind: handling.Preserve})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if _, err := e.SubmitNow(Request{Program: "agent", Thread: []string{"a", "b", "b"}[i], Prompt: prompts(1, 10)[0], Controller: &script{decode: []int{4}}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	p := e.Programs().Get("agent")
	if p == nil || p.Calls != 3 || p.Active != 0 {
		t.Fatalf("program row %+v, want 3 calls, none active", p)
	}
	if p.Service <= 0 || p.CriticalPath() <= 0 || p.CriticalPath() > p.Service {
		t.Fatalf("service %v, critical path %v", p.Service, p.CriticalPath())
	}
	if p.ThreadService["b"] <= p.ThreadService["a"] {
		t.Fatalf("thread b (2 calls) has less service than a (1 call): %v", p.ThreadService)
	}
}

// Calls sharing a cached prefix hold the same blocks: that is not a leak,
// and not a negative one either.
func TestLeakedCountsSharedBlocksOnce(t *testing.T) {
	e, err := New(baseConfig(), NewVirtualClock(), &fixedExec{}, testPolicy{kind: handling.Preserve, traits: Traits{PrefixCache: true}})
	if err != nil {
		t.Fatal(err)
	}
	p := prompts(1, 21)[0]
	a, _ := e.SubmitNow(Request{Prompt: p, Controller: &script{decode: []int{100}}})
	for range 3 {
		if _, err := e.step(); err != nil {
			t.Fatal(err)
		}
	}
	b, _ := e.SubmitNow(Request{Prompt: p, Controller: &script{decode: []int{100}}})
	for range 3 {
		if _, err := e.step(); err != nil {
			t.Fatal(err)
		}
	}
	if a.Blocks()[0] != b.Blocks()[0] {
		t.Fatal("second call did not share the first call's prefix blocks")
	}
	if n := e.Leaked(); n != 0 {
		t.Fatalf("Leaked() = %d with two live calls sharing a prefix, want 0", n)
	}
	if err := e.Check(); err != nil {
		t.Fatal(err)
	}
}

// situationPolicy records the situation each pause is handled in.
type situationPolicy struct {
	testPolicy
	seen []handling.Situation
}

func (p *situationPolicy) Handle(v *View, s *Sequence) handling.Kind {
	p.seen = append(p.seen, v.Situation(s))
	return handling.Preserve
}

// TestPauseSituationExcludesTheCall: the handling of a pausing call weighs
// the other running calls, not the call itself (it ran in the batch the view
// counts).
func TestPauseSituationExcludesTheCall(t *testing.T) {
	p := &situationPolicy{}
	// Two calls with 8-token prompts decoding together; both pause after 3
	// tokens in the same iteration.
	runEngine(t, baseConfig(), p, prompts(2, 8), []int{3, 2})
	if len(p.seen) != 2 {
		t.Fatalf("%d pauses handled, want 2", len(p.seen))
	}
	for i, sit := range p.seen {
		// The other call's context when the previous batch ran: its 8-token
		// prompt and 2 generated tokens (the view counts computed KV).
		if sit.RunningTokens != 1 || sit.OtherRunning != 9 && sit.OtherRunning != 10 {
			t.Errorf("pause %d: other running %d calls with %d tokens, want 1 call with 9 or 10", i, sit.RunningTokens, sit.OtherRunning)
		}
	}
}

// recomputeCounter is a testPolicy that sums the iterations' recompute
// counters.
type recomputeCounter struct {
	testPolicy
	total int
	by    [NumLossCauses]int
}

func (p *recomputeCounter) Observe(e *Event) {
	if e.Kind == EvIteration {
		p.total += e.Iter.RecomputeTokens
		for i, n := range e.Iter.RecomputeBy {
			p.by[i] += n
		}
	}
}

// TestRecomputeByCause: recomputation is split by why the KV was dropped,
// and the parts add up to the total.
func TestRecomputeByCause(t *testing.T) {
	tool := &recomputeCounter{testPolicy: testPolicy{kind: handling.Discard}}
	runEngine(t, baseConfig(), tool, prompts(3, 13), []int{6, 4, 3})
	if tool.total == 0 || tool.by[LostAtTool] != tool.total {
		t.Fatalf("discard at every tool call: recompute %d, by cause %v, want all at the tool", tool.total, tool.by)
	}
	cfg := baseConfig()
	cfg.NumBlocks = 12 // 48 tokens for 6 calls of up to 13+30 tokens, no tools
	pre := &recomputeCounter{testPolicy: testPolicy{kind: handling.Preserve, evict: handling.Discard}}
	runEngine(t, cfg, pre, prompts(6, 13), []int{30})
	if pre.total == 0 || pre.by[LostPreempted] != pre.total {
		t.Fatalf("preemption by recompute: recompute %d, by cause %v, want all preempted", pre.total, pre.by)
	}
}
