package runtime

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"
)

// defaultTenantSeries are the default tenant's per-call counters (every
// call of a server without API keys, a router's included), looked up once,
// at its first call: WithLabelValues hashes and finds its labels on every
// use, three times a call. Made lazily, so /metrics shows the series only
// once a call has counted, as before.
type defaultTenantSeries struct {
	once                      sync.Once
	calls, prompt, completion prometheus.Counter
}

func (m *Metrics) defaults() *defaultTenantSeries {
	d := &m.defaultTenant
	d.once.Do(func() {
		d.calls = m.tenantCalls.WithLabelValues(DefaultTenant)
		d.prompt = m.tenantTokens.WithLabelValues(DefaultTenant, "prompt")
		d.completion = m.tenantTokens.WithLabelValues(DefaultTenant, "completion")
	})
	return d
}

// countCall counts a chat call started by tenant.
func (m *Metrics) countCall(tenant string) {
	if tenant == "" {
		m.defaults().calls.Inc()
		return
	}
	m.tenantCalls.WithLabelValues(tenant).Inc()
}

// countTokens counts a finished call's tokens for tenant.
func (m *Metrics) countTokens(tenant string, prompt, completion int) {
	if tenant == "" {
		d := m.defaults()
		d.prompt.Add(float64(prompt))
		d.completion.Add(float64(completion))
		return
	}
	m.tenantTokens.WithLabelValues(tenant, "prompt").Add(float64(prompt))
	m.tenantTokens.WithLabelValues(tenant, "completion").Add(float64(completion))
}
