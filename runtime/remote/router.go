package remote

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/pitstop-llm/pitstop/cluster"
	"github.com/pitstop-llm/pitstop/engine/sim"
	"github.com/pitstop-llm/pitstop/internal/dueheap"
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
	// and home (0: DefaultProgramTTL), checked every sixteenth of it (at
	// most a second); a call made without a program id is forgotten when
	// it ends (ProgramDone, by the runtime).
	ProgramTTL time.Duration
	// Order is the admission queues' order: "pitstop" (the default: the
	// program's attained service, least first) or "fcfs" (arrival order,
	// the baseline).
	Order string
	// Transport, when set, carries the requests to every backend (their
	// Spec.Transport is then ignored).
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
	used     map[string]*programUse      // program → its last generation's end
	due      dueheap.Heap[*programUse]   // the used programs, the earliest to go first
	free     []*programUse               // forgotten programs' records, for reuse
	start    time.Time
	// pickState and pickCall are pick's input to the balancer, reused from
	// call to call under mu (no balancer keeps them): two allocations less
	// per routed call.
	pickState cluster.State
	pickCall  cluster.Call

	stop chan struct{}
	done chan struct{} // the health loop's end
	// expired is the expiry loop's end (program_expiry.go).
	expired chan struct{}
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
		t.MaxIdleConnsPerHost = maxIdlePerBackend
		t.ResponseHeaderTimeout = headerWait
		tr = t
	}
	r := &Router{cfg: cfg, log: cfg.Logger, m: newMetrics(cfg.Registerer), client: &http.Client{Transport: tr}, bal: bal,
		speed: cluster.Speed{BaseS: p.Iter.Base, PrefillTokenS: p.Iter.PrefillToken, DecodeSeqS: p.Iter.DecodeSeq, DecodeCtxS: p.Iter.DecodeCtx},
		holds: map[string]*cluster.Replica{}, attained: map[string]float64{}, used: map[string]*programUse{}, start: time.Now(),
		stop: make(chan struct{}), done: make(chan struct{}), expired: make(chan struct{})}
	for _, s := range specs {
		if err := r.Add(s); err != nil {
			return nil, err
		}
	}
	go r.healthLoop()
	go r.expireLoop()
	return r, nil
}

// Register adds the router's per-backend metrics to reg (once).
func (r *Router) Register(reg prometheus.Registerer) error {
	return r.m.register(reg)
}

// Close stops the health checks and the programs' expiry.
func (r *Router) Close() {
	close(r.stop)
	<-r.done
	<-r.expired
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
	client, inline, err := r.clientFor(s)
	if err != nil {
		return err
	}
	b, err := newBackend(s, client)
	if err != nil {
		return err
	}
	b.inline = inline
	r.mu.Lock()
	for _, o := range r.backends {
		if o.name == b.name {
			r.mu.Unlock()
			return fmt.Errorf("backend %s is already there", b.name)
		}
	}
	b.met = r.m.bind(b.name)
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
	if b.inline != nil {
		b.inline.close()
	}
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

// Serves reports whether some backend serves model: Models' answer
// without building the list (it is asked on every call).
func (r *Router) Serves(model string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, b := range r.backends {
		if b.serves(model) {
			return true
		}
	}
	return false
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
