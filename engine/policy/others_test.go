package policy

import (
	"math"
	"slices"
	"testing"
	"time"

	"github.com/pitstop-llm/pitstop/engine"
	"github.com/pitstop-llm/pitstop/handling"
)

// TestSOLAMode: the mode follows whichever of TTFT and TPOT is further from
// its SLO over the window, and the phases swap classes with it.
func TestSOLAMode(t *testing.T) {
	p := NewSOLA(Options{TTFTSLO: 0.1, TPOTSLO: 0.05, SOLAWindow: 4})
	h := newHarness(t, p, testConfig())
	dec := h.submit("dec", "a", "main", 8, []seg{{decode: 100}}, nil)
	h.run(untilIteration(5)) // dec is decoding at 10 ms per token: TPOT 0.2 of its SLO
	pre := h.submit("pre", "b", "main", 8, []seg{{decode: 3}}, nil)
	now := h.e.Now()
	// Fresh prefill: TTFT ratio ~0 < TPOT ratio 0.2: TPOT mode, decodes first.
	for range 4 {
		p.update(now)
	}
	if p.TTFTMode() {
		t.Fatal("TTFT mode while no call waits for its first token long")
	}
	v := h.view(now, 6)
	if got := order(p, v, pre, dec); !slices.Equal(got, []string{"dec", "pre"}) {
		t.Fatalf("TPOT mode order %v", got)
	}
	// The prefill has now waited 1 s: TTFT ratio 10 ≫ TPOT ratio.
	later := now + time.Second
	for range 4 {
		p.update(later)
	}
	if !p.TTFTMode() {
		t.Fatal("not in TTFT mode although a prefill waited 10x its SLO")
	}
	if !p.Refresh(v) {
		t.Fatal("a mode change must re-rank")
	}
	v.Now = later
	if got := order(p, v, pre, dec); !slices.Equal(got, []string{"pre", "dec"}) {
		t.Fatalf("TTFT mode order %v", got)
	}
}

// TestSOLAOrdersBySLOPrediction: prefills by descending predicted TTFT
// (older first at equal cost), decodes by descending predicted TPOT.
func TestSOLAOrdersBySLOPrediction(t *testing.T) {
	p := NewSOLA(Options{})
	h := newHarness(t, p, testConfig())
	a := h.submit("a", "a", "main", 16, []seg{{decode: 3}}, nil)
	h.run(untilIteration(1))
	b := h.submit("b", "b", "main", 16, []seg{{decode: 3}}, nil)
	if got := order(p, h.view(h.e.Now(), 2), b, a); got[0] != "a" && a.Generated() == 0 {
		t.Fatalf("older prefill should lead: %v", got)
	}
}

// TestContinuumTTL: a tool call's KV is pinned for the TTL (reload plus
// queueing) and dropped after; a tool predicted to outlast it is not pinned.
func TestContinuumTTL(t *testing.T) {
	cases := []struct {
		name     string
		predTool float64
		pinned   bool
	}{
		{"short tool pinned", 0.001, true},
		{"long tool not pinned", 100, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := NewContinuum(Options{})
			h := newHarness(t, p, testConfig())
			s := h.submit("c", "p", "main", 40, []seg{{decode: 4, tool: 100, ret: 2}, {decode: 2}},
				[]seg{{decode: 4, tool: tc.predTool, ret: 2}, {decode: 2}})
			h.run(func(ev *engine.Event) bool { return ev.Kind == engine.EvPaused })
			if got := h.paused["c"][0] == handling.Preserve; got != tc.pinned {
				t.Fatalf("pinned at the tool call: %v, want %v", got, tc.pinned)
			}
			if !tc.pinned {
				return
			}
			v := h.view(h.e.Now(), 10)
			ttl := p.TTL(v, s)
			if ttl <= 0 {
				t.Fatalf("TTL %v", ttl)
			}
			v.Now = s.PausedAt() + time.Duration(ttl*0.5*float64(time.Second))
			if k := p.Handle(v, s); k != handling.Preserve {
				t.Fatalf("half-way through the TTL: %v", k)
			}
			v.Now = s.PausedAt() + time.Duration(ttl*1.01*float64(time.Second))
			if k := p.Handle(v, s); k != handling.Discard {
				t.Fatalf("after the TTL: %v", k)
			}
		})
	}
}

