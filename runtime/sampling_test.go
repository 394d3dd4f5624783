package runtime

import (
	"context"
	"sync"
	"testing"

	"github.com/pitstop-llm/pitstop/engine"
	"github.com/pitstop-llm/pitstop/engine/policy"
	"github.com/pitstop-llm/pitstop/models/chat"
)

// samplingSpy records the sampling of every call the policy ranks.
type samplingSpy struct {
	engine.Policy
	mu   sync.Mutex
	seen map[engine.SeqID][]engine.Sampling
}

func (p *samplingSpy) Priority(v *engine.View, s *engine.Sequence) engine.Priority {
	p.mu.Lock()
	p.seen[s.ID()] = append(p.seen[s.ID()], s.Sampling())
	p.mu.Unlock()
	return p.Policy.Priority(v, s)
}

// A request's temperature, top_p and seed reach the engine with its call
// (and so the executor's batch); a call parked across the client's tools and
// resumed by the program's next request draws with the next request's.
func TestRequestSamplingReachesTheEngine(t *testing.T) {
	base, err := policy.New(DefaultPolicy, policy.Options{})
	if err != nil {
		t.Fatal(err)
	}
	spy := &samplingSpy{Policy: base, seen: map[engine.SeqID][]engine.Sampling{}}
	rt := newTestRuntime(t, Config{PolicyImpl: spy})
	ctx := context.Background()
	f := func(x float64) *float64 { return &x }
	i := func(x int64) *int64 { return &x }
	weather := chat.Tool{Name: "get_weather", Parameters: []byte(`{"type":"object","properties":{"city":{"type":"string"}}}`)}
	msgs := []chat.Message{{Role: "user", Content: "/pre Checking.\n/call get_weather {\"city\": \"Paris\"}"}}
	res, err := rt.ChatSync(ctx, ChatRequest{Program: "p", Thread: "t1", Messages: msgs, Tools: []chat.Tool{weather},
		Temperature: f(0.7), TopP: f(0.9), Seed: i(42)})
	if err != nil || res.FinishReason != "tool_calls" {
		t.Fatalf("%v %+v", err, res)
	}
	msgs = append(msgs, chat.Message{Role: "assistant", Content: res.Content, ToolCalls: res.ToolCalls},
		chat.Message{Role: "tool", ToolCallID: res.ToolCalls[0].ID, Content: "rain"})
	if _, err := rt.ChatSync(ctx, ChatRequest{Program: "p", Thread: "t1", Messages: msgs, Tools: []chat.Tool{weather},
		Temperature: f(0.2), Seed: i(5)}); err != nil {
		t.Fatal(err)
	}
	spy.mu.Lock()
	defer spy.mu.Unlock()
	if len(spy.seen) != 1 {
		t.Fatalf("%d sequences ranked, want the one parked and resumed", len(spy.seen))
	}
	first, second := engine.Sampling{Temperature: 0.7, TopP: 0.9, Seed: 42}, engine.Sampling{Temperature: 0.2, Seed: 5}
	for _, seen := range spy.seen {
		if seen[0] != first || seen[len(seen)-1] != second {
			t.Errorf("sampling seen %+v: want %+v first and %+v after the resume", seen, first, second)
		}
	}
}
