package runtime

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/pitstop-llm/pitstop/engine"
	"github.com/pitstop-llm/pitstop/handling"
)

// Metrics are the runtime's Prometheus metrics, in a registry of its own
// (so several runtimes can live in one process, as in tests).
type Metrics struct {
	Registry *prometheus.Registry

	queue       *prometheus.GaugeVec
	policyQueue *prometheus.GaugeVec
	// policyClasses counts the tenants whose program statistics the
	// policy keeps, without naming them.
	policyClasses prometheus.Gauge
	kvBlocks      *prometheus.GaugeVec
	hostBlocks    *prometheus.GaugeVec
	swapBlocks    *prometheus.CounterVec
	swapBytes     *prometheus.CounterVec
	recompute     prometheus.Counter
	preemptions   prometheus.Counter
	iterations    prometheus.Counter
	iterSeconds   prometheus.Histogram
	tokens        *prometheus.CounterVec
	handling      *prometheus.CounterVec
	toolLatency   *prometheus.HistogramVec
	toolRounds    prometheus.Counter
	resultsCut    prometheus.Counter
	predErr       *prometheus.HistogramVec
	predRelErr    *prometheus.HistogramVec
	calls         *prometheus.CounterVec
	callSeconds   prometheus.Histogram
	outside       prometheus.Histogram
	programs      prometheus.Gauge
	clientCalls   prometheus.Counter
	prefixCached  prometheus.Counter
	parks         *prometheus.CounterVec
	// Per tenant (the label is the tenant's name from the operator's keys
	// file, so it is bounded by the operator).
	tenantCalls    *prometheus.CounterVec
	tenantTokens   *prometheus.CounterVec
	tenantRejected *prometheus.CounterVec
	tenantActive   *prometheus.GaugeVec
	defaultTenant  defaultTenantSeries
}

