package runtime

import "github.com/pitstop-llm/pitstop/engine"

// sharedBetweenTenants shares the engine between tenants around the
// wrapped policy's order (tenantShare): it overrides the ranking, the
// refresh that tenant levels need and the events that book tenants'
// service; every other hook is the wrapped policy's.
type sharedBetweenTenants struct {
	engine.Policy
	tenants *tenantShare
}

// Priority is the policy's, within the call's tenant level.
func (p sharedBetweenTenants) Priority(v *engine.View, s *engine.Sequence) engine.Priority {
	return p.tenants.priority(s, p.Policy.Priority(v, s))
}

// Refresh asks when the policy does or a tenant's level changed.
func (p sharedBetweenTenants) Refresh(v *engine.View) bool {
	refresh := p.Policy.Refresh(v)
	return p.tenants.refresh(v) || refresh
}

// Observe books tenants' service, then tells the policy.
func (p sharedBetweenTenants) Observe(e *engine.Event) {
	p.tenants.observe(e)
	p.Policy.Observe(e)
}

// wrapPolicy turns on the prefix cache (engine.WithPrefixCache: a program's
// next call, the resume after tools the client ran, finds its KV again)
// and, with shareTenants, shares the engine between tenants.
func wrapPolicy(p engine.Policy, shareTenants bool) engine.Policy {
	w := engine.WithPrefixCache(p)
	if shareTenants {
		w = sharedBetweenTenants{Policy: w, tenants: newTenantShare()}
	}
	return w
}