// TestContinuumProgramFCFS: a later call of an older program goes ahead of a
// newer program's call.
func TestContinuumProgramFCFS(t *testing.T) {
	p := NewContinuum(Options{})
	h := newHarness(t, p, testConfig())
	h.submit("old-1", "old", "main", 8, []seg{{decode: 2}}, nil)
	h.run(nil)
	young := h.submit("young-1", "young", "main", 8, []seg{{decode: 2}}, nil)
	h.e.At(h.e.Now()+time.Second, func() {})
	h.run(nil)
	h.submit("young-2", "young", "main", 8, []seg{{decode: 2}}, nil)
	_ = young
	old2 := h.submit("old-2", "old", "main", 8, []seg{{decode: 2}}, nil)
	y2 := h.seqs["young-2"]
	if got := order(p, h.view(h.e.Now(), 50), y2, old2); !slices.Equal(got, []string{"old-2", "young-2"}) {
		t.Fatalf("order %v", got)
	}
}

// TestSRPTHandlesWithTruth: srpt's least waste uses the true tool time.
func TestSRPTHandlesWithTruth(t *testing.T) {
	p := NewSRPT(Options{})
	h := newHarness(t, p, testConfig())
	h.submit("c", "p", "main", 40, []seg{{decode: 8, tool: 30, ret: 4}, {decode: 4}}, []seg{{decode: 8, tool: 0.001, ret: 4}, {decode: 4}})
	h.run(nil)
	if k := h.paused["c"][0]; k == handling.Preserve {
		t.Fatal("srpt preserved a call whose true tool time is 30 s")
	}
}

// TestPitstopOrdering: calls on the device first; the others by
// memory-over-time plus their program's expected remaining work; a
// β-promoted (or starving) call ahead of the rest.
func TestPitstopOrdering(t *testing.T) {
	p := NewPitstop(Options{PitstopBeta: 8})
	h := newHarness(t, p, testConfig())
	running := h.submit("running", "r", "main", 8, []seg{{decode: 300}}, nil)
	h.run(untilIteration(2))
	long := h.submit("long", "n1", "main", 8, []seg{{decode: 80}}, nil)
	short := h.submit("short", "n2", "main", 8, []seg{{decode: 4}}, nil)
	v := h.view(h.e.Now(), 3)
	if got, want := order(p, v, long, running, short), []string{"running", "short", "long"}; !slices.Equal(got, want) {
		t.Fatalf("order %v, want %v", got, want)
	}
	if p.Traits().Preemptive {
		t.Fatal("pitstop does not preempt to admit")
	}
	// β: a call whose program waited 8x its service goes ahead.
	st := stateOf(long)
	st.row.service = 100 * time.Millisecond
	v.Now += 10 * time.Second
	if pr := p.Priority(v, long); pr.Class != 1 {
		t.Fatalf("β-promoted call in class %v, want 1", pr.Class)
	}
	// Off by default: the same call stays in the common class.
	q := NewPitstop(Options{})
	if pr := q.Priority(v, short); pr.Class != 2 {
		t.Fatalf("default pitstop promoted a call (class %v)", pr.Class)
	}
	// LAMPS's counter when asked for: 150 iterations without running.
	c := NewPitstop(Options{PitstopStarvation: 100})
	v.Iteration += 150
	if pr := c.Priority(v, short); pr.Class != 1 {
		t.Fatalf("starving call in class %v, want 1", pr.Class)
	}
}

// longAndShort is the scene of the tail tests: under p, a call running for
// two iterations, then two waiting calls, long (about 2 s of own service:
// 100 tokens at 10 ms and a 1 s tool) and short (4 tokens), and a view of
// the next iteration.
func longAndShort(t *testing.T, p *Pitstop) (long, short *engine.Sequence, v *engine.View) {
	t.Helper()
	h := newHarness(t, p, testConfig())
	h.submit("running", "r", "main", 8, []seg{{decode: 300}}, nil)
	h.run(untilIteration(2))
	long = h.submit("long", "n1", "main", 8, []seg{{decode: 80, tool: 1, ret: 4}, {decode: 20}}, nil)
	short = h.submit("short", "n2", "main", 8, []seg{{decode: 4}}, nil)
	return long, short, h.view(h.e.Now(), 3)
}

