// Package runtime wires pitstop's engine, tools and predictor into a
// serving runtime: it owns an engine running on the real clock in its own
// goroutine, a tool executor, the program table and the interception loop
// that runs the tools a model calls without a round trip to the client.
//
// A call's journey (Chat): the conversation is rendered with the model's
// chat template and tokenized; the engine schedules it under the configured
// policy with the call's program id; every token the model writes goes
// through the tokenizer's streaming decoder and the template's streaming
// tool-call parser (controller.go). When a turn ends with tool calls that
// are all registered with the runtime, the call pauses (the policy decides
// preserve, swap or discard for its KV), the tools run in parallel, their
// results are rendered with the template, tokenized and appended
// (engine.Resume), and generation continues. Tool calls of tools the client
// declared but did not register end the call with finish reason
// "tool_calls"; the client's next call of the program resumes it and finds
// its prefix in the KV prefix cache.
//
// The runtime is usable in-process (Chat, Invoke, Programs) and behind the
// OpenAI-compatible HTTP server of package runtime/api.
package runtime

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pitstop-llm/pitstop/engine"
	"github.com/pitstop-llm/pitstop/engine/policy"
	"github.com/pitstop-llm/pitstop/engine/sim"
	"github.com/pitstop-llm/pitstop/models/chat"
	"github.com/pitstop-llm/pitstop/models/tokenizer"
	"github.com/pitstop-llm/pitstop/predictor"
	"github.com/pitstop-llm/pitstop/runtime/remote"
	"github.com/pitstop-llm/pitstop/tools"
)

// Defaults of Config.
const (
	DefaultPolicy           = "pitstop"
	DefaultProfile          = "a100-80g-llama3-8b"
	DefaultMaxToolRounds    = 8
	DefaultMaxContextTokens = 32768
	DefaultMaxGenerated     = 16384
	DefaultProgramTTL       = 15 * time.Minute
	// DefaultAnonymousProgramTTL keeps single calls' rows briefly.
	DefaultAnonymousProgramTTL = 30 * time.Second
)

