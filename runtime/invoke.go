package runtime

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/pitstop-llm/pitstop/tools"
)

// InvokeRequest asks the runtime to run a registered tool for agent code
// that runs its own loop.
type InvokeRequest struct {
	Tenant  string // the caller's tenant: its own tools and programs (empty: none)
	Program string // the agent's program id (empty: not booked to a program)
	Thread  string
	Tool    string
	// Arguments is the JSON object of arguments, as text.
	Arguments string
	// CallID is the model's tool-call id, if any.
	CallID string
}

// Invoke runs a registered tool (a global one or one of the tenant's) under
// a program, as a step of the program outside the model: the runtime books
// when it starts and ends (program table, tool-duration statistics,
// metrics). Arguments that do not match the tool's schema are an ErrInvalid
// *Error (with the result); an unknown tool is ErrNotFound; a tenant over
// its concurrency limit gets ErrRateLimited. Any other failure of the tool
// (it panicked, timed out, returned an error) is an error result
// (Result.IsError), not a Go error.
func (rt *Runtime) Invoke(ctx context.Context, req InvokeRequest) (tools.Result, error) {
	rt.mu.Lock()
	closed := rt.closed
	rt.mu.Unlock()
	if closed {
		return tools.Result{}, errorf(ErrUnavailable, "", "server_shutting_down", "the runtime is shutting down")
	}
	if _, ok := rt.reg.GetIn(req.Tenant, req.Tool); !ok {
		return tools.Result{}, errorf(ErrNotFound, "name", "tool_not_found", "tool %q is not registered (registered: %s)",
			req.Tool, strings.Join(rt.reg.NamesIn(req.Tenant), ", "))
	}
	start := time.Now()
	if aerr := rt.tenants.admit(req.Tenant, start); aerr != nil {
		rt.metrics.tenantRejected.WithLabelValues(tenantLabel(req.Tenant), aerr.Code).Inc()
		return tools.Result{}, aerr
	}
	defer rt.tenants.release(req.Tenant)
	key := programKey(req.Tenant, req.Program)
	if req.Program != "" {
		rt.programs.invokeStart(key, req.Program, req.Tenant, start)
	}
	res := rt.exec.Run(ctx, tools.Call{ID: req.CallID, Name: req.Tool, Arguments: req.Arguments, Scope: req.Tenant})
	if req.Program != "" {
		rt.programs.invokeEnd(key, time.Since(start), time.Now())
	}
	if errors.Is(res.Err, tools.ErrInvalidArguments) {
		return res, errorf(ErrInvalid, "arguments", "invalid_arguments", "%s", res.Content)
	}
	return res, nil
}

// WebhookRegistration is a webhook tool registered at run time by a tenant.
type WebhookRegistration struct {
	Tenant string // the owner: only its calls see and run the tool ("" : a server tool)
	Spec   tools.WebhookSpec
	// Expected, when positive, is the tool's declared duration in seconds
	// (the prior of its duration statistics).
	Expected float64
	// Replace lets the registration replace the tenant's tool of that name.
	Replace bool
}

// RegisterWebhook registers a webhook tool at run time in the tenant's
// scope, within the tenant's MaxTools.
func (rt *Runtime) RegisterWebhook(r WebhookRegistration) error {
	t, err := tools.NewWebhookTool(r.Spec)
	if err != nil {
		return errorf(ErrInvalid, "", "invalid_tool", "%v", err)
	}
	opts := tools.ScopeOptions{Replace: r.Replace, MaxTools: rt.tenants.limitsOf(r.Tenant).MaxTools}
	if err := rt.reg.RegisterIn(r.Tenant, t, opts); err != nil {
		switch {
		case errors.Is(err, tools.ErrDuplicate):
			return errorf(ErrConflict, "name", "tool_exists", "%v", err)
		case errors.Is(err, tools.ErrLimit):
			rt.metrics.tenantRejected.WithLabelValues(tenantLabel(r.Tenant), "tool_limit_exceeded").Inc()
			return errorf(ErrRateLimited, "", "tool_limit_exceeded", "%v; delete one first (DELETE /v1/tools/{name})", err)
		case errors.Is(err, tools.ErrInvalidSchema):
			return errorf(ErrInvalid, "parameters", "invalid_tool_schema", "%v", err)
		}
		return errorf(ErrInvalid, "", "invalid_tool", "%v", err)
	}
	if r.Expected > 0 {
		rt.durations.SetPrior(tools.StatsKey(r.Tenant, r.Spec.Name), r.Expected)
	}
	return nil
}

// RemoveTool unregisters one of the tenant's tools; a tool of another
// tenant, or a server tool, is ErrNotFound (a tenant cannot tell them from
// a name nobody registered). Calls already running finish.
func (rt *Runtime) RemoveTool(tenant, name string) error {
	if !rt.reg.RemoveIn(tenant, name) {
		if _, ok := rt.reg.GetIn(tenant, name); ok {
			return errorf(ErrConflict, "name", "tool_not_removable", "tool %q is a server tool; only tools registered with POST /v1/tools can be deleted", name)
		}
		return errorf(ErrNotFound, "name", "tool_not_found", "tool %q is not registered", name)
	}
	return nil
}
