package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/pflag"

	"github.com/pitstop-llm/pitstop/bench"
	"github.com/pitstop-llm/pitstop/bench/report"
	"github.com/pitstop-llm/pitstop/cluster"
	"github.com/pitstop-llm/pitstop/engine"
	"github.com/pitstop-llm/pitstop/engine/sim"
)

// addClusterFlags registers bench's replica flags (bench --replicas N).
func addClusterFlags(fl *pflag.FlagSet, f *benchFlags) {
	fl.IntVar(&f.replicas, "replicas", 0, "simulate this many engine replicas on one virtual clock (--executor sim), each with its own KV pool, host tier, prefix cache and policy; calls go where --balancers sends them; --profile p1,p2,... gives one profile per replica, cycled (0: one engine, no balancer)")
	fl.StringSliceVar(&f.balancers, "balancers", []string{"round-robin", "autellix", "pitstop"}, "with --replicas: comma-separated balancers ("+strings.Join(cluster.Names(), ", ")+")")
	fl.IntVar(&f.copts.LongPrompt, "autellix-long", 0, "autellix balancer: prompts longer than this many tokens stay on their program's replica (0: the paper's 2048)")
}

// planCluster validates the replica flags and loads one profile per replica.
func planCluster(f benchFlags, changed func(string) bool) ([]*sim.Profile, error) {
	if f.replicas <= 0 {
		return nil, usagef("invalid --replicas %d: must be a positive number of engine replicas", f.replicas)
	}
	if f.executor != "sim" {
		return nil, usagef("--replicas simulates replicas on --executor sim, not --executor %s", f.executor)
	}
	for _, n := range f.cpuNames {
		if changed(n) {
			return nil, usagef("--%s is a flag of --executor cpu, not of --executor sim", n)
		}
	}
	if len(f.balancers) == 0 {
		return nil, usagef("no balancers given (valid: %s)", strings.Join(cluster.Names(), ", "))
	}
	for _, b := range f.balancers {
		if _, err := cluster.New(b, f.copts); err != nil {
			return nil, usageError{err.Error()}
		}
	}
	names := strings.Split(f.profile, ",")
	if len(names) > f.replicas {
		return nil, usagef("%d profiles for %d replicas: give at most one profile per replica (valid profiles: %s)", len(names), f.replicas, strings.Join(sim.ProfileNames(), ", "))
	}
	loaded := map[string]*sim.Profile{}
	out := make([]*sim.Profile, f.replicas)
	for i := range out {
		n := strings.TrimSpace(names[i%len(names)])
		p, ok := loaded[n]
		if !ok {
			var err error
			if p, err = sim.LoadProfile(n); err != nil {
				return nil, usageError{err.Error()}
			}
			loaded[n] = p
		}
		out[i] = p
	}
	return out, nil
}

// describeReplicas names a fleet: "4x a100-80g-llama3-8b + 2x ...".
func describeReplicas(ps []*sim.Profile) string {
	var order []string
	count := map[string]int{}
	for _, p := range ps {
		if count[p.Name] == 0 {
			order = append(order, p.Name)
		}
		count[p.Name]++
	}
	parts := make([]string, len(order))
	for i, n := range order {
		parts[i] = fmt.Sprintf("%dx %s", count[n], n)
	}
	return strings.Join(parts, " + ")
}

// runClusterJob runs one (policy, balancer, rate) on the replicas, each with
// its own instance of the policy.
func runClusterJob(ctx context.Context, rc bench.RunConfig, profiles []*sim.Profile, balancer string, f benchFlags) (report.Run, error) {
	bal, err := cluster.New(balancer, f.copts)
	if err != nil {
		return report.Run{}, err
	}
	var polErr error
	reps := bench.ProfileReplicas(profiles, func() engine.Policy {
		p, err := newBenchPolicy(rc.Name, f)
		if err != nil {
			polErr = err
		}
		return p
	})
	if polErr != nil {
		return report.Run{}, polErr
	}
	for i := range reps {
		reps[i].Engine.CacheEviction = engine.CacheEviction(f.cacheEviction)
	}
	return bench.RunCluster(ctx, bench.ClusterConfig{Run: rc, Replicas: reps, Balancer: bal})
}

// clusterSeries names each (policy, balancer) pair of a cluster run as its
// table does: policy/balancer, policies outermost.
func clusterSeries(policies, balancers []string) []string {
	out := make([]string, 0, len(policies)*len(balancers))
	for _, p := range policies {
		for _, b := range balancers {
			out = append(out, p+"/"+b)
		}
	}
	return out
}