// Config configures a Runtime. The zero value serves the scripted test
// model under the default policy and profile, unpaced.
type Config struct {
	// Model is the model served (nil: the scripted test model, for tests).
	Model Model
	// Policy names the scheduling policy (engine/policy; default
	// DefaultPolicy). PolicyImpl, when set, is used instead. Either way the
	// engine's prefix cache is on: client-side tool calls resume through it.
	Policy     string
	PolicyImpl engine.Policy
	// Executor, when set, runs the engine's iterations: a real executor
	// such as models/cpu's (see NewCPUBackend), whose sampled tokens are
	// the output of a model whose Script is nil. Engine must then be set
	// too; Profile only describes the device (its handling cost model is
	// Engine.Cost), and KVTokens, HostKVTokens and Pace are not used.
	// Without it the engine runs the simulated executor of Profile, paced
	// on the real clock.
	Executor engine.Executor
	// Engine is the engine configuration that goes with Executor.
	Engine *engine.Config
	// Profile is the simulated device (nil: DefaultProfile).
	Profile *sim.Profile
	// KVTokens overrides the profile's device KV capacity in tokens (0:
	// the profile's), e.g. to test a full KV memory.
	KVTokens int
	// HostKVTokens overrides the host tier's capacity in tokens (0: the
	// profile's; negative: no host tier).
	HostKVTokens int
	// Pace scales the simulated iteration time the engine sleeps: 1 serves
	// at the profiled device's speed, 0.1 ten times faster, 0 does not sleep.
	Pace float64
	// Tools is the registry of server-side tools (nil: a registry with the
	// built-in tools, http_get off).
	Tools *tools.Registry
	// ToolExecutor configures the tool executor (its Observer is chained
	// after the runtime's own).
	ToolExecutor tools.ExecutorConfig
	// Durations are the tool-duration statistics (nil: a fresh estimator).
	// They are updated from every tool run and predict each tool pause's
	// duration for the engine's handling.
	Durations *predictor.DurationEstimator
	// Length predicts each call segment's output length (tokens before its
	// tool call, or to its end) from what the runtime knows before it runs:
	// the prompt's text, the tools offered, the program's history. It is
	// engine.Forecast.Predicted.Decode, what the policy ranks and handles
	// by. LoadLength gives the ONNX model or the history-based estimate
	// (with the reason when ONNX Runtime could not be loaded); nil: the
	// history-based estimate.
	Length predictor.LengthPredictor
	// MaxToolRounds caps server-side tool rounds in one call (default
	// DefaultMaxToolRounds); one more ends the call with an ErrToolLoop.
	MaxToolRounds int
	// MaxContextTokens caps a call's prompt (default: the model's
	// MaxContext when it has one, else DefaultMaxContextTokens). A model
	// with a MaxContext (its position limit) also caps the whole context:
	// a call reaching it finishes with reason "length"; server-side tool
	// results that would leave the model less than an eighth of it (at
	// most 256 tokens) to answer are cut to fit, long ones first, with a
	// note in the text and ToolRun.Truncated set (a call fails with a
	// context-length error only when even the results' markup overflows).
	MaxContextTokens int
	// MaxGenerated caps the tokens one call generates (default
	// DefaultMaxGenerated); reaching it finishes with reason "length".
	MaxGenerated int
	// ProgramTTL is how long an idle program stays in the table (default
	// DefaultProgramTTL).
	ProgramTTL time.Duration
	// AnonymousProgramTTL is how long the row of a call made without a
	// program id stays after the call (default DefaultAnonymousProgramTTL):
	// nobody can name it again, so it is kept only to be seen.
	AnonymousProgramTTL time.Duration
	// ClientToolTTL is how long a call's sequence stays paused after its
	// tool calls went back to the client, for the program's next call to
	// resume it (default DefaultClientToolTTL; negative: never, the next
	// call starts afresh and relies on the prefix cache alone).
	ClientToolTTL time.Duration
	// StrictToolCalls runs only the tool calls the model opened with a
	// marker token, a token of its tokenizer's own for the template's
	// tool-call markup (docs/tool-call-provenance.md). Off (the default),
	// calls that text alone makes also run where the model has no such
	// token (a tokenizer without one, Llama 3.1's JSON calls without
	// <|python_tag|>), and New logs a warning; on, they are content.
	StrictToolCalls bool
	// OfferTools says which tools a call offers the model: OfferDeclared
	// (the default) the tools its request declares; OfferRegistered also
	// the registered server-side tools the tenant sees, declared or not
	// (they change the prompt, so only when the operator asks).
	OfferTools OfferTools
	// ConstrainToolCalls decodes every tool call under the grammar of the
	// offered tools' names and parameters (models/grammar), as tools with
	// strict: true always are: a call names an offered tool and its
	// arguments validate.
	ConstrainToolCalls bool
	// DisableTenantShare turns off the sharing of the engine between
	// tenants (tenantShare): an ablation, for measuring what it does.
	DisableTenantShare bool
	// Remote, when set, serves every chat call on the router's backends
	// (engines the runtime does not run) instead of the engine: the tools,
	// programs, tenants and streaming stay the runtime's (remote_call.go).
	// Model is then not served: calls name the backends' models.
	Remote *remote.Router
	// Trace, when set, receives one JSONL predictor.TraceRecord per segment
	// of each finished call, written when the call finishes.
	Trace io.Writer
	// Logger (nil: slog.Default()).
	Logger *slog.Logger
}

