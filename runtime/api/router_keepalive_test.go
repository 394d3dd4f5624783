package api

import (
	"net/http"
	"testing"
	"time"

	"github.com/pitstop-llm/pitstop/internal/testutil"
	"github.com/pitstop-llm/pitstop/runtime"
	"github.com/pitstop-llm/pitstop/runtime/remote"
)

// Calls through the router keep their connection to a backend that
// streams its reply (chunked, its body's end a moment after [DONE]): the
// call's end, which cancels its context, does not cut the reading of the
// body's end, and the connection goes back to the pool.
func TestRouterKeepsStreamedConnections(t *testing.T) {
	b, conns := testutil.CountingSSEBackend(t, "m", time.Millisecond, nil, // the body's last chunk comes after [DONE]
		`{"model":"m","choices":[{"index":0,"delta":{"content":"ok"},"finish_reason":"stop"}]}`, `[DONE]`)
	r := newRemote(t, remote.Config{HealthInterval: time.Hour}, b.URL)
	ts := newTestServer(t, serverOpts{rt: runtime.Config{Remote: r}})
	const calls = 30
	for range calls {
		time.Sleep(20 * time.Millisecond)
		code, out := ts.do(http.MethodPost, "/v1/chat/completions", `{"model":"m","messages":[{"role":"user","content":"hi"}]}`, nil)
		if code != http.StatusOK {
			t.Fatalf("HTTP %d: %v", code, out)
		}
	}
	// One connection for the calls and the first health check (one per
	// call without the drain, or when the call's end cuts it); a few more
	// for a drain a busy machine ran late.
	if n := conns.Load(); n > 5 {
		t.Fatalf("%d connections to the backend for %d sequential calls", n, calls)
	}
}
