package remote

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/pitstop-llm/pitstop/cluster"
	"github.com/pitstop-llm/pitstop/engine/sim"
)

// Defaults of Config.
const (
	DefaultBalancer       = "pitstop"
	DefaultHealthInterval = 2 * time.Second
	DefaultHealthTimeout  = 2 * time.Second
	// DefaultAging credits a waiting call 1,000 tokens of service per
	// second it waits.
	DefaultAging = 1000.0
	// DefaultProgramTTL is the runtime's program TTL.
	DefaultProgramTTL = 15 * time.Minute
	// DefaultAffinitySlack is SGLang's router's threshold for the same
	// decision (balance_abs_threshold): 32 calls.
	DefaultAffinitySlack = 32
	// DefaultProfile is the cost model the balancer assumes of a backend
	// whose speed it does not know (cluster.Speed).
	DefaultProfile = "a100-80g-llama3-8b"
)

// Config configures a Router.
type Config struct {
	// Balancer names the cluster balancer (default DefaultBalancer).
	Balancer string
	// HealthInterval is how often each backend is checked (GET /v1/models);
	// HealthTimeout bounds one check.
	HealthInterval, HealthTimeout time.Duration
	// AffinitySlack keeps a program's next call on the backend that holds
	// its context unless that backend's queue is longer than the shortest
	// by more than this many calls (0: DefaultAffinitySlack; negative: no
	// affinity, the balancer alone decides every call).
	AffinitySlack int
	// Aging is the tokens of service a waiting call is credited per second
	// of the router's clock, so that a program with much service does not
	// wait forever behind newer ones (0: DefaultAging; negative: none).
	Aging float64
	// SwapAfter is the predicted tool time from which a program's
	// llama.cpp slot is saved or erased while it waits (0:
	// DefaultSwapAfter).
	SwapAfter time.Duration
	// ProgramTTL is how long the router remembers an idle program's rank
	// and home (0: DefaultProgramTTL).
	ProgramTTL time.Duration
	// Order is the admission queues' order: "pitstop" (the default: the
	// program's attained service, least first) or "fcfs" (arrival order,
	// the baseline).
	Order string
	// Transport, when set, carries the requests to the backends.
	Transport http.RoundTripper
	// Registerer takes the per-backend metrics (nil: not registered until
	// Register; a runtime with Config.Remote registers them with its own).
	Registerer prometheus.Registerer
	Logger     *slog.Logger
}

// Router sends generations to backends. Its methods are safe for
// concurrent use.
type Router struct {
	cfg    Config
	log    *slog.Logger
	m      *metrics
	client *http.Client
	speed  cluster.Speed

	mu       sync.Mutex
	backends []*Backend
	bal      cluster.Balancer
	holds    map[string]*cluster.Replica // backend → its record of programs' contexts
	attained map[string]float64          // program → tokens of service so far: its rank
	lastUsed map[string]time.Time        // program → its last generation's end
	work     map[*Backend]int            // tokens of the calls in flight or queued
	start    time.Time

	stop chan struct{}
	done chan struct{}
}