// Runtime serves chat calls on an engine it owns. Its methods are safe for
// concurrent use.
type Runtime struct {
	cfg     Config
	model   Model
	tmpl    chat.Template
	tok     *tokenizer.Tokenizer
	stop    map[int32]bool
	markup  map[int32]string // marker tokens: the tool-call markup's own tokens
	prov    chat.Provenance  // where the parsers accept tool-call markup from
	eos     int32
	profile *sim.Profile
	ecfg    engine.Config
	// policy is the scheduling policy as built, before wrapPolicy (its own
	// read-only state, on the engine goroutine).
	policy engine.Policy
	// policyName names the policy in handling explanations.
	policyName string
	queuesSeen map[string]bool // policy queues reported to /metrics (engine goroutine)
	clock      *engine.RealClock
	eng        *engine.Engine
	reg        *tools.Registry
	exec       *tools.Executor
	durations  *predictor.DurationEstimator
	// classDurations predicts server-side tool calls from their tool and
	// argument class (a shell command's program, a URL's host), over
	// durations' statistics; the per-tool median is its floor.
	classDurations *predictor.ClassDurations
	length         *lengthState
	metrics        *Metrics
	programs       *programTable
	engineExpiring atomic.Bool // an expiry of the engine's program table is posted and not done (expireEngine)
	trace          *traceWriter
	log            *slog.Logger
	maxPrompt      int // tokens a prompt may have: the context cap or the device, the smaller
	// maxTokenBytes is the longest text one token stands for: a prompt's
	// bytes bound its tokens from below (promptTooLong).
	maxTokenBytes int
	tenants       *tenantTable
	ctxCap        int // tokens a sequence may hold: the model's position limit (0: none)
	gram          grammars
	nextID        atomic.Uint64
	started       time.Time
	salter        *cacheSalter // a call's prefix-cache namespace (cache_salt.go)

	mu     sync.Mutex
	closed bool
	calls  map[*Call]struct{} // unfinished calls

	parkMu sync.Mutex
	parked map[string]*parkEntry // program+thread → sequence parked across client tools

	ctx      context.Context
	cancel   context.CancelFunc
	done     chan struct{} // closed when the engine goroutine has ended
	runErr   error
	janitorD chan struct{}

	// Engine goroutine only.
	live        map[engine.SeqID]*seqCtl
	peakWaiting int
}

