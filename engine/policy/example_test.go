package policy_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pitstop-llm/pitstop/engine"
	"github.com/pitstop-llm/pitstop/engine/policy"
)

// tenantTable keeps each tenant's attained service (the service of its
// finished calls) and its queue: one queue per 10 s of service, at most 8.
// A call's tenant is its program id up to the first "/".
type tenantTable struct {
	service map[string]time.Duration
	queues  map[string]int
	changed bool
}

func tenantOf(s *engine.Sequence) string {
	t, _, _ := strings.Cut(s.Program(), "/")
	return t
}

func (t *tenantTable) queue(s *engine.Sequence) int { return t.queues[tenantOf(s)] }

func (t *tenantTable) observe(e *engine.Event) {
	if e.Kind != engine.EvFinished {
		return
	}
	name := tenantOf(e.Seq)
	t.service[name] += e.Seq.Service()
	if q := min(int(t.service[name]/(10*time.Second)), 8); q != t.queues[name] {
		t.queues[name], t.changed = q, true
	}
}

// moved reports whether a tenant changed queue since it was last asked.
func (t *tenantTable) moved() bool {
	m := t.changed
	t.changed = false
	return m
}

// tenantShare shares an engine between tenants by attained service: a
// tenant's queue ranks above the wrapped policy's classes. It overrides
// Priority, Refresh and Observe; every other hook is the wrapped policy's.
type tenantShare struct {
	engine.Policy
	tenants *tenantTable
}

func (p *tenantShare) Priority(v *engine.View, s *engine.Sequence) engine.Priority {
	in := p.Policy.Priority(v, s)
	return engine.Priority{Class: float64(p.tenants.queue(s))*1e6 + in.Class, Key: in.Key}
}

func (p *tenantShare) Refresh(v *engine.View) bool {
	moved := p.tenants.moved() // first: both must be asked
	return p.Policy.Refresh(v) || moved
}

func (p *tenantShare) Observe(e *engine.Event) {
	p.tenants.observe(e)
	p.Policy.Observe(e)
}

// A wrapper that changes only the order between tenants keeps everything
// else of the policy it wraps: pitstop's prefix cache, its handling, its
// eviction choices, its queues.
func Example_tenantShare() {
	pitstop, err := policy.New("pitstop", policy.Options{})
	if err != nil {
		panic(err)
	}
	shared := &tenantShare{Policy: pitstop, tenants: &tenantTable{service: map[string]time.Duration{}, queues: map[string]int{}}}
	var p engine.Policy = shared
	fmt.Printf("%+v\n", p.Traits())
	// Output:
	// {PrefixCache:true Preemptive:false}
}

// decodeN finishes after n tokens.
type decodeN struct{ n int }

func (c decodeN) Next(s *engine.Sequence, _ int32) engine.Action {
	if s.Generated() >= c.n {
		return engine.Action{Token: 1, Kind: engine.Finish}
	}
	return engine.Action{Token: 1}
}

func (decodeN) Forecast(*engine.Sequence) engine.Forecast { return engine.Forecast{} }

type oneMillisecond struct{}

func (oneMillisecond) Step(*engine.Batch) (time.Duration, error) { return time.Millisecond, nil }

// firstTokens records the order of calls' first tokens.
type firstTokens []string

func (f *firstTokens) Observe(e *engine.Event) {
	if e.Kind == engine.EvToken && e.Seq.Generated() == 1 {
		*f = append(*f, e.Seq.Name())
	}
}

// TestTenantShare runs the example's wrapper: tenant a has used 10 s of
// service, so tenant b's call runs before a's next one although it arrived
// later; fcfs alone runs them in arrival order.
func TestTenantShare(t *testing.T) {
	for _, shared := range []bool{false, true} {
		var p engine.Policy = policy.FCFS{}
		if shared {
			p = &tenantShare{Policy: p, tenants: &tenantTable{service: map[string]time.Duration{}, queues: map[string]int{}}}
		}
		var order firstTokens
		cfg := engine.Config{NumBlocks: 1024, BlockSize: 16, MaxBatchedTokens: 64, MaxSeqs: 1}
		e, err := engine.New(cfg, engine.NewVirtualClock(), oneMillisecond{}, p, &order)
		if err != nil {
			t.Fatal(err)
		}
		submit := func(name string, n int) {
			if _, err := e.SubmitNow(engine.Request{Name: name, Program: name, Prompt: []int32{1, 2, 3}, Controller: decodeN{n}}); err != nil {
				t.Fatal(err)
			}
		}
		submit("a/1", 10_001) // 10 s of service at 1 ms per iteration
		e.At(9*time.Second, func() { submit("a/2", 5); submit("b/1", 5) })
		if err := e.Run(context.Background()); err != nil {
			t.Fatal(err)
		}
		want := []string{"a/1", "a/2", "b/1"}
		if shared {
			want = []string{"a/1", "b/1", "a/2"}
		}
		if !slices.Equal(order, want) {
			t.Errorf("shared %v: first tokens in order %v, want %v", shared, order, want)
		}
	}
}
