package runtime

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/pitstop-llm/pitstop/engine"
	"github.com/pitstop-llm/pitstop/handling"
	dto "github.com/prometheus/client_model/go"
)

func gaugeValue(t *testing.T, g prometheus.Gauge) float64 {
	t.Helper()
	var m dto.Metric
	if err := g.Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetGauge().GetValue()
}

// TestPolicyQueueGauge: /metrics has the waiting calls by the policy's
// queue, and a queue that emptied reads 0 rather than its old length.
func TestPolicyQueueGauge(t *testing.T) {
	rt := newTestRuntime(t, Config{Policy: "atlas"})
	g := rt.metrics.policyQueue
	rt.onEngineTest(t, func() {
		rt.refreshGauges(&EngineState{Queues: map[string]int{"0": 3, "2": 1, "promoted": 1}})
	})
	if v := gaugeValue(t, g.WithLabelValues("atlas", "0")); v != 3 {
		t.Fatalf("queue 0: %v, want 3", v)
	}
	rt.onEngineTest(t, func() { rt.refreshGauges(&EngineState{Queues: map[string]int{"0": 1}}) })
	for q, want := range map[string]float64{"0": 1, "2": 0, "promoted": 0} {
		if v := gaugeValue(t, g.WithLabelValues("atlas", q)); v != want {
			t.Errorf("queue %s: %v, want %v", q, v, want)
		}
	}
	st, err := rt.Engine(t.Context())
	if err != nil || st.Queues == nil {
		t.Fatalf("engine state queues %v, err %v", st.Queues, err)
	}
}

func (rt *Runtime) onEngineTest(t *testing.T, fn func()) {
	t.Helper()
	if err := rt.onEngine(t.Context(), fn); err != nil {
		t.Fatal(err)
	}
}

// hookSpy records which hooks reach it.
type hookSpy struct {
	engine.BasePolicy
	reached map[string]bool
}

func (p *hookSpy) Priority(*engine.View, *engine.Sequence) engine.Priority {
	p.reached["Priority"] = true
	return engine.Priority{}
}

func (p *hookSpy) Handle(*engine.View, *engine.Sequence) handling.Kind {
	p.reached["Handle"] = true
	return handling.Preserve
}

func (p *hookSpy) Traits() engine.Traits {
	p.reached["Traits"] = true
	return engine.Traits{Preemptive: true}
}

func (p *hookSpy) Refresh(*engine.View) bool { p.reached["Refresh"] = true; return true }

func (p *hookSpy) Shape(*engine.View) engine.BatchLimits {
	p.reached["Shape"] = true
	return engine.BatchLimits{Tokens: 7}
}

func (p *hookSpy) Evict(*engine.View, *engine.Sequence) handling.Kind {
	p.reached["Evict"] = true
	return handling.Swap
}

func (p *hookSpy) HostRank(*engine.View, *engine.Sequence) float64 {
	p.reached["HostRank"] = true
	return 3
}

func (p *hookSpy) Observe(*engine.Event) { p.reached["Observe"] = true }

func (p *hookSpy) Queue(*engine.Sequence) int { p.reached["Queue"] = true; return 2 }

// TestWrapPolicyKeepsHooks: behind the runtime's prefix-cache wrapper every
// hook reaches the policy; only the prefix cache is turned on.
func TestWrapPolicyKeepsHooks(t *testing.T) {
	spy := &hookSpy{reached: map[string]bool{}}
	w := wrapPolicy(spy, true)
	v := &engine.View{}
	if tr := w.Traits(); !tr.PrefixCache || !tr.Preemptive {
		t.Errorf("traits behind the wrapper %+v, want the policy's with the prefix cache", tr)
	}
	w.Priority(v, nil)
	w.Handle(v, nil)
	w.Observe(&engine.Event{})
	if !w.Refresh(v) || w.Shape(v).Tokens != 7 || w.Evict(v, nil) != handling.Swap || w.HostRank(v, nil) != 3 || w.Queue(nil) != 2 {
		t.Error("a hook behind the wrapper answered otherwise than the policy")
	}
	for _, h := range []string{"Priority", "Handle", "Traits", "Refresh", "Shape", "Evict", "HostRank", "Observe", "Queue"} {
		if !spy.reached[h] {
			t.Errorf("%s did not reach the policy through the wrapper", h)
		}
	}
}
