package main

import (
	"log/slog"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/pitstop-llm/pitstop/cluster"
	"github.com/pitstop-llm/pitstop/runtime"
	"github.com/pitstop-llm/pitstop/runtime/remote"
)

// backendFlags make serve a router in front of OpenAI-compatible servers
// it does not run (runtime/remote).
type backendFlags struct {
	backends       []string
	balancer       string
	healthInterval time.Duration
	healthTimeout  time.Duration
	order          string
	affinitySlack  int
}

func addBackendFlags(fl *pflag.FlagSet, f *backendFlags) {
	fl.StringArrayVar(&f.backends, "backend", nil, "serve no model: route every call to these OpenAI-compatible servers (vLLM, SGLang, llama.cpp, pitstop). Repeatable, or a comma list; each URL may be followed by its options: URL[,kind=vllm|sglang|llamacpp|pitstop|openai][,weight=X][,max-inflight=N][,api-key-env=VAR]")
	fl.StringVar(&f.balancer, "balancer", remote.DefaultBalancer, "with --backend: which backend takes a call: "+strings.Join(cluster.Names(), ", "))
	fl.StringVar(&f.order, "router-order", remote.OrderPitstop, "with --backend: order of the calls waiting for a backend's free slot: pitstop (the program with the least service so far first; passed on as vLLM's and SGLang's priority) or fcfs (arrival order)")
	fl.IntVar(&f.affinitySlack, "affinity-slack", remote.DefaultAffinitySlack, "with --backend: a program's next call stays on the backend holding its context unless that backend's queue is longer than the shortest by more than this many calls (negative: no affinity, the balancer decides every call)")
	fl.DurationVar(&f.healthInterval, "health-interval", remote.DefaultHealthInterval, "with --backend: how often each backend is health-checked (GET /v1/models)")
	fl.DurationVar(&f.healthTimeout, "health-timeout", remote.DefaultHealthTimeout, "with --backend: how long one health check may take")
}

// modelFlagNames are the flags of a served model: meaningless with --backend.
var modelFlagNames = []string{"model", "load-format", "model-seed", "chat-template", "served-model-name", "kv-tokens", "host-kv-tokens",
	"max-batched-tokens", "max-seqs", "swap-blocks-per-iter", "calibrate", "profile", "pace"}

// specs checks the flags (bad input: one line, exit 2).
func (f *backendFlags) specs(changed func(string) bool) ([]remote.Spec, error) {
	if len(f.backends) == 0 {
		for _, n := range []string{"balancer", "health-interval", "health-timeout", "router-order", "affinity-slack"} {
			if changed(n) {
				return nil, usagef("--%s needs --backend", n)
			}
		}
		return nil, nil
	}
	specs, err := remote.ParseSpecs(f.backends)
	if err != nil {
		return nil, usageError{err.Error()}
	}
	if len(specs) == 0 {
		return nil, usagef("--backend: no URL given")
	}
	if _, err := cluster.New(f.balancer, cluster.Options{}); err != nil {
		return nil, usagef("--balancer: %v", err)
	}
	if f.order != remote.OrderPitstop && f.order != remote.OrderFCFS {
		return nil, usagef("--router-order %q: valid: pitstop, fcfs", f.order)
	}
	if f.healthInterval <= 0 || f.healthTimeout <= 0 {
		return nil, usagef("--health-interval and --health-timeout must be positive")
	}
	for _, n := range modelFlagNames {
		if changed(n) {
			return nil, usagef("--%s describes a model pitstop runs; with --backend the backends run the model", n)
		}
	}
	return specs, nil
}

// apply builds the router and sets the runtime to serve on it. An
// unreachable backend is a warning: the health check keeps trying it.
func (f *backendFlags) apply(specs []remote.Spec, cfg *runtime.Config, log *slog.Logger) (*remote.Router, error) {
	r, err := remote.New(remote.Config{Balancer: f.balancer, Order: f.order, AffinitySlack: f.affinitySlack, HealthInterval: f.healthInterval, HealthTimeout: f.healthTimeout, Logger: log}, specs)
	if err != nil {
		return nil, usageError{err.Error()}
	}
	cfg.Remote = r
	return r, nil
}

func backendNames(specs []remote.Spec) string {
	names := make([]string, len(specs))
	for i, s := range specs {
		names[i] = s.Name() + " (" + string(s.Kind) + ")"
	}
	return strings.Join(names, ", ")
}