// TestPitstopTailBound: with an explicit bound, a waiting call whose time
// since arrival plus the predicted rest of its service passes the bound goes
// ahead of the ranked calls (class 1.5), earliest deadline first; before
// that, and without a bound, memory-over-time decides.
func TestPitstopTailBound(t *testing.T) {
	p := NewPitstop(Options{PitstopTailBound: 20})
	long, short, v := longAndShort(t, p)
	if got, want := order(p, v, long, short), []string{"short", "long"}; !slices.Equal(got, want) {
		t.Fatalf("within the bound: order %v, want %v", got, want)
	}
	// 19 s later the long call's ≈2 s of service would end past 20 s from
	// its arrival; the short call's 40 ms would not.
	v.Now += 19 * time.Second
	if got, want := order(p, v, long, short), []string{"long", "short"}; !slices.Equal(got, want) {
		t.Fatalf("past the bound: order %v, want %v", got, want)
	}
	if pr := p.Priority(v, long); pr.Class != 1.5 || pr.Key != long.Arrival().Seconds()+20 {
		t.Fatalf("late call ranked %+v, want class 1.5 keyed by its deadline", pr)
	}
	if pr := NewPitstop(Options{}).Priority(v, long); pr.Class == 1.5 {
		t.Fatal("no bound set: the call was promoted")
	}
	if err := (Options{PitstopTailBound: -1}).Validate(); err == nil {
		t.Fatal("a negative bound was accepted")
	}
}

// TestProgramOrder: pitstop's program-level order. Single-call programs:
// the call's memory-over-time decides. Programs of several calls, mostly
// DAGs (tree searches): arrival order while the learned Gittins index never
// lets a fresh program pass a started one (before any program completed,
// the prior of programs alike), by the call's memory-over-time otherwise;
// chains and mixed shapes: the program's attained-service queue until the
// model of completed programs is ready, the call's memory-over-time after
// (session 14 replaced the CV threshold and the DAGs' warm-up order,
// session 13 removed the shape rule and the queues for a heavy tail).
func TestProgramOrder(t *testing.T) {
	oneSize := func(i int) float64 { return 10 + float64(i%3) }
	cases := []struct {
		name    string
		multi   bool                // programs with several calls have been seen
		dags    int                 // of the 4 programs, how many are DAGs
		samples func(i int) float64 // completed programs' service, seconds
		want    programOrder
	}{
		{"single-call programs", false, 0, nil, byCall},
		{"multi-call programs, model not ready", true, 0, nil, byQueue},
		{"mostly DAGs, model not ready", true, 2, nil, byArrival},
		{"heavy-tailed programs", true, 0, func(i int) float64 {
			if i%10 == 0 {
				return 100
			}
			return 1
		}, byCall},
		{"moderate spread (CV 0.74)", true, 0, func(i int) float64 {
			if i%4 == 0 {
				return 4
			}
			return 1
		}, byCall},
		{"one size, mostly DAGs", true, 3, oneSize, byArrival},
		{"two sizes, mostly DAGs (CV 0.6, the index falls past the short)", true, 3, func(i int) float64 { return 1 + 3*float64(i%2) }, byCall},
		{"one size, no DAGs", true, 0, oneSize, byCall},
		{"mixed shapes, one size", true, 1, oneSize, byCall},
	}
	// What ranks first in two pairs of waiting calls under each order:
	// (old program with 5 s of service and a short call, new program with a
	// long call) and (old program with 5 s of service and a long call, new
	// program with a short call).
	firsts := map[programOrder][2]string{
		byCall:    {"old-short", "new-short"},
		byQueue:   {"new-long", "new-short"},
		byArrival: {"old-short", "old-long"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			// The program order alone: in arrival order the programs' own
			// arrivals, without the lead rule (program_lead_test.go).
			p := NewPitstop(Options{PitstopProgramLead: "off", PitstopAdmission: "off"})
			if tc.samples != nil {
				for i := range 200 {
					p.pops.of("").model.add(tc.samples(i))
				}
				p.pops.of("").model.rebuild()
			}
			h := newHarness(t, p, testConfig())
			oldShort := h.submit("old-short", "old", "main", 8, []seg{{decode: 5}}, nil)
			newLong := h.submit("new-long", "new", "main", 64, []seg{{decode: 400}}, nil)
			oldLong := h.submit("old-long", "old2", "main", 64, []seg{{decode: 400}}, nil)
			newShort := h.submit("new-short", "new2", "main", 8, []seg{{decode: 5}}, nil)
			for _, s := range []*engine.Sequence{oldShort, oldLong} {
				stateOf(s).row.service = 5 * time.Second
			}
			for _, s := range []*engine.Sequence{newLong, newShort} {
				stateOf(s).row.first = time.Second
			}
			p.a.table.shape("").anyMulti = tc.multi
			p.a.table.shape("").threaded, p.a.table.shape("").programs = tc.dags, 4
			p.a.table.shape("").held = 0 // every program has begun: the held test counts all four (shape_shown.go)
			if got := p.orderOf(p.pops.of("")); got != tc.want {
				t.Fatalf("order %d, want %d (cv %.2f)", got, tc.want, p.pops.of("").model.cv)
			}
			v := h.view(h.e.Now(), 1)
			want := firsts[tc.want]
			if got := order(p, v, oldShort, newLong); got[0] != want[0] {
				t.Errorf("first pair: %v, want %s first", got, want[0])
			}
			if got := order(p, v, oldLong, newShort); got[0] != want[1] {
				t.Errorf("second pair: %v, want %s first", got, want[1])
			}
		})
	}
	// In arrival order a program's own calls go longest first (LPT).
	p := NewPitstop(Options{ProgramOrder: "arrival"})
	h := newHarness(t, p, testConfig())
	short := h.submit("short", "tree", "t1", 8, []seg{{decode: 5}}, nil)
	long := h.submit("long", "tree", "t2", 8, []seg{{decode: 400}}, nil)
	if got := order(p, h.view(h.e.Now(), 1), short, long); got[0] != "long" {
		t.Errorf("arrival order inside a program: %v, want long first", got)
	}
	if noQ := NewPitstop(Options{NoProgramQueues: true}); noQ.orderOf(noQ.pops.of("")) != byCall {
		t.Fatal("the no-queues ablation orders programs")
	}
}

