package api

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	goruntime "runtime"
	"strings"
	"testing"
	"time"

	"github.com/pitstop-llm/pitstop/runtime"
	"github.com/pitstop-llm/pitstop/runtime/remote"
)

// cannedBackend answers every request in memory: the model list, or a
// short streamed reply (routerload's fake backend's).
type cannedBackend struct{}

const cannedReply = `data: {"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":"ok "}}]}` + "\n\n" +
	`data: {"choices":[{"index":0,"delta":{"content":"done"},"finish_reason":"stop"}]}` + "\n\n" +
	`data: {"choices":[],"usage":{"prompt_tokens":8,"completion_tokens":2,"prompt_tokens_details":{"cached_tokens":0}}}` + "\n\ndata: [DONE]\n\n"

func (cannedBackend) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body != nil {
		_, _ = io.Copy(io.Discard, r.Body)
		r.Body.Close()
	}
	body, ct := cannedReply, "text/event-stream"
	if strings.HasSuffix(r.URL.Path, "/models") {
		body, ct = `{"data":[{"id":"m"}]}`, "application/json"
	}
	return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {ct}}, Body: io.NopCloser(strings.NewReader(body)), Request: r}, nil
}

// BenchmarkRouterCall is the router's whole per-call path but the sockets:
// the client's request decoded, the call set up, the generation on a
// backend (pick, admission, request encoded, stream read), the answer
// encoded to the client and the metrics; the backend answers in memory.
// routerload's overhead mode measures the same path with loopback HTTP.
func BenchmarkRouterCall(b *testing.B) {
	for _, stream := range []bool{false, true} {
		name := "json"
		if stream {
			name = "stream"
		}
		b.Run(name, func(b *testing.B) {
			specs, err := remote.ParseSpecs([]string{"http://a:1,max-inflight=1024"})
			if err != nil {
				b.Fatal(err)
			}
			quiet := slog.New(slog.DiscardHandler)
			r, err := remote.New(remote.Config{Transport: cannedBackend{}, HealthInterval: time.Hour, Logger: quiet}, specs)
			if err != nil {
				b.Fatal(err)
			}
			defer r.Close()
			rt, err := runtime.New(runtime.Config{Remote: r, Logger: quiet})
			if err != nil {
				b.Fatal(err)
			}
			defer rt.Close()
			srv, err := New(Config{Runtime: rt, Logger: quiet})
			if err != nil {
				b.Fatal(err)
			}
			h := srv.Handler()
			body := `{"model":"m","messages":[{"role":"user","content":"call-1"}]` + map[bool]string{false: "}", true: `,"stream":true}`}[stream]
			b.ReportAllocs()
			var before, after goruntime.MemStats
			goruntime.ReadMemStats(&before)
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					req := httptest.NewRequest(http.MethodPost, "/v1/chat/completions", strings.NewReader(body))
					req.Header.Set("Content-Type", "application/json")
					w := httptest.NewRecorder()
					h.ServeHTTP(w, req)
					if w.Code != http.StatusOK || !strings.Contains(w.Body.String(), "done") {
						b.Fatalf("HTTP %d: %s", w.Code, w.Body)
					}
				}
			})
			goruntime.ReadMemStats(&after)
			// The collector's work follows the bytes allocated: its cycles
			// per thousand calls at this benchmark's (small) live heap.
			b.ReportMetric(float64(after.NumGC-before.NumGC)/float64(b.N)*1000, "GCs/1000calls")
		})
	}
}
