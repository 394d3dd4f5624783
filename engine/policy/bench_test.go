package policy

import (
	"context"
	"fmt"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/pitstop-llm/pitstop/engine"
)

// endless decodes 512 tokens and finishes; its forecast says so, with a tool
// predicted for every other call so that the handling model has work to do.
type endless struct{ tool bool }

func (endless) Next(s *engine.Sequence, _ int32) engine.Action {
	if s.Generated() >= 511 {
		return engine.Action{Token: 1, Kind: engine.Finish}
	}
	return engine.Action{Token: 1}
}

func (c endless) Forecast(s *engine.Sequence) engine.Forecast {
	p := engine.Prediction{Decode: 512 - s.Generated()}
	if c.tool {
		p.HasTool, p.ToolTime, p.ToolReturn, p.After = true, 1.5, 40, 100
	}
	return engine.Forecast{Predicted: p, Truth: p, HasTruth: true}
}

// rankingStepper drives a whole engine iteration per benchmark op: 256
// running calls and 10,000 waiting ones in 1,000 programs; every finished
// call is replaced by a new waiting one. The engine's own work (batch
// building, postprocessing) is in every op too: compare with fcfs, whose
// ordering is O(changed calls).
type rankingStepper struct {
	b     *testing.B
	e     *engine.Engine
	n     int
	iters int
	warm  bool
	stop  context.CancelFunc
	next  int
}

func (r *rankingStepper) submit() {
	r.next++
	prompt := make([]int32, 64)
	for i := range prompt {
		prompt[i] = int32(r.next*64 + i + 1)
	}
	_, err := r.e.SubmitNow(engine.Request{
		Prompt: prompt, Program: fmt.Sprint("p", r.next%1000), Thread: "main",
		Controller: endless{tool: r.next%2 == 0},
	})
	if err != nil {
		r.b.Fatal(err)
	}
}

func (r *rankingStepper) Observe(ev *engine.Event) {
	switch ev.Kind {
	case engine.EvFinished:
		r.e.At(ev.Time, r.submit)
	case engine.EvIteration:
		if !r.warm {
			r.iters++
			if r.iters >= 300 { // the first calls finish and are replaced
				r.warm, r.iters = true, 0
				r.b.ResetTimer()
			}
			return
		}
		r.iters++
		if r.iters >= r.n {
			r.b.StopTimer()
			r.stop()
		}
	}
}

type zeroExec struct{}

func (zeroExec) Step(b *engine.Batch) (time.Duration, error) { return time.Millisecond, nil }

// BenchmarkRanking10k is one engine iteration per op with 10,000 waiting
// calls, for each policy (DESIGN/issue 3: the ordering step stays far below
// 100 µs amortized).
func BenchmarkRanking10k(b *testing.B) {
	for _, name := range Names() {
		b.Run(name, func(b *testing.B) {
			pol, err := New(name, Options{})
			if err != nil {
				b.Fatal(err)
			}
			cfg := engine.Config{NumBlocks: 1 << 17, BlockSize: 16, HostBlocks: 1 << 16, MaxBatchedTokens: 512, MaxSeqs: 256, Cost: testCost()}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			r := &rankingStepper{b: b, n: b.N, stop: cancel}
			e, err := engine.New(cfg, engine.NewVirtualClock(), zeroExec{}, pol, r)
			if err != nil {
				b.Fatal(err)
			}
			r.e = e
			for range 256 + 10000 {
				r.submit()
			}
			if err := e.Run(ctx); err != nil && ctx.Err() == nil {
				b.Fatal(err)
			}
			if r.iters < b.N {
				b.Fatalf("ran %d of %d iterations", r.iters, b.N)
			}
		})
	}
}

// benchCase is a policy with options for the ordering benchmark.
type benchCase struct {
	name, policy string
	opts         Options
	aged         bool // pitstop with its arrival-order reference known (T = 20 s), so the aging re-ranks
	modeled      bool // pitstop with a ready program model (4,096 heavy-tailed programs of 10 calls each)
	tailPast     bool // pitstop with a realized p99 past any arrival-order one, so a gated lane is open
	dist         bool // forecasts carry a 51-bin length distribution (the serve predictor's), so the default rank takes the expectation
	classes      int  // the programs spread over this many classes (tenants), program i in class i mod classes; 0: one class
}

