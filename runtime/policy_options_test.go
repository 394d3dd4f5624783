package runtime

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/pitstop-llm/pitstop/models/chat"
)

// TestPolicyOptionsDropIdleTenantsWithTheirPrograms: the serving policy
// forgets an idle tenant's program statistics after the program TTL, counts
// a program complete no later than the TTL, and the options are valid for
// every policy serve can run.
func TestPolicyOptionsDropIdleTenantsWithTheirPrograms(t *testing.T) {
	o := policyOptions(Config{ProgramTTL: 90 * time.Second})
	if o.PitstopClassIdle != 90 || o.ProgramIdle != 90 {
		t.Fatalf("class idle %g s, program idle %g s, want the program TTL's 90 s", o.PitstopClassIdle, o.ProgramIdle)
	}
	if err := o.Validate(); err != nil {
		t.Fatalf("serve's policy options do not validate: %v", err)
	}
	if o := policyOptions(Config{ProgramTTL: DefaultProgramTTL}); o.ProgramIdle != 0 {
		t.Fatalf("default TTL: program idle %g s, want the policy's default", o.ProgramIdle)
	}
}

// classesKept reads the classes whose statistics the runtime's policy
// keeps, on the engine goroutine.
func classesKept(t *testing.T, rt *Runtime) []string {
	t.Helper()
	p, ok := rt.policy.(interface{ Classes() []string })
	if !ok {
		t.Fatalf("policy %T does not say which classes it keeps", rt.policy)
	}
	var classes []string
	rt.onEngineTest(t, func() { classes = p.Classes() })
	return classes
}

// TestServeDropsIdleTenantsStatistics drives the runtime that New builds:
// tenants "a" and "b" call, then "a" goes idle while "b" keeps calling;
// past the program TTL "a"'s population is gone and "b"'s kept. It fails
// if New does not hand policyOptions to the policy (the populations would
// be kept for good, and "a"'s program would wait 120 s to complete).
func TestServeDropsIdleTenantsStatistics(t *testing.T) {
	const ttl = 300 * time.Millisecond
	rt := newTestRuntime(t, Config{ProgramTTL: ttl, Pace: 0.05})
	ctx := context.Background()
	call := func(tenant string) {
		c, err := rt.Chat(ctx, ChatRequest{Tenant: tenant, Messages: []chat.Message{{Role: "user", Content: "/long 8"}}})
		if err != nil {
			t.Fatal(err)
		}
		if res, err := c.Wait(ctx); err != nil || res.Err != nil {
			t.Fatalf("%s: %v %v", tenant, err, res.Err)
		}
	}
	call("a")
	call("b")
	if got := classesKept(t, rt); !slices.Contains(got, "a") || !slices.Contains(got, "b") {
		t.Fatalf("classes kept %v, want a and b", got)
	}
	deadline := time.Now().Add(20 * ttl)
	for time.Now().Before(deadline) {
		call("b") // the engine iterates: the policy sweeps
		if got := classesKept(t, rt); !slices.Contains(got, "a") {
			if !slices.Contains(got, "b") {
				t.Fatalf("classes kept %v: the busy tenant b was dropped", got)
			}
			return
		}
		time.Sleep(ttl / 10)
	}
	t.Fatalf("classes kept %v %v after a was idle, want a dropped after the %v TTL", classesKept(t, rt), 20*ttl, ttl)
}

// TestPolicyClassesOnlyForAPolicyThatKeepsThem: a policy without per-class
// statistics (fcfs) keeps none, and the gauge reads 0; pitstop's classes are
// its callers' tenants, and the gauge counts them.
func TestPolicyClassesOnlyForAPolicyThatKeepsThem(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		policy string
		want   []string
	}{{"fcfs", nil}, {"pitstop", []string{"a", "b"}}} {
		rt := newTestRuntime(t, Config{Policy: c.policy})
		for _, tenant := range []string{"a", "b", "a"} {
			call, err := rt.Chat(ctx, ChatRequest{Tenant: tenant, Messages: []chat.Message{{Role: "user", Content: "hi"}}})
			if err != nil {
				t.Fatal(err)
			}
			if res, err := call.Wait(ctx); err != nil || res.Err != nil {
				t.Fatalf("%s: %v %v", tenant, err, res.Err)
			}
		}
		got, err := rt.PolicyClasses(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: classes kept %v, want %v", c.policy, got, c.want)
		}
		if _, err := rt.Engine(ctx); err != nil { // refreshes the gauges
			t.Fatal(err)
		}
		if n := gaugeValue(t, rt.metrics.policyClasses); n != float64(len(c.want)) {
			t.Errorf("%s: pitstop_policy_classes %g, want %d", c.policy, n, len(c.want))
		}
	}
}