// TestPitstopHandling: the handling predicted at the tool call stands while
// the tool keeps to its prediction and is re-checked once it overruns.
func TestPitstopHandling(t *testing.T) {
	cases := []struct {
		name      string
		opts      Options
		truth     float64
		pred      float64
		first     handling.Kind
		revisedTo bool // expects a later change away from preserve
	}{
		{name: "on time, kept", truth: 0.005, pred: 0.005, first: handling.Preserve},
		{name: "long tool released at once", truth: 20, pred: 20, first: handling.Discard},
		{name: "overrun, released", truth: 5, pred: 0.005, first: handling.Preserve, revisedTo: true},
		{name: "overrun, static ablation", opts: Options{NoDynamicHandling: true}, truth: 5, pred: 0.005, first: handling.Preserve},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			// The waste pricing, which the default "idle-lost" keeps for
			// memory that is short; the scene's pool is idle.
			tc.opts.PitstopHandling = "waste"
			p := NewPitstop(tc.opts)
			h := newHarness(t, p, testConfig())
			h.submit("c", "p", "main", 40, []seg{{decode: 8, tool: tc.truth, ret: 4}, {decode: 4}},
				[]seg{{decode: 8, tool: tc.pred, ret: 4}, {decode: 4}})
			// Keep the engine busy so that the paused call is re-checked.
			h.submit("busy", "q", "main", 8, []seg{{decode: 1000}}, nil)
			h.run(nil)
			if got := h.paused["c"][0]; got != tc.first {
				t.Fatalf("handling at the tool call %v, want %v", got, tc.first)
			}
			changed := len(h.later["c"]) > 0
			if changed != tc.revisedTo {
				t.Fatalf("revised while paused: %v (%v), want %v", changed, h.later["c"], tc.revisedTo)
			}
		})
	}
}

// TestPitstopQueueMetric: pitstop reports its program queues for metrics
// once programs have several calls, queue 0 before.
func TestPitstopQueueMetric(t *testing.T) {
	p := NewPitstop(Options{})
	h := newHarness(t, p, testConfig())
	adv := h.submit("advanced", "old", "main", 8, []seg{{decode: 5}}, nil)
	stateOf(adv).row.service = 5 * time.Second
	if q := p.Queue(adv); q != 0 {
		t.Fatalf("single-call programs: queue %d, want 0", q)
	}
	// Two calls of "old" at once make it a DAG; with two other programs
	// DAGs are a minority: queues until the model of programs is ready.
	h.submit("other", "x", "main", 8, []seg{{decode: 5}}, nil)
	h.submit("another", "y", "main", 8, []seg{{decode: 5}}, nil)
	h.submit("second", "old", "t2", 8, []seg{{decode: 5}}, nil)
	p.a.table.shape("").held = 0 // as if each program had generated a token: the default's DAG test counts only those (shape_shown.go)
	if q := p.Queue(adv); q != p.a.queues.index(5*time.Second) || q == 0 {
		t.Fatalf("multi-call programs: queue %d, want %d", q, p.a.queues.index(5*time.Second))
	}
}