// benchCases are every policy with its defaults, and pitstop in each fixed
// program order (the benchmark's programs, 10 calls each in the engine at
// once, look like DAGs: the automatic order would take arrival order, the
// cheapest; queues re-rank the most, with the tail guard every AgingEvery).
func benchCases() []benchCase {
	var cs []benchCase
	for _, n := range Names() {
		cs = append(cs, benchCase{name: n, policy: n})
	}
	for _, o := range []string{"call", "arrival", "queues", "remaining"} {
		cs = append(cs, benchCase{name: "pitstop-" + o, policy: "pitstop", opts: Options{ProgramOrder: o}})
	}
	// The order before session 7's aging, to compare in one run.
	cs = append(cs, benchCase{name: "pitstop-guard", policy: "pitstop", opts: Options{PitstopTail: "guard"}})
	cs = append(cs, benchCase{name: "pitstop-call-guard", policy: "pitstop", opts: Options{ProgramOrder: "call", PitstopTail: "guard"}})
	cs = append(cs, benchCase{name: "pitstop-aged", policy: "pitstop", aged: true})
	cs = append(cs, benchCase{name: "pitstop-call-aged", policy: "pitstop", opts: Options{ProgramOrder: "call"}, aged: true})
	// Session 8's late lane (θ at its ceiling until calls finish).
	cs = append(cs, benchCase{name: "pitstop-lane", policy: "pitstop", opts: Options{PitstopTail: "lane"}, aged: true})
	cs = append(cs, benchCase{name: "pitstop-aging-lane", policy: "pitstop", opts: Options{PitstopTail: "aging+lane"}, aged: true})
	cs = append(cs, benchCase{name: "pitstop-aging-control", policy: "pitstop", opts: Options{PitstopTail: "aging+control"}, aged: true})
	// Session 9's least-laxity promotion against arrival-order deadlines.
	cs = append(cs, benchCase{name: "pitstop-aging-deadline", policy: "pitstop", opts: Options{PitstopTail: "aging+deadline"}, aged: true})
	cs = append(cs, benchCase{name: "pitstop-deadline", policy: "pitstop", opts: Options{PitstopTail: "deadline"}, aged: true})
	// Session 10's EDF feasibility test on the promoted calls.
	cs = append(cs, benchCase{name: "pitstop-aging-feasible", policy: "pitstop", opts: Options{PitstopTail: "aging+feasible"}, aged: true})
	cs = append(cs, benchCase{name: "pitstop-aging-feasible-p99", policy: "pitstop", opts: Options{PitstopTail: "aging+feasible-p99"}, aged: true})
	cs = append(cs, benchCase{name: "pitstop-aging-feasible-floor", policy: "pitstop", opts: Options{PitstopTail: "aging+feasible-floor"}, aged: true})
	// Session 11's lane of calls that have not started or have no tool ahead, with and without the lag.
	cs = append(cs, benchCase{name: "pitstop-aging-warm-first-final", policy: "pitstop", opts: Options{PitstopTail: "aging+warm+first-final"}, aged: true})
	cs = append(cs, benchCase{name: "pitstop-aging-warm-first-final-lag", policy: "pitstop", opts: Options{PitstopTail: "aging+warm+first-final-lag"}, aged: true})
	// Session 12's trigger (the realized p99 past arrival order's) and last-moment promotion.
	cs = append(cs, benchCase{name: "pitstop-aging-warm-first-final-gated", policy: "pitstop", opts: Options{PitstopTail: "aging+warm+first-final-gated"}, aged: true, tailPast: true})
	cs = append(cs, benchCase{name: "pitstop-aging-warm-first-final-gated-wake", policy: "pitstop", opts: Options{PitstopTail: "aging+warm+first-final-gated-wake"}, aged: true, tailPast: true})
	cs = append(cs, benchCase{name: "pitstop-aging-warm-first-final-gated-fit", policy: "pitstop", opts: Options{PitstopTail: "aging+warm+first-final-gated-fit"}, aged: true, tailPast: true})
	cs = append(cs, benchCase{name: "pitstop-aging-warm-first-final-sure-fit", policy: "pitstop", opts: Options{PitstopTail: "aging+warm+first-final-sure-fit"}, aged: true, tailPast: true})
	// Today's defaults (Options.Defaults(), whatever they are when the
	// benchmark runs; session 12's gated lane open when they have it), and
	// session 10's tail aging+warm beside them, to compare in one run.
	cs = append(cs, benchCase{name: "pitstop-defaults", policy: "pitstop", aged: true, tailPast: true})
	// The defaults as serve and bench's default predictor drive them: every
	// forecast with a length distribution, ranked by the expectation.
	cs = append(cs, benchCase{name: "pitstop-defaults-dist", policy: "pitstop", aged: true, tailPast: true, dist: true})
	// Session 18's γ-Boost in place of the aging (γ = 1/W known: every
	// call's boost over its length distribution).
	cs = append(cs, benchCase{name: "pitstop-boost-wait-dist", policy: "pitstop", opts: Options{PitstopTail: "boost-wait+warm+first-final-gated-fit"}, aged: true, tailPast: true, dist: true})
	// The same calls over many tenants (session 16's class-shared default
	// keeps one population per class, and Refresh asks each for its order).
	for _, n := range []int{10, 100, 1000} {
		cs = append(cs, benchCase{name: fmt.Sprint("pitstop-defaults-dist-classes-", n), policy: "pitstop", aged: true, tailPast: true, dist: true, classes: n})
	}
	cs = append(cs, benchCase{name: "pitstop-aging-warm", policy: "pitstop", opts: Options{PitstopTail: "aging+warm"}, aged: true})
	// Session 8's re-admission rule off (the default has it on), to compare in one run.
	cs = append(cs, benchCase{name: "pitstop-readmit-off", policy: "pitstop", opts: Options{PitstopReadmit: "off"}})
	cs = append(cs, benchCase{name: "pitstop-aged-readmit-off", policy: "pitstop", opts: Options{PitstopReadmit: "off"}, aged: true})
	// Session 9's admission of programs in arrival order (program_lead.go).
	cs = append(cs, benchCase{name: "pitstop-started", policy: "pitstop", opts: Options{PitstopAdmission: "started", PitstopProgramLead: "0"}})
	// Session 11's Gittins index of the program's remaining service, with
	// the model ready so that every rank looks the index up.
	cs = append(cs, benchCase{name: "pitstop-gittins-rest", policy: "pitstop", opts: Options{ProgramOrder: "gittins-rest"}, aged: true, modeled: true})
	// Session 14's order of started and fresh programs from the index
	// (gittins_started.go): with no program completed (the prior: arrival
	// order, as the benchmark's programs look like DAGs) and with the
	// heavy-tailed model ready (the index falls: the call's order).
	cs = append(cs, benchCase{name: "pitstop-gittins-started", policy: "pitstop", opts: Options{ProgramOrder: "gittins-started"}, aged: true, tailPast: true})
	cs = append(cs, benchCase{name: "pitstop-gittins-started-modeled", policy: "pitstop", opts: Options{ProgramOrder: "gittins-started"}, aged: true, tailPast: true, modeled: true})
	// Session 13's order of the calls on the device (decode_first.go), on today's default tail.
	cs = append(cs, benchCase{name: "pitstop-decode-first", policy: "pitstop", opts: Options{PitstopBatch: "decode-first"}, aged: true, tailPast: true})
	return cs
}

