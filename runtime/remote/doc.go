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
//
// The requests to an http:// backend go by default over the router's own
// small keep-alive pool (inline.go): each request is written and its reply
// read on the caller's goroutine, with the standard library's
// (*http.Request).Write and http.ReadResponse, so the wire format, chunked
// bodies and every behaviour built on *http.Response stay net/http's. A
// generation's request is the exception (inline_post.go): written from
// bytes net/http made once per backend, held to (*http.Request).Write's by
// a differential fuzz test: what it spares a call is measured in
// docs/results-router.md §4, session 12.
//
// net/http's Transport hands every request to a connection's writeLoop and
// readLoop goroutines and back (a fifth of the router's CPU at 1,000
// calls/s). valyala/fasthttp would avoid that too, but its Do takes no
// context: a streamed reply is cut by closing its body stream from another
// goroutine, which raced the stream's Read (valyala/fasthttp#2359, 2026),
// and its own request and response types would need the fault handling
// re-proved; the pool here is some 250 lines over the standard library.
// https backends, backends behind a proxy and transport=nethttp keep
// net/http's Transport (TLS, HTTP/2, proxies): the fallback.
package remote
