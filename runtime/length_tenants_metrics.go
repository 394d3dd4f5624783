package runtime

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/pitstop-llm/pitstop/predictor"
)

// registerMetrics exports the steps' state without naming a tenant: how
// many tenants' states are held, started and evicted, and over the steps
// that predict (tenantSteps.each) the experts' mean weights and how many
// predict by the window mode. Nothing without a mixture (ts nil).
func (ts *tenantSteps) registerMetrics(reg prometheus.Registerer) {
	if ts == nil {
		return
	}
	for _, seg := range []string{"first", "later"} {
		for e, name := range predictor.ExpertNames {
			reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
				Name:        "pitstop_predictor_mix_weight",
				Help:        "Weight of each length expert (the model, the model blended with its program, the history baseline) in the predictions policies see, learnt from how each ordered finished segments across programs (predictor.OrderScored), for programs' first segments and later ones; the mean over the tenants' mixtures held in memory (one without tenants).",
				ConstLabels: prometheus.Labels{"segments": seg, "expert": name},
			}, func() float64 {
				sum, n := 0.0, 0
				ts.each(func(s predictor.ServedStep) {
					first, later := s.Mix.Weights()
					if seg == "first" {
						sum += first[e]
					} else {
						sum += later[e]
					}
					n++
				})
				return sum / float64(max(n, 1))
			}))
		}
	}
	reg.MustRegister(
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "pitstop_predictor_mode_chosen",
			Help: "How many of the tenants' length states held in memory (one without tenants: 1 or 0) predict the window mode of the segment's class (the tool it resumes after, its call's argument class), which has ordered their finished segments better than the experts' mixture, rather than the mixture's median (predictor.ModeLed).",
		}, func() float64 {
			n := 0
			ts.each(func(s predictor.ServedStep) {
				if s.Led.ModeChosen() {
					n++
				}
			})
			return float64(n)
		}),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "pitstop_predictor_tenant_states",
			Help: "Tenants' own length states (experts' mixture and window modes) held in memory, up to --predictor-tenant-states beside those that calls in flight hold; calls without a tenant use the deployment's, not counted.",
		}, func() float64 { return float64(ts.stats().held) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "pitstop_predictor_tenant_states_evicted_total",
			Help: "Tenants' length states evicted from memory as the least recently used (saved under --predictor-state-dir, dropped without one).",
		}, func() float64 { return float64(ts.stats().evicted) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name:        "pitstop_predictor_tenant_states_started_total",
			Help:        "Tenants' length states brought into memory: restored from --predictor-state-dir (from=disk) or started cold from the shipped model's prior (from=cold).",
			ConstLabels: prometheus.Labels{"from": "cold"},
		}, func() float64 { return float64(ts.stats().cold) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name:        "pitstop_predictor_tenant_states_started_total",
			Help:        "Tenants' length states brought into memory: restored from --predictor-state-dir (from=disk) or started cold from the shipped model's prior (from=cold).",
			ConstLabels: prometheus.Labels{"from": "disk"},
		}, func() float64 { return float64(ts.stats().restored) }),
	)
}