// New builds a runtime and starts its engine goroutine. Close stops it.
func New(cfg Config) (*Runtime, error) {
	if cfg.Pace < 0 {
		return nil, fmt.Errorf("runtime: negative pace %g", cfg.Pace)
	}
	if cfg.KVTokens < 0 {
		return nil, fmt.Errorf("runtime: negative KV capacity %d", cfg.KVTokens)
	}
	if cfg.MaxToolRounds <= 0 {
		cfg.MaxToolRounds = DefaultMaxToolRounds
	}
	if cfg.Executor != nil && cfg.Engine == nil {
		return nil, errors.New("runtime: Config.Executor needs Config.Engine")
	}
	if cfg.MaxGenerated <= 0 {
		cfg.MaxGenerated = DefaultMaxGenerated
	}
	if cfg.ProgramTTL <= 0 {
		cfg.ProgramTTL = DefaultProgramTTL
	}
	if cfg.AnonymousProgramTTL <= 0 {
		cfg.AnonymousProgramTTL = min(DefaultAnonymousProgramTTL, cfg.ProgramTTL)
	}
	if cfg.ClientToolTTL == 0 {
		cfg.ClientToolTTL = DefaultClientToolTTL
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	rt := &Runtime{cfg: cfg, log: cfg.Logger, calls: map[*Call]struct{}{}, live: map[engine.SeqID]*seqCtl{}, parked: map[string]*parkEntry{},
		programs: newProgramTable(cfg.ProgramTTL, cfg.AnonymousProgramTTL), tenants: newTenantTable(), salter: newCacheSalter(), metrics: newMetrics(), started: time.Now(), queuesSeen: map[string]bool{}}

	rt.model = cfg.Model
	if rt.model == nil {
		m, err := NewScriptedTestModel()
		if err != nil {
			return nil, err
		}
		rt.model = m
	}
	if mc, ok := rt.model.(interface{ MaxContext() int }); ok && mc.MaxContext() > 0 {
		rt.ctxCap = mc.MaxContext()
	}
	if cfg.MaxContextTokens <= 0 {
		cfg.MaxContextTokens = DefaultMaxContextTokens
		if rt.ctxCap > 0 {
			cfg.MaxContextTokens = rt.ctxCap
		}
		rt.cfg.MaxContextTokens = cfg.MaxContextTokens
	}
	rt.tmpl, rt.tok = rt.model.Template(), rt.model.Tokenizer()
	rt.maxTokenBytes = longestToken(rt.tok)
	rt.stop = map[int32]bool{}
	for _, s := range rt.tmpl.StopStrings() {
		if id, ok := rt.tok.TokenID(s); ok {
			rt.stop[id] = true
		}
	}
	for _, id := range rt.tok.EOSIDs() {
		rt.stop[id] = true
	}
	rt.markup, rt.prov = toolCallProvenance(rt.model.Name(), rt.tmpl, rt.tok, rt.stop, cfg.StrictToolCalls, rt.log)
	if st, ok := rt.model.(interface{ StopTokens() []int32 }); ok {
		for _, id := range st.StopTokens() {
			rt.stop[id] = true
		}
	}
	if id, ok := rt.tok.TokenID(rt.tmpl.EndOfTurn()); ok {
		rt.eos = id
		rt.stop[id] = true
	} else {
		return nil, fmt.Errorf("runtime: the tokenizer of model %s has no %q token", rt.model.Name(), rt.tmpl.EndOfTurn())
	}

	rt.profile = cfg.Profile
	if rt.profile == nil {
		p, err := sim.LoadProfile(DefaultProfile)
		if err != nil {
			return nil, err
		}
		rt.profile = p
	}
	pol := cfg.PolicyImpl
	if pol == nil {
		name := cfg.Policy
		if name == "" {
			name = DefaultPolicy
		}
		p, err := policy.New(name, policyOptions(cfg))
		if err != nil {
			return nil, fmt.Errorf("runtime: %w", err)
		}
		pol = p
	}
	rt.policy = pol
	var ecfg engine.Config
	var exe engine.Executor
	if cfg.Executor != nil {
		ecfg, exe = *cfg.Engine, realExecutor{cfg.Executor}
	} else {
		ecfg = engineConfig(rt.profile, cfg.KVTokens, cfg.HostKVTokens)
		exe = &pacedExecutor{sim: sim.NewExecutor(rt.profile), pace: cfg.Pace}
	}
	rt.ecfg = ecfg
	watermark := int(0.01 * float64(ecfg.NumBlocks))
	rt.maxPrompt = min(cfg.MaxContextTokens, (ecfg.NumBlocks-watermark)*ecfg.BlockSize-1)

	rt.reg = cfg.Tools
	if rt.reg == nil {
		rt.reg = tools.NewRegistry()
		if err := tools.RegisterBuiltins(rt.reg, tools.BuiltinConfig{}); err != nil {
			return nil, err
		}
	}
	rt.length = newLengthState(cfg.Length, rt.metrics, rt.log)
	rt.durations = cfg.Durations
	if rt.durations == nil {
		rt.durations = predictor.NewDurationEstimator(predictor.DurationOptions{})
	}
	rt.classDurations = predictor.NewClassDurationsOver(rt.durations)
	for name, prior := range builtinPriors {
		if _, known := rt.durations.Stats(name); !known {
			if _, ok := rt.reg.Get(name); ok {
				rt.durations.SetPrior(name, prior)
			}
		}
	}
	xcfg := cfg.ToolExecutor
	user := xcfg.Observer
	xcfg.Observer = tools.ObserverFunc(func(name string, d time.Duration, isError, cached bool) {
		rt.metrics.toolFinished(name, d.Seconds(), isError, cached)
		if !cached {
			rt.durations.Observe(name, d.Seconds())
		}
		if user != nil {
			user.ToolFinished(name, d, isError, cached)
		}
	})
	if xcfg.Logger == nil {
		xcfg.Logger = cfg.Logger
	}
	exec, err := tools.NewExecutor(rt.reg, xcfg)
	if err != nil {
		return nil, err
	}
	rt.exec = exec
	if cfg.Trace != nil {
		rt.trace = &traceWriter{w: cfg.Trace, log: rt.log}
	}

	rt.clock = engine.NewRealClock()
	rt.policyName = cfg.Policy
	if cfg.PolicyImpl != nil || rt.policyName == "" {
		rt.policyName = DefaultPolicy
		if cfg.PolicyImpl != nil {
			rt.policyName = fmt.Sprintf("%T", cfg.PolicyImpl)
		}
	}
	eng, err := engine.New(ecfg, rt.clock, exe, wrapPolicy(pol, !cfg.DisableTenantShare), engine.Observer(rt))
	if err != nil {
		exec.Close()
		return nil, fmt.Errorf("runtime: %w", err)
	}
	rt.eng = eng
	if cfg.Remote != nil {
		if err := cfg.Remote.Register(rt.metrics.Registry); err != nil {
			exec.Close()
			return nil, fmt.Errorf("runtime: %w", err)
		}
	}
	rt.metrics.kvBlocks.WithLabelValues("total").Set(float64(ecfg.NumBlocks))
	rt.metrics.kvBlocks.WithLabelValues("free").Set(float64(ecfg.NumBlocks))
	rt.metrics.hostBlocks.WithLabelValues("capacity").Set(float64(eng.Host().Capacity()))

	rt.ctx, rt.cancel = context.WithCancel(context.Background())
	rt.done = make(chan struct{})
	rt.janitorD = make(chan struct{})
	go rt.runEngine()
	go rt.janitor()
	return rt, nil
}

// builtinPriors are the expected durations, in seconds, of the built-in
// tools, until their own statistics take over: the local ones are
// sub-millisecond; http_get is a network round trip.
var builtinPriors = map[string]float64{
	tools.CalculatorTool: 0.001, tools.CurrentTimeTool: 0.001, tools.UnitConvertTool: 0.001, tools.HTTPGetTool: 0.5,
}

// engineConfig sizes the engine from a profile.
func engineConfig(p *sim.Profile, kvTokens, hostTokens int) engine.Config {
	numBlocks := p.NumBlocks()
	if kvTokens > 0 {
		numBlocks = max((kvTokens+p.BlockSize-1)/p.BlockSize, 1)
	}
	host := p.HostBlocks()
	switch {
	case hostTokens > 0:
		host = (hostTokens + p.BlockSize - 1) / p.BlockSize
	case hostTokens < 0:
		host = 0
	}
	return engine.Config{
		NumBlocks:         numBlocks,
		BlockSize:         p.BlockSize,
		HostBlocks:        host,
		MaxBatchedTokens:  p.MaxBatchedTokens,
		MaxSeqs:           p.MaxSeqs,
		SwapBlocksPerIter: p.Swap.BlocksPerIter,
		Cost:              p.HandlingCost(),
		HostBlockBytes:    p.BlockBytes(),
	}
}

func (rt *Runtime) runEngine() {
	defer close(rt.done)
	err := rt.eng.Run(rt.ctx)
	if err != nil && !errors.Is(err, context.Canceled) {
		rt.log.Error("engine stopped", "err", err)
		rt.runErr = err
	}
	rt.mu.Lock()
	rt.closed = true
	calls := make([]*Call, 0, len(rt.calls))
	for c := range rt.calls {
		calls = append(calls, c)
	}
	rt.mu.Unlock()
	// The engine goroutine is gone: nothing else touches the calls' engine
	// state any more.
	for _, c := range calls {
		res := c.partialResult()
		res.Err = errorf(ErrUnavailable, "", "server_shutting_down", "the runtime stopped before the call finished")
		c.complete(res)
	}
}

func (rt *Runtime) janitor() {
	defer close(rt.janitorD)
	// Both program tables expire in O(expired) work per tick (a heap by
	// due time: programs_expiry.go here, engine/programs_expiry.go on the
	// engine's goroutine), so they tick often: a row goes within a
	// sixteenth of the shorter TTL (at most a second) after its own.
	shortest := min(rt.cfg.ProgramTTL, rt.cfg.AnonymousProgramTTL)
	t := time.NewTicker(min(max(shortest/16, 10*time.Millisecond), time.Second))
	defer t.Stop()
	for {
		select {
		case <-rt.ctx.Done():
			return
		case now := <-t.C:
			rt.programs.expire(now)
			rt.metrics.programs.Set(float64(rt.programs.len()))
			rt.expireEngine()
		}
	}
}

// expirePrograms drops programs idle for longer than the TTL, in the
// runtime's table and in the engine's.
func (rt *Runtime) expirePrograms() {
	rt.programs.expire(time.Now())
	rt.metrics.programs.Set(float64(rt.programs.len()))
	rt.expireEngine()
}

// programTTL is how long the engine keeps a call's program row after the
// program's last call: the runtime table's TTL for it.
func (rt *Runtime) programTTL(anonymous bool) time.Duration {
	if anonymous {
		return rt.cfg.AnonymousProgramTTL
	}
	return rt.cfg.ProgramTTL
}

// expireEngine drops the engine's idle programs on its goroutine, a batch
// of due rows per posted step (the engine's calls iterate in between), one
// run of steps at a time (no program rows there for a router's remote
// calls).
func (rt *Runtime) expireEngine() {
	if !rt.engineExpiring.CompareAndSwap(false, true) {
		return
	}
	var step func()
	step = func() {
		if _, more := rt.eng.Programs().Expire(rt.clock.Now()); more {
			rt.eng.Post(step)
			return
		}
		rt.engineExpiring.Store(false)
	}
	rt.eng.Post(step)
}

// Close stops the engine; unfinished calls fail with ErrUnavailable. It
// waits for the engine goroutine to end.
func (rt *Runtime) Close() error {
	rt.mu.Lock()
	rt.closed = true
	rt.mu.Unlock()
	rt.cancel()
	<-rt.done
	<-rt.janitorD
	rt.exec.Close()
	return rt.runErr
}

// Model is the model served.
func (rt *Runtime) Model() Model { return rt.model }

// Tools is the registry of server-side tools.
func (rt *Runtime) Tools() *tools.Registry { return rt.reg }

// Durations are the tool-duration statistics.
func (rt *Runtime) Durations() *predictor.DurationEstimator { return rt.durations }

// Metrics are the runtime's Prometheus metrics.
func (rt *Runtime) Metrics() *Metrics { return rt.metrics }

// Profile is the simulated device.
func (rt *Runtime) Profile() *sim.Profile { return rt.profile }

// Started is when the runtime was built.
func (rt *Runtime) Started() time.Time { return rt.started }

// onEngine runs fn on the engine goroutine and waits for it.
func (rt *Runtime) onEngine(ctx context.Context, fn func()) error {
	done := make(chan struct{})
	rt.eng.Post(func() { fn(); close(done) })
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-rt.done:
		select {
		case <-done:
			return nil
		default:
		}
		return errorf(ErrUnavailable, "", "server_shutting_down", "the runtime is stopped")
	}
}