// New builds a router over specs, checks every backend once (an
// unreachable one is a warning: the health check keeps trying it) and
// starts the health checks. Close stops them.
func New(cfg Config, specs []Spec) (*Router, error) {
	if cfg.Balancer == "" {
		cfg.Balancer = DefaultBalancer
	}
	if cfg.HealthInterval <= 0 {
		cfg.HealthInterval = DefaultHealthInterval
	}
	if cfg.HealthTimeout <= 0 {
		cfg.HealthTimeout = DefaultHealthTimeout
	}
	if cfg.SwapAfter <= 0 {
		cfg.SwapAfter = DefaultSwapAfter
	}
	if cfg.ProgramTTL <= 0 {
		cfg.ProgramTTL = DefaultProgramTTL
	}
	if cfg.Aging == 0 {
		cfg.Aging = DefaultAging
	}
	if cfg.AffinitySlack == 0 {
		cfg.AffinitySlack = DefaultAffinitySlack
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	switch cfg.Order {
	case "":
		cfg.Order = OrderPitstop
	case OrderPitstop, OrderFCFS:
	default:
		return nil, fmt.Errorf("unknown router order %q (valid: pitstop, fcfs)", cfg.Order)
	}
	bal, err := cluster.New(cfg.Balancer, cluster.Options{})
	if err != nil {
		return nil, err
	}
	p, err := sim.LoadProfile(DefaultProfile)
	if err != nil {
		return nil, err
	}
	tr := cfg.Transport
	if tr == nil {
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.MaxIdleConnsPerHost = 1024
		t.ResponseHeaderTimeout = 10 * time.Minute
		tr = t
	}
	r := &Router{cfg: cfg, log: cfg.Logger, m: newMetrics(cfg.Registerer), client: &http.Client{Transport: tr}, bal: bal,
		speed: cluster.Speed{BaseS: p.Iter.Base, PrefillTokenS: p.Iter.PrefillToken, DecodeSeqS: p.Iter.DecodeSeq, DecodeCtxS: p.Iter.DecodeCtx},
		holds: map[string]*cluster.Replica{}, attained: map[string]float64{}, lastUsed: map[string]time.Time{}, work: map[*Backend]int{}, start: time.Now(),
		stop: make(chan struct{}), done: make(chan struct{})}
	for _, s := range specs {
		if err := r.Add(s); err != nil {
			return nil, err
		}
	}
	go r.healthLoop()
	return r, nil
}

// Register adds the router's per-backend metrics to reg (once).
func (r *Router) Register(reg prometheus.Registerer) error {
	return r.m.register(reg)
}

// Close stops the health checks.
func (r *Router) Close() {
	close(r.stop)
	<-r.done
}

// Balancer is the balancer's name.
func (r *Router) Balancer() string { return r.bal.Name() }

// Add adds a backend and checks it once.
func (r *Router) Add(s Spec) error {
	if s.Weight <= 0 {
		s.Weight = 1
	}
	if s.Kind == "" {
		s.Kind = KindOpenAI
	}
	b, err := newBackend(s, r.client)
	if err != nil {
		return err
	}
	r.mu.Lock()
	for _, o := range r.backends {
		if o.name == b.name {
			r.mu.Unlock()
			return fmt.Errorf("backend %s is already there", b.name)
		}
	}
	r.backends = append(r.backends, b)
	r.holds[b.name] = &cluster.Replica{Name: b.name}
	r.mu.Unlock()
	r.checkOne(context.Background(), b)
	return nil
}

// Drain stops sending new calls to a backend; calls in flight there
// finish, queued ones move. It reports whether the backend was found.
func (r *Router) Drain(name string) bool {
	b := r.find(name)
	if b == nil {
		return false
	}
	b.mu.Lock()
	b.draining = true
	b.mu.Unlock()
	b.adm.evict()
	return true
}

// Remove drops a backend; calls in flight there finish, queued ones move.
func (r *Router) Remove(name string) bool {
	r.mu.Lock()
	i := slices.IndexFunc(r.backends, func(b *Backend) bool { return b.name == name })
	if i < 0 {
		r.mu.Unlock()
		return false
	}
	b := r.backends[i]
	r.backends = slices.Delete(r.backends, i, i+1)
	delete(r.holds, name)
	r.mu.Unlock()
	b.mu.Lock()
	b.draining = true
	b.mu.Unlock()
	b.adm.evict()
	r.m.forget(name)
	return true
}

func (r *Router) find(name string) *Backend {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, b := range r.backends {
		if b.name == name {
			return b
		}
	}
	return nil
}

// Backends describes the backends.
func (r *Router) Backends() []BackendInfo {
	r.mu.Lock()
	bs := slices.Clone(r.backends)
	r.mu.Unlock()
	out := make([]BackendInfo, len(bs))
	for i, b := range bs {
		out[i] = b.info()
	}
	return out
}

// Models lists the models the backends serve (each once, in the order
// the backends were added) and the backends serving each.
func (r *Router) Models() []Model {
	var out []Model
	idx := map[string]int{}
	for _, b := range r.Backends() {
		for _, m := range b.Models {
			i, ok := idx[m]
			if !ok {
				i = len(out)
				idx[m] = i
				out = append(out, Model{ID: m})
			}
			out[i].Backends = append(out[i].Backends, b.Name)
		}
	}
	return out
}

// Unavailable reports whether no backend can take a call now (none is up
// and not draining), and when to try again (the next health check).
func (r *Router) Unavailable() (bool, time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, b := range r.backends {
		if b.available() {
			return false, 0
		}
	}
	return true, r.cfg.HealthInterval
}

// Model is a model some backends serve.
type Model struct {
	ID       string
	Backends []string
}

// ProgramDone forgets a program: its rank and where its context is.
func (r *Router) ProgramDone(program string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.forgetLocked(program)
}

// expirePrograms forgets the programs idle for longer than ProgramTTL.
func (r *Router) expirePrograms(now time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for p, t := range r.lastUsed {
		if now.Sub(t) > r.cfg.ProgramTTL {
			r.forgetLocked(p)
		}
	}
}

func (r *Router) forgetLocked(program string) {
	delete(r.attained, program)
	delete(r.lastUsed, program)
	for _, h := range r.holds {
		h.Forget(program)
	}
	if pe, ok := r.bal.(cluster.ProgramEnder); ok {
		pe.ProgramDone(program)
	}
}

func (r *Router) healthLoop() {
	defer close(r.done)
	t := time.NewTicker(r.cfg.HealthInterval)
	defer t.Stop()
	for {
		select {
		case <-r.stop:
			return
		case now := <-t.C:
			r.expirePrograms(now)
			r.mu.Lock()
			bs := slices.Clone(r.backends)
			r.mu.Unlock()
			var wg sync.WaitGroup
			for _, b := range bs {
				wg.Add(1)
				go func() { defer wg.Done(); r.checkOne(context.Background(), b) }()
			}
			wg.Wait()
		}
	}
}

// checkOne health-checks a backend and logs a change of its state.
func (r *Router) checkOne(ctx context.Context, b *Backend) {
	err := b.check(ctx, r.cfg.HealthTimeout)
	up := err == nil
	why := ""
	if err != nil {
		why = err.Error()
		r.m.errors.WithLabelValues(b.name, "health").Inc()
	}
	first := b.checkedOnce()
	if b.setUp(up, why) || first {
		if up {
			r.log.Info("backend up", "backend", b.name, "kind", b.spec.Kind, "models", b.info().Models)
		} else {
			r.log.Warn("backend unreachable: the health check keeps trying it", "backend", b.name, "err", why)
		}
	}
	r.m.up.WithLabelValues(b.name).Set(boolFloat(up))
	r.m.limit.WithLabelValues(b.name).Set(float64(b.adm.currentLimit()))
}

func boolFloat(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// checkedOnce reports, the first time only, that the backend's first
// check is being recorded.
func (b *Backend) checkedOnce() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	first := !b.seen
	b.seen = true
	return first
}

// pick chooses the backend of a generation: the pinned one (a call's
// earlier round ran there) when it is up; else the program's home (the
// backend holding its context) unless its queue is much longer than the
// others' (AffinitySlack); else the balancer's choice among the available
// backends, with each backend's record of the program's context as its
// cached prefix.
func (r *Router) pick(req *Request, pin string) *Backend {
	r.mu.Lock()
	defer r.mu.Unlock()
	var cands []*Backend
	for _, b := range r.backends {
		if req.Exclude[b.name] {
			continue
		}
		if b.name == pin && b.isUp() {
			return b
		}
		if b.available() {
			cands = append(cands, b)
		}
	}
	if len(cands) == 0 {
		return nil
	}
	// A program's next call extends the context it left: its prompt is at
	// least as long as the longest context a backend holds of it, and that
	// backend is its home.
	prompt := req.PromptTokens
	var home *Backend
	shortest := -1
	for _, b := range cands {
		if h, ok := r.holds[b.name].Holds(req.Program); ok && h.Tokens >= prompt {
			prompt, home = h.Tokens, b
		}
		if q := b.adm.queued(); shortest < 0 || q < shortest {
			shortest = q
		}
	}
	// Affinity: the home keeps the program unless its queue is much longer
	// than the shortest (the balancer then weighs the cache against the
	// queues).
	if home != nil && r.cfg.AffinitySlack > 0 && home.adm.queued()-shortest <= r.cfg.AffinitySlack {
		return home
	}
	s := cluster.State{Now: time.Since(r.start), Replicas: make([]cluster.Replica, len(cands))}
	for i, b := range cands {
		rep := *r.holds[b.name] // the program records, by reference
		rep.Weight = b.spec.Weight
		rep.WaitingCalls, rep.RunningCalls = b.adm.queued(), b.adm.running()
		rep.RunningTokens = r.work[b]
		rep.BlockSize, rep.TotalBlocks, rep.FreeBlocks = 16, 1<<24, 1<<24
		rep.MaxSeqs = b.adm.currentLimit()
		rep.Speed = cluster.Speed{BaseS: r.speed.BaseS / rep.Weight, PrefillTokenS: r.speed.PrefillTokenS / rep.Weight,
			DecodeSeqS: r.speed.DecodeSeqS / rep.Weight, DecodeCtxS: r.speed.DecodeCtxS / rep.Weight}
		rep.CachedPrefix = 0
		if h, ok := rep.Holds(req.Program); ok {
			rep.CachedPrefix = min(h.Tokens, prompt)
		}
		s.Replicas[i] = rep
	}
	call := &cluster.Call{Program: req.Program, Thread: req.Thread, PromptTokens: prompt, PredictedDecode: req.PredictedDecode}
	i := r.bal.Pick(call, &s)
	if i < 0 || i >= len(cands) {
		i = 0
	}
	return cands[i]
}

// Admission orders.
const (
	OrderPitstop = "pitstop"
	OrderFCFS    = "fcfs"
)

// Rank is a program's rank: the tokens of service it has had (lower goes
// first); 0 for every call under OrderFCFS.
func (r *Router) Rank(program string) float64 {
	if r.cfg.Order == OrderFCFS {
		return 0
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.attained[program]
}

// key is a call's place in an admission queue, lowest first: its
// program's rank less the aging credit of its wait. Every waiting call is
// credited at the same rate, so the credit's difference between two calls
// is fixed by when they arrived: rank + Aging·arrival orders them as
// rank − Aging·waited does at any later time. Under OrderFCFS it is the
// arrival time alone.
func (r *Router) key(program string) float64 {
	now := time.Since(r.start).Seconds()
	if r.cfg.Order == OrderFCFS {
		return now
	}
	return r.Rank(program) + max(r.cfg.Aging, 0)*now
}

// Generate runs one generation on a backend chosen for it (pin: the
// backend of the call's earlier round, kept when it is up), waiting in
// that backend's admission queue; emit sees the reply's events as they
// arrive and reports whether the event reached the client (content does;
// a server-side tool call it holds does not). A backend that fails before
// any event reached the client moves the generation to another backend
// (the whole conversation is re-sent; emit first sees EventRestart when
// it had seen events of the failed attempt); one that fails after is an
// *Error of kind ErrBackendFailed, as is one that had run tools of its own
// (moving would run them twice). Errors are *Error values or ctx's error.
func (r *Router) Generate(ctx context.Context, req *Request, pin string, emit func(Event) bool) (Reply, error) {
	tried := map[string]bool{}
	for k := range req.Exclude {
		tried[k] = true
	}
	sub := *req
	sub.Exclude = tried
	var lastErr string
	for {
		b := r.pick(&sub, pin)
		if b == nil {
			msg := "no backend is up"
			if lastErr != "" {
				msg += " (last error: " + lastErr + ")"
			}
			return Reply{}, &Error{Kind: ErrNoBackend, Msg: msg, RetryAfter: r.cfg.HealthInterval}
		}
		rep, out, err := r.attempt(ctx, b, &sub, emit)
		if err == nil {
			return rep, nil
		}
		if ctx.Err() != nil {
			return Reply{}, ctx.Err()
		}
		var f *failure
		if !errors.As(err, &f) {
			tried[b.name] = true // errBackendGone: queued, then sent away
			continue
		}
		switch {
		case f.rejected:
			return Reply{}, &Error{Kind: ErrRejected, Backend: b.name, Msg: f.msg}
		case !f.down:
			return Reply{}, &Error{Kind: ErrBadReply, Backend: b.name, Msg: f.msg}
		case out.forwarded:
			return Reply{}, &Error{Kind: ErrBackendFailed, Backend: b.name, Msg: f.msg}
		}
		if out.seen {
			emit(Event{Kind: EventRestart})
		}
		lastErr = b.name + ": " + f.msg
		tried[b.name] = true
		r.m.moved.Inc()
		r.log.Warn("backend failed before any output: moving the call", "backend", b.name, "program", req.Program, "err", f.msg)
	}
}

// delivery is what an attempt's events did: seen (emit saw some) and
// forwarded (one reached the client, or the backend ran tools: the
// generation cannot move).
type delivery struct{ seen, forwarded bool }

// attempt runs a generation on one backend.
func (r *Router) attempt(ctx context.Context, b *Backend, req *Request, emit func(Event) bool) (Reply, delivery, error) {
	rank := r.key(req.Program)
	est := req.PromptTokens + req.PredictedDecode
	r.mu.Lock()
	r.work[b] += est
	r.mu.Unlock()
	defer func() {
		r.mu.Lock()
		r.work[b] -= est
		if r.work[b] <= 0 {
			delete(r.work, b)
		}
		r.mu.Unlock()
	}()
	r.m.queue.WithLabelValues(b.name).Inc()
	err := b.adm.acquire(ctx, rank)
	r.m.queue.WithLabelValues(b.name).Dec()
	if err != nil {
		return Reply{}, delivery{}, err
	}
	r.m.inflight.WithLabelValues(b.name).Inc()
	start := time.Now()
	var first time.Time
	var out delivery
	var held []Event
	slot := -1
	if b.slots != nil {
		var restore string
		slot, restore = b.slots.assign(req.Program)
		if restore != "" {
			if err := b.slotAction(ctx, slot, "restore", restore); err != nil {
				r.log.Warn("llama.cpp slot restore failed: the turn recomputes its context", "backend", b.name, "slot", slot, "err", err)
			}
		}
	}
	rep, err := b.send(ctx, req, int(rank), slot, func(e Event) {
		e.Backend = b.name
		if first.IsZero() {
			first = time.Now()
		}
		if e.Kind == EventBackendToolRound {
			out.forwarded = true // its tools ran: never run them again elsewhere
		}
		if req.Buffered {
			held = append(held, e)
			return
		}
		out.seen = true
		if emit(e) {
			out.forwarded = true
		}
	})
	if err == nil {
		for _, e := range held {
			emit(e)
		}
	}
	d := time.Since(start)
	r.m.inflight.WithLabelValues(b.name).Dec()
	if !first.IsZero() {
		b.adm.observe(first.Sub(start))
		r.m.ttft.WithLabelValues(b.name).Observe(first.Sub(start).Seconds())
	}
	b.adm.release()
	b.booked(d, rep.Usage, err != nil)
	if err != nil {
		var f *failure
		kind := "cancelled"
		if errors.As(err, &f) {
			switch {
			case f.rejected:
				kind = "rejected"
			case f.down:
				kind = "down"
				if ctx.Err() == nil && b.struck() && b.setUp(false, f.msg) {
					r.log.Warn("backend down", "backend", b.name, "err", f.msg)
					r.m.up.WithLabelValues(b.name).Set(0)
				}
			default:
				kind = "bad_reply"
			}
		}
		if ctx.Err() == nil {
			r.m.errors.WithLabelValues(b.name, kind).Inc()
		}
		r.m.calls.WithLabelValues(b.name, "error").Inc()
		return rep, out, err
	}
	rep.Backend = b.name
	r.m.calls.WithLabelValues(b.name, "ok").Inc()
	r.m.latency.WithLabelValues(b.name).Observe(d.Seconds())
	if rep.Usage.CachedTokens >= 0 {
		r.m.promptTokens.WithLabelValues(b.name).Add(float64(rep.Usage.PromptTokens))
		r.m.cachedTokens.WithLabelValues(b.name).Add(float64(rep.Usage.CachedTokens))
	}
	r.mu.Lock()
	miss := rep.Usage.PromptTokens - max(rep.Usage.CachedTokens, 0)
	if rep.Usage.PromptTokens == 0 {
		miss = req.PromptTokens
	}
	r.attained[req.Program] += float64(miss + rep.Usage.CompletionTokens)
	r.lastUsed[req.Program] = time.Now()
	if h := r.holds[b.name]; h != nil {
		h.Hold(req.Program, max(rep.Usage.PromptTokens, req.PromptTokens)+rep.Usage.CompletionTokens, time.Since(r.start))
	}
	r.mu.Unlock()
	return rep, out, nil
}