// BenchmarkOrdering10k isolates the policy's part of the ordering step: per
// op (one iteration) it asks Refresh, and then either re-ranks all 10,000
// waiting calls and sorts them (what the engine's run queue does on a
// refresh) or ranks the 256 calls that changed (the running batch) and sorts
// those. The engine's batch building and postprocessing are not in it.
func BenchmarkOrdering10k(b *testing.B) {
	for _, c := range benchCases() {
		b.Run(c.name, func(b *testing.B) {
			pol, err := New(c.policy, c.opts)
			if err != nil {
				b.Fatal(err)
			}
			if c.aged {
				pol.(*Pitstop).fcfs = fcfsReference{num: 10, den: 1, own: p99Window{n: fcfsMinCalls, q99: 10}}
			}
			if c.tailPast && pol.(*Pitstop).deadlines.edf != nil { // a default tail without the gated lane has nothing to open
				for range fcfsMinCalls {
					pol.(*Pitstop).deadlines.edf.realized.record(math.MaxFloat64)
				}
			}
			if c.modeled {
				m := &pol.(*Pitstop).pops.of("").model
				for i := range programSamples {
					m.add(1 / math.Pow(float64(i+1)/(programSamples+1), 1/1.2))
				}
				m.programs, m.calls, m.svc, m.ctxSvc = programSamples, 10*programSamples, 1, 1000
				m.rebuild()
			}
			ctl := func(i int) engine.Controller { return endless{tool: i%2 == 0} }
			if c.dist {
				ctl = func(i int) engine.Controller { return distCtl{median: 10 * (i%40 + 1), dist: softmaxLike(i % 40)} }
			}
			orderingStepClasses(b, pol, ctl, c.classes)
		})
	}
}

// orderingStep is the body of the ordering benchmarks: 10,256 calls (10,000
// waiting, 256 running) of 1,000 programs, each with the controller ctl(i)
// gives, submitted to an engine under pol; per op, Refresh, then either a
// full re-rank and sort or the 256 changed calls ranked and sorted.
func orderingStep(b *testing.B, pol engine.Policy, ctl func(i int) engine.Controller) {
	orderingStepClasses(b, pol, ctl, 0)
}

