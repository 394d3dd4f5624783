// Package cluster decides which engine replica takes an LLM call: the state
// of a set of replicas as a balancer sees it (State, Replica) and the
// Balancer interface with its implementations, from the baselines
// (round-robin, least-used, least-tokens, the SGLang-style prefix router,
// Autellix's Algorithm 2) to pitstop's own.
//
// It imports no HTTP and no runtime code so that the simulator (bench
// --replicas) and the serving path use the same decisions; whoever owns the
// replicas fills the State at the time of each call. The balancers are
// written by hand because each is a few lines of arithmetic over that state
// and a decision must take well under 10 µs with 64 replicas.
package cluster
