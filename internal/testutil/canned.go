package testutil

import (
	"io"
	"net/http"
	"strings"
)

// CannedReply is a short streamed chat completion from model m: "ok done",
// with its usage (8 prompt and 2 completion tokens), then [DONE].
const CannedReply = `data: {"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":"ok "}}]}` + "\n\n" +
	`data: {"choices":[{"index":0,"delta":{"content":"done"},"finish_reason":"stop"}]}` + "\n\n" +
	`data: {"choices":[],"usage":{"prompt_tokens":8,"completion_tokens":2,"prompt_tokens_details":{"cached_tokens":0}}}` + "\n\ndata: [DONE]\n\n"

// CannedTransport answers every request in memory, as routerload's fake
// backend does over HTTP: the model list (model m) for a path ending in
// /models, CannedReply for any other. It leaves a router's own work per
// call: pick, admission, encoding the request, reading the stream.
type CannedTransport struct{}

func (CannedTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body != nil {
		_, _ = io.Copy(io.Discard, r.Body)
		r.Body.Close()
	}
	body, ct := CannedReply, "text/event-stream"
	if strings.HasSuffix(r.URL.Path, "/models") {
		body, ct = `{"data":[{"id":"m"}]}`, "application/json"
	}
	e := &EndingReader{}
	e.Reset(body)
	return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {ct}}, Body: io.NopCloser(e), Request: r}, nil
}

// EndingReader reports its end with its last bytes, as net/http's body of
// a reply with a Content-Length does (routerload's fake backend's reply).
type EndingReader struct{ strings.Reader }

func (e *EndingReader) Read(p []byte) (int, error) {
	n, err := e.Reader.Read(p)
	if err == nil && e.Len() == 0 {
		err = io.EOF
	}
	return n, err
}