func newMetrics() *Metrics {
	r := prometheus.NewRegistry()
	m := &Metrics{
		Registry: r,
		queue: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "pitstop_queue_length",
			Help: "Calls in the engine by state: waiting (to be admitted or recomputed), running, swapped (runnable, KV on the host), paused (waiting for a tool).",
		}, []string{"queue"}),
		policyQueue: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "pitstop_policy_queue_length",
			Help: "Runnable calls waiting for the device, by the scheduling policy's queue (mlfq/plas/atlas/pitstop attained-service queues, 0 the first; promoted: moved ahead by anti-starvation; one queue 0 for policies without queues).",
		}, []string{"policy", "queue"}),
		policyClasses: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "pitstop_policy_classes",
			Help: "Tenants whose program statistics the scheduling policy keeps (pitstop's per-tenant program model and reuse gaps, --pitstop-classes); each is dropped once its tenant is idle past --program-ttl. 0 for a policy that keeps none per tenant.",
		}),
		kvBlocks: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "pitstop_kv_blocks",
			Help: "Device KV blocks: used, free, total.",
		}, []string{"state"}),
		hostBlocks: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "pitstop_kv_host_blocks",
			Help: "Host-tier KV blocks: used, capacity.",
		}, []string{"state"}),
		swapBlocks: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "pitstop_swap_blocks_total",
			Help: "KV blocks moved between device and host, by direction (out, in).",
		}, []string{"direction"}),
		swapBytes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "pitstop_swap_bytes_total",
			Help: "KV bytes moved between device and host, by direction (out, in).",
		}, []string{"direction"}),
		recompute: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "pitstop_recompute_tokens_total",
			Help: "Tokens whose KV was computed again after a discard or a preemption.",
		}),
		preemptions: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "pitstop_preemptions_total",
			Help: "Running calls evicted to make room.",
		}),
		iterations: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "pitstop_engine_iterations_total",
			Help: "Engine iterations run.",
		}),
		iterSeconds: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "pitstop_engine_iteration_seconds",
			Help:    "Wall time of one engine iteration (paced simulated time, or the executor's).",
			Buckets: prometheus.ExponentialBuckets(0.0005, 2, 14),
		}),
		tokens: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "pitstop_tokens_total",
			Help: "Tokens by kind: prompt (submitted), generated, tool_result (appended after server-side tools).",
		}, []string{"kind"}),
		handling: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "pitstop_handling_decisions_total",
			Help: "Handling decisions for calls paused on a tool (preserve, swap, discard), at the tool call (event=paused) and later changes while it waits (event=changed).",
		}, []string{"kind", "event"}),
		toolLatency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "pitstop_tool_duration_seconds",
			Help:    "Tool run time by tool and outcome (ok, error, cached).",
			Buckets: prometheus.ExponentialBuckets(0.0001, 3, 14),
		}, []string{"tool", "outcome"}),
		toolRounds: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "pitstop_tool_rounds_total",
			Help: "Server-side tool rounds (one model turn's tool calls run together).",
		}),
		resultsCut: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "pitstop_tool_results_cut_total",
			Help: "Server-side tool rounds whose results were cut to leave the model room to answer within its context.",
		}),
		predErr: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "pitstop_tool_duration_prediction_error_seconds",
			Help:    "Absolute error of the predicted tool-round duration (the ToolCall.Expected the engine's handling used) against the measured one, by tool.",
			Buckets: prometheus.ExponentialBuckets(0.0001, 3, 14),
		}, []string{"tool"}),
		predRelErr: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "pitstop_tool_duration_prediction_relative_error",
			Help:    "|predicted - measured| / measured of tool-round durations, by tool.",
			Buckets: []float64{0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 100},
		}, []string{"tool"}),
		calls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "pitstop_calls_total",
			Help: "Finished chat calls by finish reason (stop, length, tool_calls, error, cancelled).",
		}, []string{"finish"}),
		callSeconds: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "pitstop_call_seconds",
			Help:    "Time from a call's arrival to its end, as the runtime sees it.",
			Buckets: prometheus.ExponentialBuckets(0.001, 2, 18),
		}),
		outside: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "pitstop_call_outside_seconds",
			Help:    "Time of a call spent outside the engine and the tools: decoding, rendering, tokenizing, bookkeeping, writing the response.",
			Buckets: prometheus.ExponentialBuckets(0.00001, 2, 20),
		}),
		programs: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "pitstop_programs",
			Help: "Programs in the program table.",
		}),
		clientCalls: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "pitstop_client_tool_calls_total",
			Help: "Tool calls returned to the client (tools it declared but did not register).",
		}),
		prefixCached: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "pitstop_prefix_cached_tokens_total",
			Help: "Prompt tokens whose KV was already computed when the call started (prefix cache, or a resumed paused call).",
		}),
		parks: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "pitstop_client_tool_pauses_total",
			Help: "Calls paused across tool calls returned to the client, by event: parked, resumed (by the program's next call), replaced, expired, released.",
		}, []string{"event"}),
		tenantCalls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "pitstop_tenant_calls_total",
			Help: "Chat calls started, by tenant.",
		}, []string{"tenant"}),
		tenantTokens: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "pitstop_tenant_tokens_total",
			Help: "Tokens of finished calls by tenant and kind (prompt, completion).",
		}, []string{"tenant", "kind"}),
		tenantRejected: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "pitstop_tenant_rejected_total",
			Help: "Calls and invokes refused by a tenant limit (answered 429), by tenant and code.",
		}, []string{"tenant", "code"}),
		tenantActive: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "pitstop_tenant_active_calls",
			Help: "Chat calls and tool invokes in flight, by tenant.",
		}, []string{"tenant"}),
	}
	r.MustRegister(m.queue, m.policyQueue, m.policyClasses, m.kvBlocks, m.hostBlocks, m.swapBlocks, m.swapBytes, m.recompute,
		m.preemptions, m.iterations, m.iterSeconds, m.tokens, m.handling, m.toolLatency,
		m.toolRounds, m.resultsCut, m.predErr, m.predRelErr, m.calls, m.callSeconds, m.outside, m.programs,
		m.clientCalls, m.prefixCached, m.parks, m.tenantCalls, m.tenantTokens, m.tenantRejected, m.tenantActive,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	for _, k := range []handling.Kind{handling.Preserve, handling.Swap, handling.Discard} {
		m.handling.WithLabelValues(k.String(), "paused")
		m.handling.WithLabelValues(k.String(), "changed")
	}
	for _, d := range []string{"out", "in"} {
		m.swapBlocks.WithLabelValues(d)
		m.swapBytes.WithLabelValues(d)
	}
	return m
}

// iteration books one engine iteration.
func (m *Metrics) iteration(st *engine.IterationStats) {
	m.iterations.Inc()
	m.iterSeconds.Observe(st.Duration.Seconds())
	m.kvBlocks.WithLabelValues("used").Set(float64(st.UsedBlocks))
	m.kvBlocks.WithLabelValues("free").Set(float64(st.TotalBlocks - st.UsedBlocks))
	m.kvBlocks.WithLabelValues("total").Set(float64(st.TotalBlocks))
	m.hostBlocks.WithLabelValues("used").Set(float64(st.HostUsed))
	if st.SwapOutBlocks > 0 {
		m.swapBlocks.WithLabelValues("out").Add(float64(st.SwapOutBlocks))
		m.swapBytes.WithLabelValues("out").Add(float64(st.SwapOutBytes))
	}
	if st.SwapInBlocks > 0 {
		m.swapBlocks.WithLabelValues("in").Add(float64(st.SwapInBlocks))
		m.swapBytes.WithLabelValues("in").Add(float64(st.SwapInBytes))
	}
	m.recompute.Add(float64(st.RecomputeTokens))
	m.preemptions.Add(float64(st.Preemptions))
}

// toolFinished implements tools.Observer.
func (m *Metrics) toolFinished(name string, seconds float64, isError, cached bool) {
	outcome := "ok"
	switch {
	case cached:
		outcome = "cached"
	case isError:
		outcome = "error"
	}
	m.toolLatency.WithLabelValues(name, outcome).Observe(seconds)
}
