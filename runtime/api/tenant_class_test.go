package api

import (
	"context"
	"sync"
	"testing"

	openai "github.com/sashabaranov/go-openai"

	"github.com/pitstop-llm/pitstop/engine"
	"github.com/pitstop-llm/pitstop/engine/policy"
	"github.com/pitstop-llm/pitstop/runtime"
)

// classRecorder is pitstop with a note of each arriving call's tenant and
// class, as the engine hands them to the policy.
type classRecorder struct {
	engine.Policy
	mu    sync.Mutex
	class map[string][]string // tenant → classes of its calls
}

func (r *classRecorder) Observe(e *engine.Event) {
	if e.Kind == engine.EvArrived {
		r.mu.Lock()
		r.class[e.Seq.Tenant()] = append(r.class[e.Seq.Tenant()], e.Seq.Class())
		r.mu.Unlock()
	}
	r.Policy.Observe(e)
}

// Each API key's calls reach the policy in their tenant's class, so that
// the statistics pitstop learns per class (engine.Request.Class) are the
// tenant's own programs'.
func TestTenantIsThePolicysClass(t *testing.T) {
	pit, err := policy.New("pitstop", policy.Options{})
	if err != nil {
		t.Fatal(err)
	}
	rec := &classRecorder{Policy: pit, class: map[string][]string{}}
	ts := newTestServer(t, serverOpts{rt: runtime.Config{PolicyImpl: rec}, api: Config{Keys: keyring(t, twoTenantKeys)}})
	for _, key := range []string{"ka", "kb", "ka"} {
		_, err := ts.clientWithKey(key, nil).CreateChatCompletion(context.Background(), openai.ChatCompletionRequest{
			Model: "pitstop-scripted-test", Messages: []openai.ChatCompletionMessage{userMsg("hi")}})
		if err != nil {
			t.Fatal(err)
		}
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	want := map[string]int{"alpha": 2, "beta": 1}
	if len(rec.class) != len(want) {
		t.Fatalf("tenants seen %v, want alpha and beta", rec.class)
	}
	for tenant, n := range want {
		got := rec.class[tenant]
		if len(got) != n {
			t.Errorf("%s: %d calls, want %d", tenant, len(got), n)
		}
		for _, c := range got {
			if c != tenant {
				t.Errorf("%s's call in class %q, want its tenant", tenant, c)
			}
		}
	}
}
