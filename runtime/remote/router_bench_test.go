package remote

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"
)

// cannedTransport answers every request in memory: the model list, or a
// short streamed reply. It leaves the router's own work per call: pick,
// admission, encoding the request, reading the stream.
type cannedTransport struct{}

const cannedStream = `data: {"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":"ok "}}]}` + "\n\n" +
	`data: {"choices":[{"index":0,"delta":{"content":"done"},"finish_reason":"stop"}]}` + "\n\n" +
	`data: {"choices":[],"usage":{"prompt_tokens":8,"completion_tokens":2,"prompt_tokens_details":{"cached_tokens":0}}}` + "\n\ndata: [DONE]\n\n"

func (cannedTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body != nil {
		_, _ = io.Copy(io.Discard, r.Body)
		r.Body.Close()
	}
	body, ct := cannedStream, "text/event-stream"
	if strings.HasSuffix(r.URL.Path, "/models") {
		body, ct = `{"data":[{"id":"m"}]}`, "application/json"
	}
	return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {ct}}, Body: io.NopCloser(strings.NewReader(body)), Request: r}, nil
}

// BenchmarkGenerate is the router's time per generation outside the
// network and the backend, over three backends.
func BenchmarkGenerate(b *testing.B) {
	specs, _ := ParseSpecs([]string{"http://a:1,kind=vllm,http://b:1,http://c:1"})
	r, err := New(Config{Transport: cannedTransport{}, HealthInterval: time.Hour, Logger: slog.New(slog.DiscardHandler)}, specs)
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	req := userReq("p")
	ctx := context.Background()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := r.Generate(ctx, req, "", func(Event) bool { return false }); err != nil {
				b.Fatal(err)
			}
		}
	})
}
