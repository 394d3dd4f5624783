// Package planner is SamuLLM (sampling-then-simulation planning of a
// multi-LLM application on a GPU budget): an application is a graph of
// models with data dependencies; each model answers a set of requests whose
// output lengths are sampled from the model's empirical distribution; the
// time a model needs under an execution plan (data-parallel replicas ×
// tensor-parallel degree) is found by replaying its sampled requests on the
// engine itself with the simulated executor (engine + engine/sim, FCFS as
// vLLM schedules), plus the plan's load time. A plan's DP replicas are a
// cluster: their engines step on one timeline and a cluster.Balancer
// places each request when it is due (placer.go, cluster.go; least-tokens
// unless told), the Runner placing its requests the same way. Search (Algorithm 1 of the
// paper) builds execution stages greedily, adding or upgrading the
// model-plan pair with the highest per-GPU throughput gain, a stage ending
// when its first model finishes; under the model-rates objective it
// prices candidates from the highest gain bound down and stops where no
// bound can win (prune.go), choosing as pricing them all would. Refine
// keeps that greedy as its core and improves its stages: at each stage
// boundary, moves that change up to reach models' plans are priced by
// what the whole application then takes with the greedy planning the
// rest, until no move helps (the greedy's local optimum on the paper's
// hard cases, a few models with loads as long as their work). The Max-
// and Min-heuristics are the paper's baselines. Runner executes a schedule on real engines (the CPU
// executor) and re-plans when a model finishes out of the planned order.
//
// The search and the heuristics are written here by hand: they are the
// paper's algorithm, not a general solver (an ILP library would answer a
// different problem: stage durations come from simulation, not a formula).
package planner
