package main

import (
	"context"
	"log/slog"
	"strings"
	"sync"
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
	dns            []string
	dnsInterval    time.Duration
	balancer       string
	healthInterval time.Duration
	healthTimeout  time.Duration
	order          string
	affinitySlack  int
}

func addBackendFlags(fl *pflag.FlagSet, f *backendFlags) {
	fl.StringArrayVar(&f.backends, "backend", nil, "serve no model: route every call to these OpenAI-compatible servers (vLLM, SGLang, llama.cpp, pitstop). Repeatable, or a comma list; each URL may be followed by its options: URL[,kind=vllm|sglang|llamacpp|pitstop|openai][,weight=X][,max-inflight=N][,api-key-env=VAR][,transport=inline|nethttp (default inline for http://: the router's own connections; nethttp: net/http's client, always for https)]; llama.cpp: [,slots=N (its -np)][,slot-save=true (it runs with --slot-save-path)] (docs/router.md)")
	fl.StringArrayVar(&f.dns, "backend-dns", nil, "like --backend, but the URL's host is a DNS name re-resolved every --backend-dns-interval: each address it resolves to is a backend (a Kubernetes headless Service: one per ready pod), e.g. http://vllm.default.svc:8000,kind=vllm")
	fl.DurationVar(&f.dnsInterval, "backend-dns-interval", 10*time.Second, "with --backend-dns: how often its names are re-resolved")
	fl.StringVar(&f.balancer, "balancer", remote.DefaultBalancer, "with --backend: which backend takes a call: "+strings.Join(cluster.Names(), ", "))
	fl.StringVar(&f.order, "router-order", remote.OrderPitstop, "with --backend: order of the calls waiting for a backend's free slot: pitstop (the program with the least service so far first; passed on as vLLM's and SGLang's priority) or fcfs (arrival order)")
	fl.IntVar(&f.affinitySlack, "affinity-slack", remote.DefaultAffinitySlack, "with --backend: a program's next call stays on the backend holding its context unless that backend's queue is longer than the shortest by more than this many calls (negative: no affinity, the balancer decides every call)")
	fl.DurationVar(&f.healthInterval, "health-interval", remote.DefaultHealthInterval, "with --backend: how often each backend is health-checked (GET /v1/models)")
	fl.DurationVar(&f.healthTimeout, "health-timeout", remote.DefaultHealthTimeout, "with --backend: how long one health check may take")
}

// modelFlagNames are the flags of a served model: meaningless with --backend.
var modelFlagNames = []string{"model", "load-format", "model-seed", "chat-template", "served-model-name", "kv-tokens", "host-kv-tokens",
	"max-batched-tokens", "max-seqs", "swap-blocks-per-iter", "calibrate", "profile", "pace"}

// routing reports whether serve routes to backends instead of running a
// model.
func (f *backendFlags) routing() bool { return len(f.backends)+len(f.dns) > 0 }

// specs checks the flags (bad input: one line, exit 2): the static
// backends and the DNS names to watch.
func (f *backendFlags) specs(changed func(string) bool) (static, dns []remote.Spec, err error) {
	if !f.routing() {
		for _, n := range []string{"balancer", "health-interval", "health-timeout", "router-order", "affinity-slack", "backend-dns-interval"} {
			if changed(n) {
				return nil, nil, usagef("--%s needs --backend or --backend-dns", n)
			}
		}
		return nil, nil, nil
	}
	if static, err = remote.ParseSpecs(f.backends); err != nil {
		return nil, nil, usageError{err.Error()}
	}
	if dns, err = remote.ParseSpecs(f.dns); err != nil {
		return nil, nil, usageError{strings.Replace(err.Error(), "--backend", "--backend-dns", 1)}
	}
	if len(static)+len(dns) == 0 {
		return nil, nil, usagef("--backend: no URL given")
	}
	if _, err := cluster.New(f.balancer, cluster.Options{}); err != nil {
		return nil, nil, usagef("--balancer: %v", err)
	}
	if f.order != remote.OrderPitstop && f.order != remote.OrderFCFS {
		return nil, nil, usagef("--router-order %q: valid: pitstop, fcfs", f.order)
	}
	if f.healthInterval <= 0 || f.healthTimeout <= 0 || f.dnsInterval <= 0 {
		return nil, nil, usagef("--health-interval, --health-timeout and --backend-dns-interval must be positive")
	}
	for _, n := range modelFlagNames {
		if changed(n) {
			return nil, nil, usagef("--%s describes a model pitstop runs; with --backend the backends run the model", n)
		}
	}
	return static, dns, nil
}

// apply builds the router, starts watching the DNS names and sets the
// runtime to serve on it. An unreachable backend is a warning: the health
// check keeps trying it. stop ends the watches and the health checks.
func (f *backendFlags) apply(static, dns []remote.Spec, cfg *runtime.Config, log *slog.Logger) (stop func(), err error) {
	r, err := remote.New(remote.Config{Balancer: f.balancer, Order: f.order, AffinitySlack: f.affinitySlack, HealthInterval: f.healthInterval, HealthTimeout: f.healthTimeout, Logger: log}, static)
	if err != nil {
		return nil, usageError{err.Error()}
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for _, s := range dns {
		wg.Add(1)
		go func() { defer wg.Done(); r.WatchDNS(ctx, s, f.dnsInterval, nil) }()
	}
	cfg.Remote = r
	return func() { cancel(); wg.Wait(); r.Close() }, nil
}

func backendNames(specs []remote.Spec) string {
	names := make([]string, len(specs))
	for i, s := range specs {
		names[i] = s.Name() + " (" + string(s.Kind) + ")"
	}
	return strings.Join(names, ", ")
}
