package runtime

import (
	"github.com/pitstop-llm/pitstop/engine"
	"github.com/pitstop-llm/pitstop/handling"
)

// withPrefixCache turns on the engine's prefix cache under any policy and
// changes nothing else: the runtime relies on it so that a program's next
// call (the resume after tools the client ran) finds its KV again. The
// optional interfaces are forwarded exactly as the engine would use them on
// the wrapped policy. With tenants set, the engine is shared between
// tenants (tenantShare) around the policy's own order.
type withPrefixCache struct {
	engine.Policy
	tenants *tenantShare
}

// Priority is the policy's, within the call's tenant level.
func (p withPrefixCache) Priority(v *engine.View, s *engine.Sequence) engine.Priority {
	pr := p.Policy.Priority(v, s)
	if p.tenants != nil {
		pr = p.tenants.priority(s, pr)
	}
	return pr
}

func (p withPrefixCache) Traits() engine.Traits {
	var t engine.Traits
	if tr, ok := p.Policy.(engine.Traiter); ok {
		t = tr.Traits()
	}
	t.PrefixCache = true
	return t
}

// Refresh forwards to the policy (a policy without it never asks), and asks
// when a tenant's level changed.
func (p withPrefixCache) Refresh(v *engine.View) bool {
	refresh := false
	if r, ok := p.Policy.(engine.Refresher); ok {
		refresh = r.Refresh(v)
	}
	if p.tenants != nil && p.tenants.refresh(v) {
		refresh = true
	}
	return refresh
}

// Evict forwards to the policy; without it the engine recomputes.
func (p withPrefixCache) Evict(v *engine.View, s *engine.Sequence) handling.Kind {
	if e, ok := p.Policy.(engine.Evicter); ok {
		return e.Evict(v, s)
	}
	return handling.Discard
}

// Observe forwards events to a policy that observes them, and books
// tenants' service.
func (p withPrefixCache) Observe(e *engine.Event) {
	if p.tenants != nil {
		p.tenants.observe(e)
	}
	if o, ok := p.Policy.(engine.Observer); ok {
		o.Observe(e)
	}
}

// Queue forwards to a policy with queues; without them every call is in
// queue 0.
func (p withPrefixCache) Queue(s *engine.Sequence) int {
	if q, ok := p.Policy.(engine.Queuer); ok {
		return q.Queue(s)
	}
	return 0
}

// shapingPolicy is withPrefixCache for a policy that shapes batches
// (engine.Shaper, e.g. sola): only such a policy gets the hook, so the
// engine's path for the others stays as it is.
type shapingPolicy struct{ withPrefixCache }

func (p shapingPolicy) Shape(v *engine.View) engine.BatchLimits {
	return p.Policy.(engine.Shaper).Shape(v)
}

func (p shapingPolicy) Admit(v *engine.View, s *engine.Sequence, budget int) bool {
	return p.Policy.(engine.Shaper).Admit(v, s, budget)
}

// wrapPolicy turns on the prefix cache, shares the engine between tenants
// and forwards every optional interface the policy has.
func wrapPolicy(p engine.Policy, shareTenants bool) engine.Policy {
	w := withPrefixCache{Policy: p}
	if shareTenants {
		w.tenants = newTenantShare()
	}
	if _, ok := p.(engine.Shaper); ok {
		return shapingPolicy{w}
	}
	return w
}
