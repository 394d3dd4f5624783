package runtime

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pitstop-llm/pitstop/models/chat"
)

// finishOrder submits 24 calls of tenant "flood", then 3 of tenant "light",
// on an engine where only a few calls fit at once, and returns the tenants
// in the order their calls finished.
func finishOrder(t *testing.T, share bool) []string {
	t.Helper()
	rt := newTestRuntime(t, Config{Policy: "fcfs", Pace: 0.5, KVTokens: 512, DisableTenantShare: !share})
	ctx := context.Background()
	var mu sync.Mutex
	var order []string
	var wg sync.WaitGroup
	start := func(tenant string) {
		c, err := rt.Chat(ctx, ChatRequest{Tenant: tenant, Messages: []chat.Message{{Role: "user", Content: "/long 40"}}})
		if err != nil {
			t.Fatal(err)
		}
		wg.Go(func() {
			res, err := c.Wait(ctx)
			if err != nil || res.Err != nil {
				t.Errorf("%s: %v %v", tenant, err, res.Err)
			}
			mu.Lock()
			order = append(order, tenant)
			mu.Unlock()
		})
	}
	for range 24 {
		start("flood")
	}
	time.Sleep(50 * time.Millisecond) // the flood has been served a while
	for range 3 {
		start("light")
	}
	wg.Wait()
	return order
}

// The engine is shared between tenants by recent attained service: a
// tenant that arrives while another floods the engine is served ahead of
// the flood's waiting calls (under FCFS, which alone would serve it last).
func TestTenantShareServesTheLightTenantFirst(t *testing.T) {
	shared := finishOrder(t, true)
	fifo := finishOrder(t, false)
	pos := func(order []string) int { // finishing place of the last light call
		p := 0
		for i, x := range order {
			if x == "light" {
				p = i
			}
		}
		return p
	}
	if pos(fifo) < len(fifo)-4 {
		t.Fatalf("without the tenant share the light calls should finish among the last: %s", strings.Join(fifo, " "))
	}
	if pos(shared) > len(shared)-6 {
		t.Errorf("with the tenant share the last light call finished at %d of %d, behind all but %d flood calls: %s",
			pos(shared)+1, len(shared), len(shared)-1-pos(shared), strings.Join(shared, " "))
	}
}

// The token bucket refills at the tenant's rate; the concurrency slot comes
// back when the call ends.
func TestTenantTable(t *testing.T) {
	tt := newTenantTable()
	tt.set(TenantLimits{}, map[string]TenantLimits{"a": {MaxConcurrent: 1, TokensPerSecond: 10}})
	now := time.Unix(0, 0)
	if err := tt.admit("a", now); err != nil {
		t.Fatal(err)
	}
	if err := tt.admit("a", now); err == nil || err.Kind != ErrRateLimited {
		t.Fatalf("second concurrent call: %v", err)
	}
	if err := tt.admit("b", now); err != nil {
		t.Errorf("tenant b has no limits: %v", err)
	}
	tt.release("a")
	tt.charge("a", 150, now) // bucket of 100 → -50
	err := tt.admit("a", now)
	if err == nil || err.RetryAfter != 5*time.Second {
		t.Fatalf("overdrawn bucket: %v", err)
	}
	if err := tt.admit("a", now.Add(5*time.Second)); err != nil {
		t.Errorf("after the refill: %v", err)
	}
}

// A prompt whose bytes alone prove it cannot fit is refused before it is
// rendered or tokenized; one that may fit is measured exactly.
func TestPromptBoundBeforeTokenizing(t *testing.T) {
	rt := newTestRuntime(t, Config{MaxContextTokens: 1000})
	ctx := context.Background()
	huge := strings.Repeat("word ", 2*rt.maxTokenBytes*1000/5+10)
	_, err := rt.Chat(ctx, ChatRequest{Messages: []chat.Message{{Role: "user", Content: huge}}})
	e := AsError(err)
	if e.Kind != ErrContextLength || !strings.Contains(e.Msg, "bytes") {
		t.Fatalf("huge prompt: %v", err)
	}
	// Near the limit in bytes but not provably over: tokenized, then
	// refused with the exact count.
	near := strings.Repeat("word ", 900)
	_, err = rt.Chat(ctx, ChatRequest{Messages: []chat.Message{{Role: "user", Content: near}}})
	if e := AsError(err); e.Kind != ErrContextLength || !strings.Contains(e.Msg, "resulted in") {
		t.Fatalf("near-limit prompt: %v", err)
	}
}

// Rows of calls made without a program id expire on their own short timer;
// named programs stay.
func TestAnonymousProgramsExpireSooner(t *testing.T) {
	rt := newTestRuntime(t, Config{AnonymousProgramTTL: 30 * time.Millisecond})
	ctx := context.Background()
	for _, p := range []string{"", "named"} {
		if _, err := rt.ChatSync(ctx, ChatRequest{Program: p, Messages: []chat.Message{{Role: "user", Content: "hi"}}}); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(80 * time.Millisecond)
	rt.expirePrograms()
	ps, _ := rt.Programs(ctx, "", false)
	if len(ps) != 1 || ps[0].ID != "named" {
		t.Fatalf("programs %+v", ps)
	}
	var engineRows int
	_ = rt.onEngine(ctx, func() { engineRows = rt.eng.Programs().Len() })
	if engineRows != 1 {
		t.Errorf("engine has %d program rows, want 1", engineRows)
	}
}
