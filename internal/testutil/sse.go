package testutil

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"
)

// SSE writes events to w as server-sent events, each one flushed.
func SSE(w http.ResponseWriter, events ...string) {
	for _, e := range events {
		fmt.Fprintf(w, "data: %s\n\n", e)
		w.(http.Flusher).Flush()
	}
}

// CountingSSEBackend starts a backend, closed with t, that lists model and
// answers every other request with events as a stream, its body ending
// tail after the last; it counts the connections opened to it. configure,
// when set, adjusts the server before it starts.
func CountingSSEBackend(t testing.TB, model string, tail time.Duration, configure func(*http.Server), events ...string) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	return CountingServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		if r.URL.Path == "/v1/models" {
			_, _ = io.WriteString(w, `{"object":"list","data":[{"id":"`+model+`"}]}`)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		SSE(w, events...)
		time.Sleep(tail)
	}), configure)
}

// CountingServer starts h on loopback, closed with t, and counts the
// connections opened to it. configure, when set, adjusts the server before
// it starts.
func CountingServer(t testing.TB, h http.HandlerFunc, configure func(*http.Server)) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var conns atomic.Int64
	s := httptest.NewUnstartedServer(h)
	if configure != nil {
		configure(s.Config)
	}
	s.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			conns.Add(1)
		}
	}
	s.Start()
	t.Cleanup(s.Close)
	return s, &conns
}
