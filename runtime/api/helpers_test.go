package api

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/pitstop-llm/pitstop/runtime"
	"github.com/pitstop-llm/pitstop/runtime/remote"
	"github.com/pitstop-llm/pitstop/tools"
)

// testServer is a runtime behind the HTTP server on a loopback port.
type testServer struct {
	t    *testing.T
	rt   *runtime.Runtime
	srv  *Server
	http *httptest.Server
	mu   sync.Mutex
	done []CallStats
}

type serverOpts struct {
	rt    runtime.Config
	api   Config
	noChk bool
}

func newTestServer(t *testing.T, o serverOpts) *testServer {
	t.Helper()
	if o.rt.Logger == nil {
		o.rt.Logger = slog.New(slog.DiscardHandler)
	}
	rt, err := runtime.New(o.rt)
	if err != nil {
		t.Fatal(err)
	}
	ts := &testServer{t: t, rt: rt}
	o.api.Runtime = rt
	user := o.api.OnCallDone
	o.api.OnCallDone = func(s CallStats) {
		ts.mu.Lock()
		ts.done = append(ts.done, s)
		ts.mu.Unlock()
		if user != nil {
			user(s)
		}
	}
	srv, err := New(o.api)
	if err != nil {
		t.Fatal(err)
	}
	ts.srv = srv
	ts.http = httptest.NewServer(srv.Handler())
	t.Cleanup(func() {
		ts.http.Close()
		if !o.noChk {
			ts.checkDrained()
		}
		rt.Close()
	})
	return ts
}

// checkDrained waits for the engine to hold no call and checks the block
// invariants and leaks.
func (ts *testServer) checkDrained() {
	ts.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := ts.rt.ReleaseParked(ctx); err != nil {
		ts.t.Errorf("release parked calls: %v", err)
	}
	var st runtime.EngineState
	var err error
	for {
		st, err = ts.rt.Engine(ctx)
		if err != nil {
			ts.t.Errorf("engine state: %v", err)
			return
		}
		if st.Live == 0 && st.Calls == 0 {
			break
		}
		select {
		case <-ctx.Done():
			ts.t.Errorf("engine not drained: %+v", st)
			return
		case <-time.After(5 * time.Millisecond):
		}
	}
	if st.CheckErr != "" || st.Leaked != 0 || st.UsedBlocks != 0 {
		ts.t.Errorf("after drain: %+v", st)
	}
}

// client returns a go-openai client; headers are sent with every request.
func (ts *testServer) client(headers map[string]string) *openai.Client {
	return ts.clientWithKey("", headers)
}

func (ts *testServer) clientWithKey(key string, headers map[string]string) *openai.Client {
	cfg := openai.DefaultConfig(key)
	cfg.BaseURL = ts.http.URL + "/v1"
	cfg.HTTPClient = &http.Client{Transport: headerTransport{base: http.DefaultTransport, headers: headers}}
	return openai.NewClientWithConfig(cfg)
}

type headerTransport struct {
	base    http.RoundTripper
	headers map[string]string
}

func (h headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range h.headers {
		r.Header.Set(k, v)
	}
	return h.base.RoundTrip(r)
}

// do sends a raw request and decodes the JSON answer.
func (ts *testServer) do(method, path, body string, headers map[string]string) (int, map[string]any) {
	ts.t.Helper()
	req, err := http.NewRequest(method, ts.http.URL+path, strings.NewReader(body))
	if err != nil {
		ts.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		ts.t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	var out map[string]any
	if len(data) > 0 && data[0] == '{' {
		if err := json.Unmarshal(data, &out); err != nil {
			ts.t.Fatalf("%s %s: bad JSON %q: %v", method, path, data, err)
		}
	}
	return resp.StatusCode, out
}

// wantError checks an OpenAI error body.
func wantError(t *testing.T, status int, body map[string]any, wantStatus int, wantParam string) {
	t.Helper()
	if status != wantStatus {
		t.Errorf("status %d, want %d (body %v)", status, wantStatus, body)
	}
	e, ok := body["error"].(map[string]any)
	if !ok {
		t.Fatalf("no error object in %v", body)
	}
	for _, k := range []string{"message", "type", "param", "code"} {
		if _, ok := e[k]; !ok {
			t.Errorf("error object lacks %q: %v", k, e)
		}
	}
	if m, _ := e["message"].(string); m == "" {
		t.Errorf("empty error message: %v", e)
	}
	if wantParam != "" && e["param"] != wantParam {
		t.Errorf("param %v, want %q (%v)", e["param"], wantParam, e["message"])
	}
}

func calculatorDecl() openai.Tool {
	return openai.Tool{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{
		Name: "calculator", Description: "Evaluate an arithmetic expression",
		Parameters: json.RawMessage(`{"type":"object","properties":{"expression":{"type":"string"}},"required":["expression"]}`),
	}}
}

func weatherDecl() openai.Tool {
	return openai.Tool{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{
		Name: "get_weather", Description: "Current weather in a city",
		Parameters: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`),
	}}
}

func userMsg(s string) openai.ChatCompletionMessage {
	return openai.ChatCompletionMessage{Role: openai.ChatMessageRoleUser, Content: s}
}

// gatedTools is a registry with the built-in tools and "gate", a tool that
// returns "opened" when the test closes gate (an error when its call ends
// first).
func gatedTools(t *testing.T, gate <-chan struct{}) *tools.Registry {
	t.Helper()
	reg := tools.NewRegistry()
	if err := tools.RegisterBuiltins(reg, tools.BuiltinConfig{}); err != nil {
		t.Fatal(err)
	}
	tool, err := tools.New("gate", "returns when the test lets it", json.RawMessage(`{"type":"object","properties":{}}`),
		func(ctx context.Context, _ json.RawMessage) (string, error) {
			select {
			case <-gate:
				return "opened", nil
			case <-ctx.Done():
				return "", ctx.Err()
			}
		}, tools.WithTimeout(20*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	reg.MustRegister(tool)
	return reg
}

// newRemote is a router over the backends specs name (remote.ParseSpecs's
// syntax), quiet unless cfg sets a logger, closed with t.
func newRemote(t testing.TB, cfg remote.Config, specs ...string) *remote.Router {
	t.Helper()
	parsed, err := remote.ParseSpecs(specs)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	r, err := remote.New(cfg, parsed)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Close)
	return r
}
