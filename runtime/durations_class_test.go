package runtime

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/pitstop-llm/pitstop/engine"
	"github.com/pitstop-llm/pitstop/engine/policy"
	"github.com/pitstop-llm/pitstop/handling"
	"github.com/pitstop-llm/pitstop/models/chat"
	"github.com/pitstop-llm/pitstop/tools"
)

// handlePolicy records the distribution the policy sees when it handles a
// paused call.
type handlePolicy struct {
	engine.Policy
	mu    sync.Mutex
	dists []*engine.Distribution
}

func (p *handlePolicy) Handle(v *engine.View, s *engine.Sequence) handling.Kind {
	p.mu.Lock()
	p.dists = append(p.dists, s.Forecast().Dist)
	p.mu.Unlock()
	return p.Policy.Handle(v, s)
}

func (p *handlePolicy) last() *engine.Distribution {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.dists) == 0 {
		return nil
	}
	return p.dists[len(p.dists)-1]
}

// A server-side shell tool whose duration depends on the program it runs:
// once the per-program medians beat the tool's median on its recent calls,
// a round's predicted duration is its program's, and so are the p50 and p90
// that the policy sees in the paused call's forecast.
func TestToolDurationsPerArgumentClass(t *testing.T) {
	reg := tools.NewRegistry()
	reg.MustRegister(&tools.Tool{Name: "shell", Handler: func(_ context.Context, args json.RawMessage) (string, error) {
		var a struct{ Command string }
		if err := json.Unmarshal(args, &a); err != nil {
			return "", err
		}
		d := time.Millisecond
		if a.Command == "make all" {
			d = 60 * time.Millisecond
		}
		time.Sleep(d)
		return "done", nil
	}})
	base, err := policy.New(DefaultPolicy, policy.Options{})
	if err != nil {
		t.Fatal(err)
	}
	pol := &handlePolicy{Policy: base}
	rt := newTestRuntime(t, Config{Tools: reg, PolicyImpl: pol})
	run := func(cmd string) Round {
		t.Helper()
		res, err := rt.ChatSync(context.Background(), ChatRequest{
			Messages: []chat.Message{{Role: "user", Content: fmt.Sprintf("/call shell {\"command\": %q}\n/say ok", cmd)}},
			Tools:    []chat.Tool{{Name: "shell"}}})
		if err != nil || len(res.Rounds) != 1 {
			t.Fatalf("call: %v, %+v", err, res)
		}
		return res.Rounds[0]
	}
	for i := range 24 {
		run([]string{"make all", "ls -l"}[i%2])
	}
	quantiles := func(what string) (p50, p90 float64) {
		t.Helper()
		d := pol.last()
		if d == nil || len(d.ToolTimeLevels) != 2 || len(d.ToolTimeQuantiles) != 2 || d.ToolTimeLevels[0] != 0.5 || d.ToolTimeLevels[1] != 0.9 {
			t.Fatalf("%s: the paused call's forecast has no tool-duration p50/p90: %+v", what, d)
		}
		return d.ToolTimeQuantiles[0], d.ToolTimeQuantiles[1]
	}
	if p := run("make all").Predicted; p < 30*time.Millisecond {
		t.Errorf("make predicted %v, want about 60ms (its class's median)", p)
	}
	if p50, p90 := quantiles("make"); p50 < 0.03 || p90 < p50 {
		t.Errorf("make: p50 %vs p90 %vs, want about 0.06 s and p90 ≥ p50", p50, p90)
	}
	if p := run("ls -l").Predicted; p > 10*time.Millisecond {
		t.Errorf("ls predicted %v, want about 1ms (its class's median)", p)
	}
	if p50, p90 := quantiles("ls"); p50 > 0.01 || p90 > 0.03 {
		t.Errorf("ls: p50 %vs p90 %vs, want about 0.001 s", p50, p90)
	}
}