// EngineState is a snapshot of the engine.
type EngineState struct {
	Live    int `json:"live"` // unfinished calls in the engine
	Waiting int `json:"waiting"`
	Running int `json:"running"`
	Swapped int `json:"swapped"`
	Paused  int `json:"paused"`
	// Parked are the paused calls waiting for a program's next call after
	// their tool calls went back to the client (included in Live, Paused).
	Parked int `json:"parked"`
	// PeakWaiting is the most runnable calls an iteration left out of its
	// batch since the start (waiting for memory or for the token budget).
	PeakWaiting int `json:"peak_waiting"`
	UsedBlocks  int `json:"used_blocks"`
	FreeBlocks  int `json:"free_blocks"`
	TotalBlocks int `json:"total_blocks"`
	HostUsed    int `json:"host_used"`
	HostBlocks  int `json:"host_blocks"`
	// Leaked is the number of device blocks and host slots held by no live
	// call; CheckErr the block manager's invariant check. Both must be
	// zero/nil at all times.
	Leaked   int    `json:"leaked"`
	CheckErr string `json:"check_error,omitempty"`
	Calls    int    `json:"calls"` // unfinished calls in the runtime
	// Queues counts the runnable calls not on the device by the policy's
	// queue ("promoted" for calls moved ahead by anti-starvation; policies
	// without queues have one, "0").
	Queues map[string]int `json:"queues"`
}