// TestPitstopCachedHandling: with the prefix cache and a device pool that
// outlasts the tool many times over, a tool call that InferCept's wastes
// would swap is discarded into the cache instead (the swap's copies would buy
// nothing); with NoCachedHandling it swaps as InferCept does. With a pool
// the tool outlasts it is discarded too: the engine swaps the context out
// if the cache is about to evict it (engine/rescue.go), so a discard is a
// swap deferred until it is needed (here the blocks survive the tool).
func TestPitstopCachedHandling(t *testing.T) {
	cases := []struct {
		name   string
		opts   Options
		blocks int
		want   handling.Kind
		later  []handling.Kind
	}{
		{name: "ample pool: discard into the cache", blocks: 8192, want: handling.Discard},
		{name: "ample pool, ablation", opts: Options{NoCachedHandling: true}, blocks: 8192, want: handling.Swap},
		{name: "small pool: discard, a swap deferred", blocks: 1024, want: handling.Discard},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := testConfig()
			cfg.NumBlocks = tc.blocks
			cfg.Cost.SwapGathered = true      // one copy per direction: swapping is cheap
			tc.opts.PitstopHandling = "waste" // the pricing under test; the pool here is idle
			h := newHarness(t, NewPitstop(tc.opts), cfg)
			h.submit("c", "p", "main", 2000, []seg{{decode: 8, tool: 2, ret: 4}, {decode: 4}}, nil)
			h.submit("busy", "q", "main", 8, []seg{{decode: 400}}, nil)
			h.run(nil)
			if got := h.paused["c"][0]; got != tc.want {
				t.Fatalf("handling at the tool call %v, want %v", got, tc.want)
			}
			if got := h.later["c"]; !slices.Equal(got, tc.later) {
				t.Fatalf("handling while paused %v, want %v", got, tc.later)
			}
			if _, ok := h.done["c"]; !ok {
				t.Fatal("the call did not finish")
			}
		})
	}
}

// TestGittinsIndex: the index of a program given its attained service falls
// with service for a heavy-tailed distribution (least attained service
// first) and rises for one of equal programs (first come first served),
// and matches a hand computation.
func TestGittinsIndex(t *testing.T) {
	build := func(xs []float64) ([]float64, []float64) {
		s := slices.Clone(xs)
		slices.Sort(s)
		suf := make([]float64, len(s)+1)
		for i := len(s) - 1; i >= 0; i-- {
			suf[i] = suf[i+1] + s[i]
		}
		return s, suf
	}
	// Two programs of 1 s and one of 10 s: at a = 0 stopping at Δ = 1
	// completes 2/3 for 1 s of expected work: G = 2/3; stopping at 10: 1 for
	// (1+1+10)/3 = 4: 0.25. At a = 1 only the 10 s program is left: 1/9.
	s, suf := build([]float64{1, 1, 10})
	if g := samplesIndex(s, suf, 0); math.Abs(g-2.0/3) > 1e-12 {
		t.Errorf("G(0) = %v, want 2/3", g)
	}
	if g := samplesIndex(s, suf, 1); math.Abs(g-1.0/9) > 1e-12 {
		t.Errorf("G(1) = %v, want 1/9", g)
	}
	if g := samplesIndex(s, suf, 10); g != 0 {
		t.Errorf("past every sample: %v, want 0", g)
	}
	// Heavy tail (Pareto-like): the index falls with attained service.
	var heavy, equal []float64
	for i := 1; i <= 400; i++ {
		heavy = append(heavy, 1/math.Pow(float64(i)/401, 1/1.2))
		equal = append(equal, 10+float64(i%7)*0.01)
	}
	var g gittinsTable
	g.build(build(heavy))
	if lo, hi := g.level(0), g.level(50); lo >= hi {
		t.Errorf("heavy tail: level at 0 %d, at 50 %d: want a served program behind a fresh one", lo, hi)
	}
	g.build(build(equal))
	if lo, hi := g.level(0), g.level(9.9); lo <= hi {
		t.Errorf("equal programs: level at 0 %d, at 9.9 %d: want an advanced program ahead", lo, hi)
	}
}
