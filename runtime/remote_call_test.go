package runtime

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/pitstop-llm/pitstop/models/chat"
	"github.com/pitstop-llm/pitstop/runtime/remote"
)

// gatedBackend is a backend in memory whose generations begin (a signal on
// begun) and then wait for gate, or for their request's end.
type gatedBackend struct {
	begun chan struct{}
	gate  chan struct{}
}

const gatedStream = `data: {"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":"ok "}}]}` + "\n\n" +
	`data: {"choices":[{"index":0,"delta":{"content":"done"},"finish_reason":"stop"}]}` + "\n\n" +
	`data: {"choices":[],"usage":{"prompt_tokens":8,"completion_tokens":2}}` + "\n\ndata: [DONE]\n\n"

func (g *gatedBackend) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body != nil {
		_, _ = io.Copy(io.Discard, r.Body)
		r.Body.Close()
	}
	answer := func(body, ct string) (*http.Response, error) {
		return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {ct}}, Body: io.NopCloser(strings.NewReader(body)), Request: r}, nil
	}
	if strings.HasSuffix(r.URL.Path, "/models") {
		return answer(`{"data":[{"id":"m"}]}`, "application/json")
	}
	g.begun <- struct{}{}
	select {
	case <-g.gate:
		return answer(gatedStream, "text/event-stream")
	case <-r.Context().Done():
		return nil, r.Context().Err()
	}
}

// newGatedRuntime is a runtime routing to one gated backend.
func newGatedRuntime(t *testing.T) (*Runtime, *gatedBackend) {
	t.Helper()
	g := &gatedBackend{begun: make(chan struct{}, 16), gate: make(chan struct{})}
	specs, err := remote.ParseSpecs([]string{"http://a:1"})
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.DiscardHandler)
	r, err := remote.New(remote.Config{Transport: g, HealthInterval: time.Hour, Logger: log}, specs)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Close)
	rt, err := New(Config{Remote: r, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close() })
	return rt, g
}

func gatedRequest(stream bool) ChatRequest {
	return ChatRequest{Messages: []chat.Message{{Role: chat.RoleUser, Content: "hi"}}, Stream: stream}
}

// noCalls checks that the runtime holds no call.
func noCalls(t *testing.T, rt *Runtime) {
	t.Helper()
	rt.mu.Lock()
	n := len(rt.calls)
	rt.mu.Unlock()
	if n != 0 {
		t.Errorf("%d calls still held after the end", n)
	}
}

// A remote non-stream call runs on its waiter's goroutine: nothing is sent
// to the backend before Wait, and Wait returns the backend's answer.
func TestRemoteCallRunsInWait(t *testing.T) {
	rt, g := newGatedRuntime(t)
	c, err := rt.Chat(context.Background(), gatedRequest(false))
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-g.begun:
		t.Fatal("the call began before anyone waited for it")
	case <-time.After(50 * time.Millisecond):
	}
	close(g.gate)
	res, err := c.Wait(context.Background())
	if err != nil || res.Err != nil {
		t.Fatalf("Wait: %v, %v", err, res.Err)
	}
	if res.Content != "ok done" || res.FinishReason != "stop" || res.Usage.CompletionTokens != 2 {
		t.Fatalf("result %q %q %+v, want \"ok done\" stop with 2 completion tokens", res.Content, res.FinishReason, res.Usage)
	}
	select {
	case <-c.Done():
	default:
		t.Fatal("Done not closed after Wait returned")
	}
	noCalls(t, rt)
}

// A caller that never Waits still sees the call run and end: Done starts
// it; a streamed call starts at once.
func TestRemoteCallStartsWithoutWait(t *testing.T) {
	rt, g := newGatedRuntime(t)
	close(g.gate)
	c, err := rt.Chat(context.Background(), gatedRequest(false))
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-c.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("a call read only through Done never ended")
	}
	s, err := rt.Chat(context.Background(), gatedRequest(true))
	if err != nil {
		t.Fatal(err)
	}
	var text string
	for {
		ds, err := s.Recv(context.Background())
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range ds {
			text += d.Text
		}
	}
	if text != "ok done" {
		t.Fatalf("streamed %q, want \"ok done\"", text)
	}
	noCalls(t, rt)
}