// orderingStepClasses is orderingStep with the 1,000 programs spread over
// classes classes (program j in class j mod classes; 0: every call in the
// one class "").
func orderingStepClasses(b *testing.B, pol engine.Policy, ctl func(i int) engine.Controller, classes int) {
	type entry struct {
		p  engine.Priority
		id engine.SeqID
	}
	cmpE := func(a, b entry) int {
		if c := cmpPriority(a.p, b.p); c != 0 {
			return c
		}
		return int(a.id) - int(b.id)
	}
	cfg := engine.Config{NumBlocks: 1 << 17, BlockSize: 16, HostBlocks: 1 << 16, MaxBatchedTokens: 512, MaxSeqs: 256, Cost: testCost()}
	e, err := engine.New(cfg, engine.NewVirtualClock(), zeroExec{}, pol)
	if err != nil {
		b.Fatal(err)
	}
	seqs := make([]*engine.Sequence, 0, 10256)
	prompt := make([]int32, 64)
	for i := range 10256 {
		class := ""
		if classes > 0 {
			class = fmt.Sprint("c", i%1000%classes)
		}
		s, err := e.SubmitNow(engine.Request{Prompt: prompt, Program: fmt.Sprint("p", i%1000), Thread: "main", Class: class, Controller: ctl(i)})
		if err != nil {
			b.Fatal(err)
		}
		seqs = append(seqs, s)
	}
	v := &engine.View{BlockSize: 16, TotalBlocks: cfg.NumBlocks, FreeBlocks: cfg.NumBlocks, HostBlocks: cfg.HostBlocks,
		HostFree: cfg.HostBlocks, Running: 256, RunningCtx: 256 * 300, Cost: cfg.Cost, Programs: e.Programs()}
	all := make([]entry, len(seqs))
	changed := make([]entry, 256)
	reranks := 0
	b.ResetTimer()
	cpu0, cpuOK := processCPU()
	for i := range b.N {
		v.Iteration++
		v.Now += 20 * time.Millisecond
		if pol.Refresh(v) {
			reranks++
			for j, s := range seqs {
				all[j] = entry{pol.Priority(v, s), s.ID()}
			}
			slices.SortFunc(all, cmpE)
			continue
		}
		for j := range changed {
			s := seqs[(i*256+j)%len(seqs)]
			changed[j] = entry{pol.Priority(v, s), s.ID()}
		}
		slices.SortFunc(changed, cmpE)
	}
	if cpu1, ok := processCPU(); ok && cpuOK {
		b.ReportMetric(float64(cpu1-cpu0)/float64(b.N), "cpu-ns/op") // the whole process's, GC included
	}
	b.ReportMetric(float64(reranks)/float64(b.N), "reranks/op")
}

// BenchmarkRefreshClasses is Refresh alone (no re-rank) on the defaults
// with the 10,256 calls of BenchmarkOrdering10k spread over 1 to 1,000
// classes: what asking the classes for their program orders costs.
func BenchmarkRefreshClasses(b *testing.B) {
	for _, n := range []int{0, 10, 100, 1000} {
		b.Run(fmt.Sprint("classes-", max(n, 1)), func(b *testing.B) {
			pol := NewPitstop(Options{})
			cfg := engine.Config{NumBlocks: 1 << 17, BlockSize: 16, HostBlocks: 1 << 16, MaxBatchedTokens: 512, MaxSeqs: 256, Cost: testCost()}
			e, err := engine.New(cfg, engine.NewVirtualClock(), zeroExec{}, pol)
			if err != nil {
				b.Fatal(err)
			}
			prompt := make([]int32, 64)
			for i := range 10256 {
				class := ""
				if n > 0 {
					class = fmt.Sprint("c", i%1000%n)
				}
				ctl := distCtl{median: 10 * (i%40 + 1), dist: softmaxLike(i % 40)}
				if _, err := e.SubmitNow(engine.Request{Prompt: prompt, Program: fmt.Sprint("p", i%1000), Thread: "main", Class: class, Controller: ctl}); err != nil {
					b.Fatal(err)
				}
			}
			v := &engine.View{BlockSize: 16, TotalBlocks: cfg.NumBlocks, FreeBlocks: cfg.NumBlocks, HostBlocks: cfg.HostBlocks,
				HostFree: cfg.HostBlocks, Running: 256, RunningCtx: 256 * 300, Cost: cfg.Cost, Programs: e.Programs()}
			b.ResetTimer()
			for range b.N {
				v.Iteration++
				v.Now += 20 * time.Millisecond
				pol.Refresh(v)
			}
		})
	}
}
