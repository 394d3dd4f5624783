package tools

import (
	"context"
	"encoding/json"
	"sync/atomic"
	"testing"
	"time"
)

// A global idempotent tool's results are cached per caller scope (tenant):
// a tenant's call never hits an entry another tenant's call put there, its
// own second call does, and scopes whose names run into each other's keys
// ("a" calling with "b" arguments...) stay apart.
func TestCachePerScope(t *testing.T) {
	var runs atomic.Int32
	h := func(_ context.Context, args json.RawMessage) (string, error) {
		runs.Add(1)
		return "result of " + string(args), nil
	}
	ex := newTestExecutor(t, ExecutorConfig{}, mustTool(t, "lookup", `{"type":"object"}`, h, WithCache(time.Minute)))
	ctx := context.Background()
	steps := []struct {
		scope, args string
		cached      bool
	}{
		{"alpha", `{"q":1}`, false},
		{"beta", `{"q":1}`, false}, // alpha's entry is alpha's
		{"", `{"q":1}`, false},     // nor the scope of calls without a tenant
		{"alpha", `{"q":1}`, true},
		{"beta", `{"q":1}`, true},
		{"", `{"q":1}`, true},
		{"alpha\x00lookup", `{"q":1}`, false}, // a scope spelling another's key
	}
	for i, st := range steps {
		r := ex.Run(ctx, Call{Name: "lookup", Arguments: st.args, Scope: st.scope})
		if r.IsError || r.Cached != st.cached {
			t.Fatalf("step %d (scope %q): cached=%v error=%v %q, want cached=%v", i, st.scope, r.Cached, r.IsError, r.Content, st.cached)
		}
	}
	if got, want := runs.Load(), int32(4); got != want {
		t.Fatalf("handler ran %d times, want %d (once per scope)", got, want)
	}
}
