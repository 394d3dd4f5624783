package remote

import "github.com/prometheus/client_golang/prometheus"

// metrics are the router's Prometheus metrics, per backend.
type metrics struct {
	inflight, queue, limit, up *prometheus.GaugeVec
	calls, errors              *prometheus.CounterVec
	latency, ttft              *prometheus.HistogramVec
	promptTokens, cachedTokens *prometheus.CounterVec
	moved                      prometheus.Counter
}

func newMetrics(reg prometheus.Registerer) *metrics {
	b := []string{"backend"}
	m := &metrics{
		inflight: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "pitstop_backend_inflight", Help: "Calls in flight on the backend."}, b),
		queue:    prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "pitstop_backend_queue_length", Help: "Calls waiting in the router's admission queue of the backend."}, b),
		limit:    prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "pitstop_backend_inflight_limit", Help: "The backend's limit of calls in flight (given, or adapted to its latency)."}, b),
		up:       prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "pitstop_backend_up", Help: "1 when the backend's last health check or call succeeded."}, b),
		calls:    prometheus.NewCounterVec(prometheus.CounterOpts{Name: "pitstop_backend_calls_total", Help: "Generations sent to the backend, by outcome."}, []string{"backend", "outcome"}),
		errors:   prometheus.NewCounterVec(prometheus.CounterOpts{Name: "pitstop_backend_errors_total", Help: "Failed generations and health checks, by kind (down, bad_reply, rejected, health)."}, []string{"backend", "kind"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "pitstop_backend_latency_seconds", Help: "Time of one generation on the backend, sent to last byte.",
			Buckets: prometheus.ExponentialBuckets(0.001, 2, 18)}, b),
		ttft: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "pitstop_backend_ttft_seconds", Help: "Time from sending a generation to its first event.",
			Buckets: prometheus.ExponentialBuckets(0.001, 2, 18)}, b),
		promptTokens: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "pitstop_backend_prompt_tokens_total", Help: "Prompt tokens the backend reported."}, b),
		cachedTokens: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "pitstop_backend_cached_tokens_total", Help: "Prompt tokens the backend found in its prefix cache (usage.prompt_tokens_details.cached_tokens); over pitstop_backend_prompt_tokens_total it is the prefix-hit rate."}, b),
		moved:        prometheus.NewCounter(prometheus.CounterOpts{Name: "pitstop_router_moved_total", Help: "Generations moved to another backend after theirs failed before any output."}),
	}
	if reg != nil {
		_ = m.register(reg)
	}
	return m
}

func (m *metrics) register(reg prometheus.Registerer) error {
	for _, c := range []prometheus.Collector{m.inflight, m.queue, m.limit, m.up, m.calls, m.errors, m.latency, m.ttft, m.promptTokens, m.cachedTokens, m.moved} {
		if err := reg.Register(c); err != nil {
			return err
		}
	}
	return nil
}

// forget drops a removed backend's series.
func (m *metrics) forget(name string) {
	for _, g := range []*prometheus.GaugeVec{m.inflight, m.queue, m.limit, m.up} {
		g.DeleteLabelValues(name)
	}
}

// backendMetrics are one backend's series of the per-call path, bound
// once when the backend is added: a call then does no label lookups.
type backendMetrics struct {
	inflight, queue            prometheus.Gauge
	ok, failed                 prometheus.Counter
	latency, ttft              prometheus.Observer
	promptTokens, cachedTokens prometheus.Counter
}

func (m *metrics) bind(name string) backendMetrics {
	return backendMetrics{
		inflight: m.inflight.WithLabelValues(name), queue: m.queue.WithLabelValues(name),
		ok: m.calls.WithLabelValues(name, "ok"), failed: m.calls.WithLabelValues(name, "error"),
		latency: m.latency.WithLabelValues(name), ttft: m.ttft.WithLabelValues(name),
		promptTokens: m.promptTokens.WithLabelValues(name), cachedTokens: m.cachedTokens.WithLabelValues(name),
	}
}
