package runtime

import (
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/hashicorp/golang-lru/v2/simplelru"

	"github.com/pitstop-llm/pitstop/predictor"
)

// Per-tenant learnt length state (DESIGN.md §12: one tenant's data never
// moves what another tenant's calls are ranked by). Each tenant predicts
// through its own predictor.ServedStep, the experts' mixture and the window
// modes, started cold: from the length model's training median and the
// mixture's cross-source prior, as a new deployment starts. The length
// model itself (shipped, or learnt online) is shared. Calls without a
// tenant (a server without API keys, Go callers that give none) use the
// deployment's own step, kept at the state directory's root as before: a
// single-tenant server predicts and saves as it always did.
//
// At most maxHeld tenants' steps are held in memory, least recently used
// first out (hashicorp/golang-lru's simplelru: strict LRU with a synchronous
// eviction callback. ristretto, already a dependency, admits by frequency
// and applies its sets asynchronously: a tenant's state could be refused or
// dropped unseen, and a reload could read a file older than the state still
// in memory). An evicted step is saved under the state directory (dropped
// without one) and restored when its tenant calls again; one that calls in
// flight still hold stays in memory, beside the cap, until the last of them
// ends, then is saved. Every held step is also saved at Close and with the
// online learner's saves.

// DefaultTenantStates is how many tenants' length states a deployment
// holds in memory by default (--predictor-tenant-states).
const DefaultTenantStates = 128

// tenantStep is one tenant's step and who holds it.
type tenantStep struct {
	tenant string
	step   predictor.ServedStep
	saveMu sync.Mutex    // one save at a time; held while loading
	loaded chan struct{} // closed once restored (or started cold)
	// guarded by tenantSteps.mu
	users   int  // calls holding it
	held    bool // in tenantSteps.held (else in out, or gone)
	pending int  // saves under way
}

// served is the step t predicts with (none when t is nil: no mixture).
func (t *tenantStep) served() predictor.ServedStep {
	if t == nil {
		return predictor.ServedStep{}
	}
	return t.step
}

// tenantSteps holds the tenants' steps. Safe for concurrent use.
type tenantSteps struct {
	median  int
	own     *tenantStep // calls without a tenant
	ownUsed atomic.Bool
	log     *slog.Logger

	mu      sync.Mutex
	held    *simplelru.LRU[string, *tenantStep]
	out     map[string]*tenantStep // evicted, still in use or being saved
	store   *tenantStore           // nil: in memory only
	saves   sync.WaitGroup
	evicted int
	started [2]int // cold, from disk
}

// newTenantSteps holds up to maxHeld tenants' steps beside own, the
// deployment's, each new one started from median.
func newTenantSteps(median int, own predictor.ServedStep, maxHeld int, log *slog.Logger) *tenantSteps {
	if log == nil {
		log = slog.Default()
	}
	ready := make(chan struct{})
	close(ready)
	ts := &tenantSteps{median: median, own: &tenantStep{step: own, loaded: ready}, log: log, out: map[string]*tenantStep{}}
	held, err := simplelru.NewLRU(max(maxHeld, 1), ts.evict)
	if err != nil {
		panic(err) // only for a size below 1
	}
	ts.held = held
	return ts
}

// persist keeps the tenants' steps under stateDir from now on.
func (ts *tenantSteps) persist(stateDir string) error {
	store, err := openTenantStore(stateDir)
	if err != nil {
		return err
	}
	ts.mu.Lock()
	ts.store = store
	ts.mu.Unlock()
	return nil
}

// acquire returns tenant's step for a call, restored or started cold when
// it is not held; release gives it back when the call ends. A restore
// reads the tenant's files outside mu (about 3 ms for 200 classes,
// BenchmarkTenantStepAcquire), so other tenants' calls do not wait on it;
// the tenant's own concurrent calls wait for it to be loaded.
func (ts *tenantSteps) acquire(tenant string) *tenantStep {
	if ts == nil {
		return nil
	}
	if tenant == "" {
		ts.ownUsed.Store(true)
		return ts.own
	}
	ts.mu.Lock()
	t, ok := ts.held.Get(tenant)
	fresh := false
	if !ok {
		if t, ok = ts.out[tenant]; ok {
			delete(ts.out, tenant)
		} else {
			t, fresh = &tenantStep{tenant: tenant, step: predictor.NewServedStep(ts.median), loaded: make(chan struct{})}, true
			// No save of t before it is loaded (saveAll, an eviction).
			t.saveMu.Lock()
		}
		t.held = true
		ts.held.Add(tenant, t)
	}
	t.users++
	store := ts.store
	ts.mu.Unlock()
	if fresh {
		ts.load(t, store)
		t.saveMu.Unlock()
		close(t.loaded)
	}
	<-t.loaded
	return t
}

// load restores t from its saved state, if any (store nil: none). A state
// that cannot be read is a warning and a cold start (the file is replaced
// at the next save).
func (ts *tenantSteps) load(t *tenantStep, store *tenantStore) {
	restored := false
	if store != nil {
		dir := store.dirOf(t.tenant)
		foundMix, errMix := t.step.Mix.Restore(dir)
		foundLed, errLed := t.step.Led.Restore(dir)
		for _, err := range []error{errMix, errLed} {
			if err != nil {
				ts.log.Warn("length predictor: starting a tenant's state afresh; its file will be replaced at the next save", "err", err)
			}
		}
		restored = (foundMix && errMix == nil) || (foundLed && errLed == nil)
	}
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if restored {
		ts.started[1]++
	} else {
		ts.started[0]++
	}
}

// evict is the LRU's callback (under mu): t leaves memory, saved now or,
// while calls hold it, when the last lets go.
func (ts *tenantSteps) evict(tenant string, t *tenantStep) {
	ts.evicted++
	t.held = false
	ts.out[tenant] = t
	if t.users == 0 {
		ts.saveLater(t)
	}
}

// release gives back a step acquire returned.
func (ts *tenantSteps) release(t *tenantStep) {
	if ts == nil || t == nil || t == ts.own {
		return
	}
	ts.mu.Lock()
	defer ts.mu.Unlock()
	t.users--
	if t.users == 0 && !t.held {
		ts.saveLater(t)
	}
}

// tenantStepStats are the counts /metrics shows (no tenant named).
type tenantStepStats struct {
	held, evicted, cold, restored int
}

func (ts *tenantSteps) stats() tenantStepStats {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return tenantStepStats{held: ts.held.Len() + len(ts.out), evicted: ts.evicted, cold: ts.started[0], restored: ts.started[1]}
}

// each calls f with every step that predicts for calls: the tenants' in
// memory, and the deployment's own when calls without a tenant came or
// there is no other.
func (ts *tenantSteps) each(f func(predictor.ServedStep)) {
	ts.mu.Lock()
	steps := ts.held.Values()
	for _, t := range ts.out {
		steps = append(steps, t)
	}
	ts.mu.Unlock()
	if ts.ownUsed.Load() || len(steps) == 0 {
		f(ts.own.step)
	}
	for _, t := range steps {
		f(t.step)
	}
}
