package api

import (
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pitstop-llm/pitstop/runtime"
	"github.com/pitstop-llm/pitstop/runtime/remote"
)

// Calls through the router keep their connection to a backend that
// streams its reply (chunked, its body's end a moment after [DONE]): the
// call's end, which cancels its context, does not cut the reading of the
// body's end, and the connection goes back to the pool.
func TestRouterKeepsStreamedConnections(t *testing.T) {
	var conns atomic.Int64
	b := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		if r.URL.Path == "/v1/models" {
			_, _ = io.WriteString(w, `{"object":"list","data":[{"id":"m"}]}`)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		for _, e := range []string{`{"model":"m","choices":[{"index":0,"delta":{"content":"ok"},"finish_reason":"stop"}]}`, `[DONE]`} {
			_, _ = io.WriteString(w, "data: "+e+"\n\n")
			w.(http.Flusher).Flush()
		}
		time.Sleep(time.Millisecond) // the body's last chunk comes after [DONE]
	}))
	b.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			conns.Add(1)
		}
	}
	b.Start()
	t.Cleanup(b.Close)
	specs, err := remote.ParseSpecs([]string{b.URL})
	if err != nil {
		t.Fatal(err)
	}
	r, err := remote.New(remote.Config{HealthInterval: time.Hour, Logger: slog.New(slog.DiscardHandler)}, specs)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Close)
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
