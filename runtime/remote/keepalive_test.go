package remote

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/pitstop-llm/pitstop/internal/testutil"
)

// A backend that streams its reply (chunked, flushed event by event, as
// vLLM and llama.cpp do) keeps its connection from call to call: the
// router reads the reply's body to its end after [DONE] (a body closed
// before its end costs the connection: a dial per call). The body's end
// comes 1 ms after [DONE]; the calls are 20 ms apart, time enough for
// the drain to give the connection back.
func TestGenerateReusesStreamedConnection(t *testing.T) {
	forTransports(t, testReusesStreamedConnection)
}

func testReusesStreamedConnection(t *testing.T, transport string) {
	s, conns := testutil.CountingSSEBackend(t, "m1", time.Millisecond, nil, // the end of the body comes after [DONE]
		`{"model":"m1","choices":[{"index":0,"delta":{"role":"assistant","content":"ok"}}]}`,
		`{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`, `[DONE]`)
	r := newTestRouter(t, "", s.URL+",transport="+transport)
	const calls = 30
	for range calls {
		time.Sleep(20 * time.Millisecond)
		if _, err := r.Generate(context.Background(), userReq("p"), "", func(Event) bool { return true }); err != nil {
			t.Fatal(err)
		}
	}
	// One connection for the calls (the old code: one per call); a few
	// more for a health check that overlapped one, or a drain that a busy
	// machine had not yet run when the next call began.
	if n := conns.Load(); n > 5 {
		t.Fatalf("%d connections for %d sequential calls: the router dropped them", n, calls)
	}
}

// The call's end (its context cancelled as soon as the reply is read, as
// the runtime does when the call completes) does not cut the body's rest:
// the drain still gives the connection back. The inline transport watches
// the call's context itself and lets go of it before the drain
// (inlineBody.detach); net/http's, through a detached request context.
func TestGenerateDrainOutlivesTheCall(t *testing.T) {
	forTransports(t, func(t *testing.T, transport string) {
		s, conns := testutil.CountingSSEBackend(t, "m1", 5*time.Millisecond, nil, // the body's end 5 ms after [DONE]
			`{"model":"m1","choices":[{"index":0,"delta":{"role":"assistant","content":"ok"}}]}`,
			`{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`, `[DONE]`)
		r := newTestRouter(t, "", s.URL+",transport="+transport)
		const calls = 20
		for range calls {
			time.Sleep(20 * time.Millisecond)
			ctx, cancel := context.WithCancel(context.Background())
			_, err := r.Generate(ctx, userReq("p"), "", func(Event) bool { return true })
			cancel() // the call ends while its body's end is still coming
			if err != nil {
				t.Fatal(err)
			}
		}
		if n := conns.Load(); n > 5 {
			t.Fatalf("%d connections for %d sequential calls: the call's end cut the drain", n, calls)
		}
	})
}

// A backend that never ends its body after [DONE] holds up no call: the
// reply returns at once, and the drain gives up on the connection after
// drainWait (closes it).
func TestGenerateDrainGivesUp(t *testing.T) { forTransports(t, testDrainGivesUp) }

func testDrainGivesUp(t *testing.T, transport string) {
	closed := make(chan struct{}, 4)
	s := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		if r.URL.Path == "/v1/models" {
			_, _ = io.WriteString(w, `{"object":"list","data":[{"id":"m1"}]}`)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		testutil.SSE(w, `{"model":"m1","choices":[{"index":0,"delta":{"content":"ok"},"finish_reason":"stop"}]}`, `[DONE]`)
		<-r.Context().Done() // the body never ends
	}))
	s.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateClosed {
			closed <- struct{}{}
		}
	}
	s.Start()
	t.Cleanup(s.Close)
	r := newTestRouter(t, "", s.URL+",transport="+transport)
	start := time.Now()
	rep, err := r.Generate(context.Background(), userReq("p"), "", func(Event) bool { return true })
	if err != nil || rep.Content != "ok" {
		t.Fatalf("reply %+v, %v", rep, err)
	}
	if d := time.Since(start); d >= drainWait/2 {
		t.Errorf("the reply took %v: it waited for the body's end", d)
	}
	select {
	case <-closed:
	case <-time.After(10 * drainWait):
		t.Fatal("the connection of a body that never ends was never closed")
	}
}

// The caller's end still ends the backend's request at once, before the
// reply is complete: the body's-end reading does not detach it earlier.
func TestGenerateCallerGoneEndsBackendRequest(t *testing.T) {
	forTransports(t, testCallerGoneEndsBackendRequest)
}

func testCallerGoneEndsBackendRequest(t *testing.T, transport string) {
	ended := make(chan struct{})
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		if r.URL.Path == "/v1/models" {
			_, _ = io.WriteString(w, `{"object":"list","data":[{"id":"m1"}]}`)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		testutil.SSE(w, `{"model":"m1","choices":[{"index":0,"delta":{"content":"ok"}}]}`)
		<-r.Context().Done() // a long generation, until the router gives up
		close(ended)
	}))
	t.Cleanup(s.Close)
	r := newTestRouter(t, "", s.URL+",transport="+transport)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := r.Generate(ctx, userReq("p"), "", func(e Event) bool { cancel(); return true })
		done <- err
	}()
	select {
	case <-ended:
	case <-time.After(10 * time.Second):
		t.Fatal("the backend's request went on after the caller was gone")
	}
	if err := <-done; err == nil {
		t.Fatal("Generate succeeded for a caller that was gone")
	}
}

// forTransports runs test with each backend transport.
func forTransports(t *testing.T, test func(*testing.T, string)) {
	for _, tr := range []string{TransportInline, TransportNetHTTP} {
		t.Run(tr, func(t *testing.T) { test(t, tr) })
	}
}

// A kept connection that the backend closed while it was idle (its
// keep-alive timeout) costs the next call nothing: the request is sent
// again on a new connection.
func TestGenerateAfterBackendClosedIdleConnection(t *testing.T) {
	forTransports(t, func(t *testing.T, transport string) {
		s, conns := testutil.CountingSSEBackend(t, "m1", 0, func(c *http.Server) { c.IdleTimeout = 20 * time.Millisecond },
			`{"model":"m1","choices":[{"index":0,"delta":{"content":"ok"},"finish_reason":"stop"}]}`, `[DONE]`)
		specs, err := ParseSpecs([]string{s.URL + ",transport=" + transport})
		if err != nil {
			t.Fatal(err)
		}
		r, err := New(Config{HealthInterval: time.Hour, Logger: slog.New(slog.DiscardHandler)}, specs)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(r.Close)
		for i := range 3 {
			time.Sleep(200 * time.Millisecond) // the backend closes the idle connection
			rep, err := r.Generate(context.Background(), userReq("p"), "", func(Event) bool { return true })
			if err != nil || rep.Content != "ok" {
				t.Fatalf("call %d after the idle connection was closed: %+v, %v", i, rep, err)
			}
		}
		if n := conns.Load(); n < 3 {
			t.Fatalf("%d connections: the backend's idle timeout never closed one, the test shows nothing", n)
		}
	})
}
