package runtime

import "context"

// classKeeper is a policy that keeps what it learns about programs per
// class (pitstop: one population per tenant, engine/policy/population.go)
// and says which classes it keeps.
type classKeeper interface{ Classes() []string }

// policyClasses are the classes whose program statistics the serving
// policy keeps (engine goroutine); nil for a policy that keeps none per
// class, or one wrapped by Config.PolicyImpl that does not say.
func (rt *Runtime) policyClasses() []string {
	if p, ok := rt.policy.(classKeeper); ok {
		return p.Classes()
	}
	return nil
}

// PolicyClasses are the tenants whose program statistics the scheduling
// policy keeps now: serve drops a tenant's after it is idle past the program
// TTL. Read only; for the operator's tests and tools, never a tenant's
// answer (the names are other tenants').
func (rt *Runtime) PolicyClasses(ctx context.Context) ([]string, error) {
	var classes []string
	err := rt.onEngine(ctx, func() { classes = rt.policyClasses() })
	return classes, err
}
