package runtime

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/pitstop-llm/pitstop/engine"
	"github.com/pitstop-llm/pitstop/engine/policy"
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

// TestWrapPolicyForwardsShaper: a policy that shapes batches keeps its hook
// behind the runtime's prefix-cache wrapper; one that does not gets none.
func TestWrapPolicyForwardsShaper(t *testing.T) {
	for name, want := range map[string]bool{"sola": true, "pitstop": false, "fcfs": false} {
		p, err := policy.New(name, policy.Options{})
		if err != nil {
			t.Fatal(err)
		}
		w := wrapPolicy(p, true)
		if _, ok := w.(engine.Shaper); ok != want {
			t.Errorf("%s: wrapped policy is a Shaper: %v, want %v", name, ok, want)
		}
		if tr, ok := w.(engine.Traiter); !ok || !tr.Traits().PrefixCache {
			t.Errorf("%s: prefix cache off behind the wrapper", name)
		}
	}
}
