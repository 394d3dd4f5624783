package remote

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/pitstop-llm/pitstop/internal/testutil"
)

func inlineGet(t *testing.T, tr *inlineTransport, ctx context.Context, url string) (*http.Response, error) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	return tr.RoundTrip(req)
}

// A body read to its end gives its connection back; one closed before its
// end, or a reply that says Connection: close, does not.
func TestInlineTransportReuse(t *testing.T) {
	s, conns := testutil.CountingServer(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/close" {
			w.Header().Set("Connection", "close")
		}
		_, _ = io.WriteString(w, strings.Repeat("x", 10000))
	}, nil)
	tr := newInlineTransport(strings.TrimPrefix(s.URL, "http://"), 8, time.Minute)
	t.Cleanup(tr.close)
	call := func(path string, readAll bool) {
		resp, err := inlineGet(t, tr, context.Background(), s.URL+path)
		if err != nil {
			t.Fatal(err)
		}
		if readAll {
			data, err := io.ReadAll(resp.Body)
			if err != nil || len(data) != 10000 {
				t.Fatalf("read %d bytes, %v", len(data), err)
			}
		}
		resp.Body.Close()
	}
	for range 5 {
		call("/", true)
	}
	if n := conns.Load(); n != 1 {
		t.Fatalf("%d connections for 5 calls read to their end, want 1", n)
	}
	call("/", false) // closed before its end: the connection goes
	call("/", true)
	if n := conns.Load(); n != 2 {
		t.Fatalf("%d connections after a body closed early, want 2", n)
	}
	call("/close", true) // Connection: close: the connection goes
	call("/", true)
	if n := conns.Load(); n != 3 {
		t.Fatalf("%d connections after a Connection: close reply, want 3", n)
	}
}

// The request's context ends a request waiting for its reply's headers at
// once: the backend sees its request end.
func TestInlineTransportCancelBeforeHeaders(t *testing.T) {
	ended := make(chan struct{})
	s, _ := testutil.CountingServer(t, func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done()
		close(ended)
	}, nil)
	tr := newInlineTransport(strings.TrimPrefix(s.URL, "http://"), 8, time.Minute)
	t.Cleanup(tr.close)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(20*time.Millisecond, cancel)
	_, err := inlineGet(t, tr, ctx, s.URL)
	if err != context.Canceled {
		t.Fatalf("error %v, want context.Canceled", err)
	}
	select {
	case <-ended:
	case <-time.After(10 * time.Second):
		t.Fatal("the backend's request went on after its context ended")
	}
}

// A backend slower than headerWait to answer fails the request.
func TestInlineTransportHeaderWait(t *testing.T) {
	s, _ := testutil.CountingServer(t, func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(5 * time.Second):
		}
	}, nil)
	tr := newInlineTransport(strings.TrimPrefix(s.URL, "http://"), 8, 50*time.Millisecond)
	t.Cleanup(tr.close)
	_, err := inlineGet(t, tr, context.Background(), s.URL)
	if err == nil || !strings.Contains(err.Error(), "timeout") {
		t.Fatalf("error %v, want a timeout", err)
	}
}

// Each backend gets the transport its spec and the router's config call
// for: inline for plain http, net/http's for https, transport=nethttp and
// a Config.Transport.
func TestClientFor(t *testing.T) {
	if p, _ := http.ProxyFromEnvironment(httptest.NewRequest(http.MethodGet, "http://a:8000", nil)); p != nil {
		t.Skipf("a proxy (%s) is set for http:// in the environment: every backend then uses net/http's transport", p)
	}
	r := &Router{client: &http.Client{}}
	for _, c := range []struct {
		url, transport string
		inline         bool
	}{
		{"http://a:8000", "", true},
		{"http://a", TransportInline, true},
		{"http://a:8000", TransportNetHTTP, false},
		{"https://a:8000", "", false},
	} {
		client, tr, err := r.clientFor(Spec{URL: c.url, Transport: c.transport})
		if err != nil {
			t.Fatalf("%s %s: %v", c.url, c.transport, err)
		}
		if (tr != nil) != c.inline || (tr != nil && client.Transport != http.RoundTripper(tr)) || (tr == nil && client != r.client) {
			t.Errorf("%s transport=%q: inline %v, want %v", c.url, c.transport, tr != nil, c.inline)
		}
		if tr != nil && !strings.Contains(tr.addr, ":") {
			t.Errorf("%s: dials %q, no port", c.url, tr.addr)
		}
	}
	if _, _, err := r.clientFor(Spec{URL: "https://a", Transport: TransportInline}); err == nil {
		t.Error("transport=inline accepted for an https backend")
	}
	r.cfg.Transport = http.DefaultTransport
	if _, tr, _ := r.clientFor(Spec{URL: "http://a:8000"}); tr != nil {
		t.Error("Config.Transport set, yet the backend got the inline transport")
	}
}