// Engine takes a snapshot of the engine and runs its invariant check
// (engine.Check and engine.Leaked) on the engine goroutine.
func (rt *Runtime) Engine(ctx context.Context) (EngineState, error) {
	var st EngineState
	err := rt.onEngine(ctx, func() {
		st.Live = rt.eng.Live()
		for _, ctl := range rt.live {
			switch ctl.seq.State() {
			case engine.Waiting:
				st.Waiting++
			case engine.Running:
				st.Running++
			case engine.Swapped:
				st.Swapped++
			case engine.Paused:
				st.Paused++
			}
		}
		b := rt.eng.Blocks()
		st.UsedBlocks, st.FreeBlocks, st.TotalBlocks = b.UsedBlocks(), b.FreeBlocks(), b.NumBlocks()
		st.HostUsed, st.HostBlocks = rt.eng.Host().Used(), rt.eng.Host().Capacity()
		st.Leaked = rt.leaked()
		st.PeakWaiting = rt.peakWaiting
		st.Queues = map[string]int{}
		for q, n := range rt.eng.QueueLengths() {
			st.Queues[queueLabel(q)] = n
		}
		rt.parkMu.Lock()
		st.Parked = len(rt.parked)
		rt.parkMu.Unlock()
		if err := rt.eng.Check(); err != nil {
			st.CheckErr = err.Error()
		}
		rt.refreshGauges(&st)
	})
	rt.mu.Lock()
	st.Calls = len(rt.calls)
	rt.mu.Unlock()
	return st, err
}

