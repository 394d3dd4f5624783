// Package remote puts pitstop in front of OpenAI-compatible engines it does
// not run (vLLM, SGLang, llama.cpp server, other pitstops): a Router holds
// the backends, picks one per call with a cluster.Balancer (the same
// balancers the simulator replays), keeps a program's calls on the backend
// that holds its prefix (affinity: "preserve" on an engine we do not own),
// admits calls to each backend through a queue ordered by the program's
// rank with a limit of calls in flight, health-checks the backends and
// moves calls off a backend that fails.
//
// It only generates: the tool loop, programs, tenants and the HTTP API stay
// in package runtime and runtime/api, which drive a Router through
// Generate ("continue this conversation"). The OpenAI wire format, the
// server-sent events and the reassembly of streamed tool-call fragments are
// written here by hand: go-openai's client is a client of one server, not a
// proxy that must see each fragment, keep a backend's own fields
// (cached_tokens, priority) and tell a failed backend from a bad reply.
package remote