// Cancelling a call that was never waited for ends it, cancelled; the
// end of the waiter's context during Wait ends the call and Wait returns
// the context's error.
func TestRemoteCallCancelledAroundWait(t *testing.T) {
	rt, g := newGatedRuntime(t)
	c, err := rt.Chat(context.Background(), gatedRequest(false))
	if err != nil {
		t.Fatal(err)
	}
	c.Cancel()
	res, err := c.Wait(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if res.Err == nil || AsError(res.Err).Kind != ErrCancelled {
		t.Fatalf("a cancelled call ended with %v, want cancelled", res.Err)
	}

	// A fresh backend: the cancelled call's turns may still have reached
	// the first one's (a begun signal left behind), which would cancel
	// the next call's context before its Wait, when Wait may rightly
	// return the ended call instead of the context's error.
	rt, g = newGatedRuntime(t)
	ctx, cancel := context.WithCancel(context.Background())
	c, err = rt.Chat(ctx, gatedRequest(false))
	if err != nil {
		t.Fatal(err)
	}
	go func() { <-g.begun; cancel() }()
	if _, err := c.Wait(ctx); err != context.Canceled {
		t.Fatalf("Wait after the context's end: %v, want context.Canceled", err)
	}
	select {
	case <-c.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the call did not end with its context")
	}
	if r := c.res; r.Err == nil || AsError(r.Err).Kind != ErrCancelled {
		t.Fatalf("the call ended with %v, want cancelled", r.Err)
	}
	noCalls(t, rt)
}

// The router forgets the program of a call made without a program id when
// the call ends (no later call can have it), streamed or not, and keeps a
// named program's rank for its next call.
func TestRemoteCallForgetsAnonymousProgram(t *testing.T) {
	rt, g := newGatedRuntime(t)
	close(g.gate)
	for _, tc := range []struct {
		program string
		stream  bool
	}{{"", false}, {"", true}, {"p", false}, {"q", true}} {
		req := gatedRequest(tc.stream)
		req.Program = tc.program
		c, err := rt.Chat(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		<-c.Done()
		rank := rt.Remote().Rank(c.key)
		switch {
		case tc.program == "" && rank != 0:
			t.Errorf("stream %v: the router still ranks the anonymous program %q (%g)", tc.stream, c.key, rank)
		case tc.program != "" && rank == 0:
			t.Errorf("stream %v: the router forgot the rank of program %q", tc.stream, c.key)
		}
	}
	noCalls(t, rt)
}

// toolChoiceJSON sends each mode as OpenAI's tool_choice: what
// json.Marshal makes of it.
func TestToolChoiceJSON(t *testing.T) {
	offered := []chat.Tool{{Name: "lookup"}}
	for _, tc := range []struct {
		choice ToolChoice
		want   any
	}{
		{ToolChoice{Mode: ChoiceAuto}, "auto"},
		{ToolChoice{Mode: ChoiceNone}, "none"},
		{ToolChoice{Mode: ChoiceRequired}, "required"},
		{ToolChoice{Mode: ChoiceFunction, Name: "lookup"}, map[string]any{"type": "function", "function": map[string]string{"name": "lookup"}}},
	} {
		got, err := toolChoiceJSON(tc.choice, offered)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := json.Marshal(tc.want)
		if string(got) != string(want) {
			t.Errorf("%+v: %s, want %s", tc.choice, got, want)
		}
	}
	if got, err := toolChoiceJSON(ToolChoice{}, offered); got != nil || err != nil {
		t.Errorf("no tool_choice: %s, %v; want nothing sent", got, err)
	}
}

// The default tenant's counters (cached at its first call) count every
// call and its tokens, and show in /metrics only once a call has counted.
func TestDefaultTenantCounters(t *testing.T) {
	rt, g := newGatedRuntime(t)
	close(g.gate)
	families := func() map[string]*dto.MetricFamily {
		fs, err := rt.metrics.Registry.Gather()
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]*dto.MetricFamily{}
		for _, f := range fs {
			out[f.GetName()] = f
		}
		return out
	}
	if _, ok := families()["pitstop_tenant_calls_total"]; ok {
		t.Fatal("a tenant's call counter before any call")
	}
	for range 2 {
		c, err := rt.Chat(context.Background(), gatedRequest(false))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Wait(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	fs := families()
	want := map[string]float64{"pitstop_tenant_calls_total": 2, "pitstop_tenant_tokens_total/prompt": 16, "pitstop_tenant_tokens_total/completion": 4}
	got := map[string]float64{}
	for _, name := range []string{"pitstop_tenant_calls_total", "pitstop_tenant_tokens_total"} {
		f := fs[name]
		if f == nil {
			t.Fatalf("no %s after two calls", name)
		}
		for _, m := range f.GetMetric() {
			key := name
			for _, l := range m.GetLabel() {
				switch {
				case l.GetName() == "tenant" && l.GetValue() != DefaultTenant:
					t.Errorf("%s of tenant %q, want %q", name, l.GetValue(), DefaultTenant)
				case l.GetName() == "kind":
					key += "/" + l.GetValue()
				}
			}
			got[key] = m.GetCounter().GetValue()
		}
	}
	if !maps.Equal(got, want) {
		t.Errorf("tenant counters %v, want %v", got, want)
	}
}