// Check verifies the engine's block invariants and that no block leaked.
func (rt *Runtime) Check(ctx context.Context) error {
	st, err := rt.Engine(ctx)
	if err != nil {
		return err
	}
	if st.CheckErr != "" {
		return fmt.Errorf("runtime: engine invariants broken: %s", st.CheckErr)
	}
	if st.Leaked != 0 {
		return fmt.Errorf("runtime: %d KV blocks leaked", st.Leaked)
	}
	return nil
}

// leaked is the number of device blocks and host slots in use that no live
// call holds (engine goroutine). Unlike engine.Leaked it counts a block
// shared by several calls (a common prefix) once.
func (rt *Runtime) leaked() int {
	held := make(map[int32]struct{})
	host := 0
	for _, st := range rt.live {
		for _, b := range st.seq.Blocks() {
			held[b] = struct{}{}
		}
		host += len(st.seq.HostSlots())
	}
	return rt.eng.Blocks().UsedBlocks() - len(held) + rt.eng.Host().Used() - host
}

// refreshGauges sets the state gauges from a snapshot (engine goroutine).
func (rt *Runtime) refreshGauges(st *EngineState) {
	m := rt.metrics
	m.queue.WithLabelValues("waiting").Set(float64(st.Waiting))
	m.queue.WithLabelValues("running").Set(float64(st.Running))
	m.queue.WithLabelValues("swapped").Set(float64(st.Swapped))
	m.queue.WithLabelValues("paused").Set(float64(st.Paused))
	m.kvBlocks.WithLabelValues("used").Set(float64(st.UsedBlocks))
	m.kvBlocks.WithLabelValues("free").Set(float64(st.FreeBlocks))
	m.kvBlocks.WithLabelValues("total").Set(float64(st.TotalBlocks))
	m.hostBlocks.WithLabelValues("used").Set(float64(st.HostUsed))
	m.hostBlocks.WithLabelValues("capacity").Set(float64(st.HostBlocks))
	m.programs.Set(float64(rt.programs.len()))
	m.policyClasses.Set(float64(len(rt.policyClasses())))
	for t, n := range rt.tenants.active() {
		m.tenantActive.WithLabelValues(tenantLabel(t)).Set(float64(n))
	}
	// Queues that emptied since the last scrape read 0, not their old length.
	for q := range rt.queuesSeen {
		if _, ok := st.Queues[q]; !ok {
			m.policyQueue.WithLabelValues(rt.policyName, q).Set(0)
		}
	}
	for q, n := range st.Queues {
		m.policyQueue.WithLabelValues(rt.policyName, q).Set(float64(n))
		rt.queuesSeen[q] = true
	}
}

