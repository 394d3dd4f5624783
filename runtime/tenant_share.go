package runtime

import (
	"math"
	"time"

	"github.com/pitstop-llm/pitstop/engine"
)

// tenantShare shares the engine between tenants the way Autellix's
// program-level policies share it between programs: by least attained
// service. Each tenant's service (engine time its calls received) decays
// with a half-life, so that the order reflects recent use and a tenant is
// not held back for what it used long ago; a tenant's level is how many
// times (in powers of two) its recent service exceeds the least-served
// active tenant's, and a call's priority is its policy's priority within its
// tenant's level. A tenant that floods the server sinks to a higher level
// and runs in what the others leave; with a single tenant every level is 0
// and the policy's order is unchanged.
//
// It lives on the engine goroutine (the engine calls the policy there).
type tenantShare struct {
	halfLife time.Duration
	quantum  float64 // seconds of service below which tenants are alike
	every    int64   // iterations between level checks

	svc      map[string]float64       // decayed service, seconds
	at       map[string]time.Duration // when svc was last decayed
	active   map[string]int           // calls in the engine
	credited map[engine.SeqID]time.Duration
	level    map[string]int
	checked  int64
	changed  bool // a level changed: re-rank everything
}

// Tenant-share constants: recent use is the last minute or so; a tenant must
// have used twice the least-served one's service (plus a quantum) to sink a
// level; levels are checked every few iterations, cheap next to ranking.
const (
	tenantHalfLife   = 30 * time.Second
	tenantQuantum    = 0.05 // seconds: a few iterations of a full batch
	tenantCheckEvery = 8
	tenantMaxLevel   = 16
	// tenantLevelClass spaces levels far beyond any policy's own classes.
	tenantLevelClass = 1000
)

func newTenantShare() *tenantShare {
	return &tenantShare{halfLife: tenantHalfLife, quantum: tenantQuantum, every: tenantCheckEvery,
		svc: map[string]float64{}, at: map[string]time.Duration{}, active: map[string]int{},
		credited: map[engine.SeqID]time.Duration{}, level: map[string]int{}}
}

// priority places a call's policy priority within its tenant's level.
func (t *tenantShare) priority(s *engine.Sequence, p engine.Priority) engine.Priority {
	if len(t.level) == 0 {
		return p // every tenant at level 0 (always so with one tenant)
	}
	if l := t.level[s.Tenant()]; l > 0 {
		p.Class += float64(l * tenantLevelClass)
	}
	return p
}

// refresh recomputes the levels every few iterations and reports whether
// one changed (every runnable call must then be ranked again).
func (t *tenantShare) refresh(v *engine.View) bool {
	if len(t.active) <= 1 && len(t.level) == 0 {
		return false // one tenant: nothing to share
	}
	if v.Iteration-t.checked >= t.every {
		t.checked = v.Iteration
		t.relevel(v.Now)
	}
	changed := t.changed
	t.changed = false
	return changed
}

// relevel sets each active tenant's level from its decayed service.
func (t *tenantShare) relevel(now time.Duration) {
	least := math.Inf(1)
	for name := range t.active {
		least = math.Min(least, t.decayed(name, now))
	}
	for name := range t.active {
		l := 0
		if ratio := (t.svc[name] + t.quantum) / (least + t.quantum); ratio > 1 {
			l = min(int(math.Log2(ratio)), tenantMaxLevel)
		}
		if t.level[name] != l {
			t.changed = true
			if l == 0 {
				delete(t.level, name)
			} else {
				t.level[name] = l
			}
		}
	}
	for name := range t.level {
		if t.active[name] == 0 {
			delete(t.level, name)
			t.changed = true
		}
	}
}

// decayed brings a tenant's service up to now and returns it.
func (t *tenantShare) decayed(name string, now time.Duration) float64 {
	if dt := now - t.at[name]; dt > 0 {
		t.svc[name] *= math.Exp2(-dt.Seconds() / t.halfLife.Seconds())
		t.at[name] = now
	}
	return t.svc[name]
}

// observe books service per tenant from the engine's events.
func (t *tenantShare) observe(e *engine.Event) {
	if e.Seq == nil {
		return
	}
	s := e.Seq
	switch e.Kind {
	case engine.EvArrived:
		t.active[s.Tenant()]++
	case engine.EvToken, engine.EvPaused, engine.EvPreempted:
		t.credit(s, e.Time)
	case engine.EvFinished:
		t.credit(s, e.Time)
		delete(t.credited, s.ID())
		name := s.Tenant()
		if t.active[name]--; t.active[name] <= 0 {
			delete(t.active, name)
			if t.svc[name] < 1e-9 {
				delete(t.svc, name)
				delete(t.at, name)
			}
		}
	}
}

// credit adds the service a call received since it was last credited.
func (t *tenantShare) credit(s *engine.Sequence, now time.Duration) {
	got := s.Service() - t.credited[s.ID()]
	if got <= 0 {
		return
	}
	t.credited[s.ID()] = s.Service()
	name := s.Tenant()
	t.decayed(name, now)
	t.svc[name] += got.Seconds()
}
