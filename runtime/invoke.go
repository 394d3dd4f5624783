package runtime

import (
	"context"
	"errors"
	"time"

	"github.com/pitstop-llm/pitstop/tools"
)

// InvokeRequest asks the runtime to run a registered tool for agent code
// that runs its own loop.
type InvokeRequest struct {
	Program string // the agent's program id (empty: not booked to a program)
	Thread  string
	Tool    string
	// Arguments is the JSON object of arguments, as text.
	Arguments string
	// CallID is the model's tool-call id, if any.
	CallID string
}

// Invoke runs a registered tool under a program, as a step of the program
// outside the model: the runtime books when it starts and ends (program
// table, tool-duration statistics, metrics). Arguments that do not match the
// tool's schema are an ErrInvalid *Error (with the result); an unknown tool
// is ErrNotFound. Any other failure of the tool (it panicked, timed out,
// returned an error) is an error result (Result.IsError), not a Go error.
func (rt *Runtime) Invoke(ctx context.Context, req InvokeRequest) (tools.Result, error) {
	rt.mu.Lock()
	closed := rt.closed
	rt.mu.Unlock()
	if closed {
		return tools.Result{}, errorf(ErrUnavailable, "", "server_shutting_down", "the runtime is shutting down")
	}
	if _, ok := rt.reg.Get(req.Tool); !ok {
		return tools.Result{}, errorf(ErrNotFound, "name", "tool_not_found", "tool %q is not registered (registered: %v)", req.Tool, rt.reg.Names())
	}
	start := time.Now()
	if req.Program != "" {
		rt.programs.invokeStart(req.Program, start)
	}
	res := rt.exec.Run(ctx, tools.Call{ID: req.CallID, Name: req.Tool, Arguments: req.Arguments})
	if req.Program != "" {
		rt.programs.invokeEnd(req.Program, time.Since(start), time.Now())
	}
	if errors.Is(res.Err, tools.ErrInvalidArguments) {
		return res, errorf(ErrInvalid, "arguments", "invalid_arguments", "%s", res.Content)
	}
	return res, nil
}

// RegisterWebhook registers a webhook tool at run time; expected, when
// positive, is the tool's declared duration in seconds (the prior of its
// duration statistics).
func (rt *Runtime) RegisterWebhook(spec tools.WebhookSpec, expected float64) error {
	t, err := tools.NewWebhookTool(spec)
	if err != nil {
		return errorf(ErrInvalid, "", "invalid_tool", "%v", err)
	}
	if err := rt.reg.Register(t); err != nil {
		switch {
		case errors.Is(err, tools.ErrDuplicate):
			return errorf(ErrConflict, "name", "tool_exists", "%v", err)
		case errors.Is(err, tools.ErrInvalidSchema):
			return errorf(ErrInvalid, "parameters", "invalid_tool_schema", "%v", err)
		}
		return errorf(ErrInvalid, "", "invalid_tool", "%v", err)
	}
	if expected > 0 {
		rt.durations.SetPrior(spec.Name, expected)
	}
	return nil
}