// queueLabel names a policy queue for metrics.
func queueLabel(q int) string {
	if q < 0 {
		return "promoted"
	}
	return strconv.Itoa(q)
}

// Programs returns the tenant's rows of the program table (every tenant's
// with all), each row with the engine's current service and wait.
func (rt *Runtime) Programs(ctx context.Context, tenant string, all bool) ([]ProgramInfo, error) {
	err := rt.onEngine(ctx, func() {
		rt.eng.Programs().Each(func(p *engine.ProgramStats) {
			rt.programs.engineStats(p.ID, p.Service, p.Wait, p.CriticalPath())
		})
	})
	if err != nil {
		var e *Error
		if !errors.As(err, &e) {
			return nil, err
		}
	}
	return rt.programs.list(tenant, all), nil
}

// Program returns the tenant's program id from the program table.
func (rt *Runtime) Program(ctx context.Context, tenant, id string) (ProgramInfo, bool) {
	key := programKey(tenant, id)
	_ = rt.onEngine(ctx, func() {
		if p := rt.eng.Programs().Get(key); p != nil {
			rt.programs.engineStats(p.ID, p.Service, p.Wait, p.CriticalPath())
		}
	})
	return rt.programs.get(key)
}

// SetTenantLimits sets the limits of tenants: defaults for those not named
// in perTenant. Calls in flight keep running; the next calls obey them.
func (rt *Runtime) SetTenantLimits(defaults TenantLimits, perTenant map[string]TenantLimits) {
	rt.tenants.set(defaults, perTenant)
}

// Observe implements engine.Observer (engine goroutine).
func (rt *Runtime) Observe(ev *engine.Event) {
	switch ev.Kind {
	case engine.EvIteration:
		rt.metrics.iteration(ev.Iter)
		rt.peakWaiting = max(rt.peakWaiting, ev.Iter.Waiting)
	case engine.EvPaused:
		rt.metrics.handling.WithLabelValues(ev.Handling.String(), "paused").Inc()
		if ctl := rt.live[ev.Seq.ID()]; ctl != nil {
			ctl.paused(ev)
		}
	case engine.EvHandled:
		rt.metrics.handling.WithLabelValues(ev.Handling.String(), "changed").Inc()
		if ctl := rt.live[ev.Seq.ID()]; ctl != nil {
			ctl.handled(ev)
		}
	case engine.EvFinished:
		if ctl := rt.live[ev.Seq.ID()]; ctl != nil {
			delete(rt.live, ev.Seq.ID())
			ctl.finished(ev)
		}
	}
}

// policyOptions are the serving policy's options: the defaults, with what
// pitstop learns about a tenant's programs (its class's population) dropped
// once the tenant has been idle as long as the program table keeps an idle
// program (cfg.ProgramTTL). By then its programs' own state is gone too, so a
// returning tenant starts cold either way, and memory stays bounded by the
// tenants active within the TTL rather than every tenant ever seen (a
// population holds about 200 kB; docs/results-policies.md, session 16,
// classes16).
//
// A program idle past the TTL is forgotten here and in the engine (a later
// call with its id starts a new program), so pitstop counts it complete no
// later than that: its ProgramIdle is at most the TTL. With serve's default
// TTL (15 min) that is the policy's own default (120 s), unchanged; a
// shorter TTL no longer leaves the policy adding a new program's calls to
// the old one's row, nor keeps the population of a tenant gone since the
// TTL waiting on that row.
func policyOptions(cfg Config) policy.Options {
	ttl := cfg.ProgramTTL.Seconds()
	o := policy.Options{PitstopClassIdle: ttl}
	if idle := o.Defaults().ProgramIdle; ttl < idle {
		o.ProgramIdle = ttl
	}
	return o
}
