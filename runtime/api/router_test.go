package api

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/pitstop-llm/pitstop/internal/testutil"
	"github.com/pitstop-llm/pitstop/predictor"
	"github.com/pitstop-llm/pitstop/runtime"
	"github.com/pitstop-llm/pitstop/runtime/remote"
	"github.com/pitstop-llm/pitstop/tools"
)

// lookupRuns counts the runs of the router's lookup tool in a test.
type routerFixture struct {
	backends []*testServer
	router   *testServer
	r        *remote.Router
	runs     atomic.Int64
}

// lookupDecl is a tool only the router has: the backends return its calls,
// the router runs them.
func lookupDecl() openai.Tool {
	return openai.Tool{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{
		Name: "lookup", Description: "Look a key up",
		Parameters: json.RawMessage(`{"type":"object","properties":{"key":{"type":"string"}},"required":["key"]}`),
	}}
}

// newRouterFixture starts n scripted pitstop backends and a router in
// front of them (balancer bal).
func newRouterFixture(t *testing.T, n int, bal string, specOpts string) *routerFixture {
	t.Helper()
	f := &routerFixture{}
	var specs []string
	for range n {
		b := newTestServer(t, serverOpts{})
		f.backends = append(f.backends, b)
		specs = append(specs, b.http.URL+",kind=pitstop"+specOpts)
	}
	reg := tools.NewRegistry()
	lookup, err := tools.New("lookup", "Look a key up", json.RawMessage(`{"type":"object","properties":{"key":{"type":"string"}},"required":["key"]}`),
		func(_ context.Context, args json.RawMessage) (string, error) {
			f.runs.Add(1)
			var a struct{ Key string }
			_ = json.Unmarshal(args, &a)
			return "value-of-" + a.Key, nil
		})
	if err != nil {
		t.Fatal(err)
	}
	reg.MustRegister(lookup)
	f.r = newRemote(t, remote.Config{Balancer: bal, HealthInterval: 100 * time.Millisecond}, specs...)
	f.router = newTestServer(t, serverOpts{rt: runtime.Config{Remote: f.r, Tools: reg}})
	return f
}

func TestRouterServerSideToolRound(t *testing.T) {
	f := newRouterFixture(t, 3, "", "")
	cl := f.router.client(map[string]string{HeaderProgram: "agent-1"})
	ctx := context.Background()
	req := openai.ChatCompletionRequest{Model: "pitstop-scripted-test", Tools: []openai.Tool{lookupDecl()},
		Messages: []openai.ChatCompletionMessage{userMsg(`/call lookup {"key": "k1"}`)}}
	resp, err := cl.CreateChatCompletion(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if got := resp.Choices[0].Message.Content; !strings.Contains(got, "value-of-k1") {
		t.Errorf("answer %q does not quote the router's tool result", got)
	}
	if resp.Choices[0].FinishReason != openai.FinishReasonStop {
		t.Errorf("finish %q", resp.Choices[0].FinishReason)
	}
	if f.runs.Load() != 1 {
		t.Errorf("lookup ran %d times, want 1", f.runs.Load())
	}
	// The same call, streamed: the tool round is a pitstop chunk.
	req.Stream = true
	st, err := cl.CreateChatCompletionStream(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	var text strings.Builder
	for {
		ch, err := st.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if len(ch.Choices) > 0 {
			text.WriteString(ch.Choices[0].Delta.Content)
		}
	}
	st.Close()
	if !strings.Contains(text.String(), "value-of-k1") {
		t.Errorf("streamed answer %q", text.String())
	}
	// The round is reported with its handling.
	code, body := f.router.do("POST", "/v1/chat/completions",
		`{"model":"pitstop-scripted-test","messages":[{"role":"user","content":"/call lookup {\"key\": \"k2\"}"}],"tools":[{"type":"function","function":{"name":"lookup"}}]}`, nil)
	if code != 200 {
		t.Fatalf("status %d: %v", code, body)
	}
	ps := body["pitstop"].(map[string]any)
	rounds := ps["tool_rounds"].([]any)
	if len(rounds) != 1 || rounds[0].(map[string]any)["handling"] != "preserve" ||
		!strings.Contains(rounds[0].(map[string]any)["handling_reason"].(string), "affinity") {
		t.Errorf("tool rounds %v", rounds)
	}
}

func TestRouterClientToolsAndAffinity(t *testing.T) {
	f := newRouterFixture(t, 3, "", "")
	ctx := context.Background()
	for p := range 6 {
		prog := "prog-" + string(rune('a'+p))
		cl := f.router.client(map[string]string{HeaderProgram: prog})
		msgs := []openai.ChatCompletionMessage{userMsg(`/call get_weather {"city": "Paris"}`)}
		resp, err := cl.CreateChatCompletion(ctx, openai.ChatCompletionRequest{Model: "pitstop-scripted-test", Tools: []openai.Tool{weatherDecl()}, Messages: msgs})
		if err != nil {
			t.Fatal(err)
		}
		if resp.Choices[0].FinishReason != openai.FinishReasonToolCalls || len(resp.Choices[0].Message.ToolCalls) != 1 {
			t.Fatalf("want a client tool call, got %+v", resp.Choices[0])
		}
		msgs = append(msgs, resp.Choices[0].Message, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleTool,
			ToolCallID: resp.Choices[0].Message.ToolCalls[0].ID, Content: "sunny"})
		resp2, err := cl.CreateChatCompletion(ctx, openai.ChatCompletionRequest{Model: "pitstop-scripted-test", Tools: []openai.Tool{weatherDecl()}, Messages: msgs})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(resp2.Choices[0].Message.Content, "sunny") {
			t.Errorf("follow-up answer %q", resp2.Choices[0].Message.Content)
		}
		if resp2.Usage.PromptTokensDetails == nil || resp2.Usage.PromptTokensDetails.CachedTokens == 0 {
			t.Errorf("%s: the follow-up found no cached prefix: it did not land on the backend holding it (usage %+v)", prog, resp2.Usage)
		}
	}
}

func TestRouterModelsAndBackends(t *testing.T) {
	f := newRouterFixture(t, 2, "round-robin", ",max-inflight=4")
	code, body := f.router.do("GET", "/v1/models", "", nil)
	if code != 200 {
		t.Fatalf("models: %d %v", code, body)
	}
	data := body["data"].([]any)
	if len(data) != 1 || data[0].(map[string]any)["id"] != "pitstop-scripted-test" {
		t.Errorf("models %v", data)
	}
	code, body = f.router.do("GET", "/healthz", "", nil)
	if code != 200 || body["status"] != "ok" || body["backends_up"] != float64(2) {
		t.Errorf("healthz: %d %v", code, body)
	}
	code, body = f.router.do("GET", "/v1/backends", "", nil)
	if code != 200 || len(body["data"].([]any)) != 2 || body["balancer"] != "round-robin" {
		t.Fatalf("backends: %d %v", code, body)
	}
	name := body["data"].([]any)[0].(map[string]any)["name"].(string)
	if code, body = f.router.do("POST", "/v1/backends/"+name+"/drain", "", nil); code != 200 {
		t.Errorf("drain: %d %v", code, body)
	}
	if code, body = f.router.do("DELETE", "/v1/backends/nope:1", "", nil); code != 404 {
		t.Errorf("delete unknown: %d %v", code, body)
	}
	code, body = f.router.do("POST", "/v1/backends", `{"url":"ftp://x"}`, nil)
	wantError(t, code, body, 400, "url")
	if code, body = f.router.do("DELETE", "/v1/backends/"+name, "", nil); code != 200 {
		t.Errorf("delete: %d %v", code, body)
	}
	// Every call now goes to the remaining backend.
	cl := f.router.client(nil)
	for range 3 {
		if _, err := cl.CreateChatCompletion(context.Background(), openai.ChatCompletionRequest{Model: "pitstop-scripted-test", Messages: []openai.ChatCompletionMessage{userMsg("hello")}}); err != nil {
			t.Fatal(err)
		}
	}
	bs := f.r.Backends()
	if len(bs) != 1 || bs[0].Calls != 3 {
		t.Errorf("backends after delete: %+v", bs)
	}
	code, body = f.router.do("POST", "/v1/chat/completions", `{"model":"gpt-9","messages":[{"role":"user","content":"hi"}]}`, nil)
	wantError(t, code, body, 404, "model")
}

func TestRouterFailover(t *testing.T) {
	f := newRouterFixture(t, 2, "round-robin", "")
	// One backend goes away: every call still succeeds, on the other.
	f.backends[0].http.CloseClientConnections()
	f.backends[0].http.Close()
	cl := f.router.client(nil)
	for i := range 4 {
		if _, err := cl.CreateChatCompletion(context.Background(), openai.ChatCompletionRequest{Model: "pitstop-scripted-test", Messages: []openai.ChatCompletionMessage{userMsg("hello")}}); err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
	}
	// All down: 503 with Retry-After and an OpenAI body.
	f.backends[1].http.Close()
	req, _ := http.NewRequest("POST", f.router.http.URL+"/v1/chat/completions", strings.NewReader(`{"model":"pitstop-scripted-test","messages":[{"role":"user","content":"hi"}]}`))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&body)
	wantError(t, resp.StatusCode, body, 503, "")
	if resp.Header.Get("Retry-After") == "" {
		t.Error("503 without Retry-After")
	}
}

func TestRouterMalformedReply(t *testing.T) {
	bad, _ := testutil.CountingSSEBackend(t, "m", 0, nil, "{not json")
	r := newRemote(t, remote.Config{}, bad.URL)
	ts := newTestServer(t, serverOpts{rt: runtime.Config{Remote: r}})
	for range 2 { // the server keeps serving
		code, body := ts.do("POST", "/v1/chat/completions", `{"model":"m","messages":[{"role":"user","content":"hi"}]}`, nil)
		wantError(t, code, body, 502, "")
	}
	if code, _ := ts.do("GET", "/v1/models", "", nil); code != 200 {
		t.Errorf("models after a bad reply: %d", code)
	}
}

// TestRouterLoad runs many programs of server-side tool calls through the
// router at once: no call fails, every tool runs exactly once per call,
// every follow-up of a program finds its prefix cached on the backend that
// ran the program before, and the backends leak nothing (their cleanup
// checks it).
func TestRouterLoad(t *testing.T) {
	f := newRouterFixture(t, 3, "", "")
	const clients, programs, calls = 16, 3, 3
	var failed atomic.Int64
	var mu sync.Mutex
	var firstCached, followCached []int
	done := make(chan struct{})
	for ci := range clients {
		go func() {
			defer func() { done <- struct{}{} }()
			for p := range programs {
				prog := "load-" + string(rune('a'+ci)) + string(rune('a'+p))
				cl := f.router.client(map[string]string{HeaderProgram: prog})
				// A system message of the program's own: only the backend
				// that ran the program has it cached.
				msgs := []openai.ChatCompletionMessage{{Role: openai.ChatMessageRoleSystem, Content: "You are agent " + prog + strings.Repeat(" "+prog, 40)}}
				for k := range calls {
					msgs = append(msgs, userMsg(`/call lookup {"key": "`+prog+string(rune('0'+k))+`"}`))
					resp, err := cl.CreateChatCompletion(context.Background(), openai.ChatCompletionRequest{Model: "pitstop-scripted-test", Tools: []openai.Tool{lookupDecl()}, Messages: msgs})
					if err != nil || !strings.Contains(resp.Choices[0].Message.Content, "value-of-"+prog) {
						failed.Add(1)
						t.Errorf("%s call %d: %v", prog, k, err)
						return
					}
					cached := 0
					if d := resp.Usage.PromptTokensDetails; d != nil {
						cached = d.CachedTokens
					}
					mu.Lock()
					if k == 0 {
						firstCached = append(firstCached, cached)
					} else {
						followCached = append(followCached, cached)
					}
					mu.Unlock()
					msgs = append(msgs, resp.Choices[0].Message)
				}
			}
		}()
	}
	for range clients {
		<-done
	}
	if failed.Load() != 0 {
		t.Fatalf("%d calls failed", failed.Load())
	}
	if got, want := f.runs.Load(), int64(clients*programs*calls); got != want {
		t.Errorf("the router's tool ran %d times, want %d (once per call)", got, want)
	}
	// The prefix all programs share is at most what a first call found
	// cached; on its program's backend a follow-up finds more: the
	// program's system message and its earlier turns.
	shared := slices.Max(firstCached)
	home := 0
	for _, n := range followCached {
		if n >= shared+32 {
			home++
		}
	}
	if float64(home) < 0.95*float64(len(followCached)) {
		t.Errorf("%d of %d follow-ups found their program's prefix cached (beyond the %d shared tokens), want at least 95%%", home, len(followCached), shared)
	}
	used := 0
	for _, b := range f.r.Backends() {
		if b.Calls > 0 {
			used++
		}
	}
	if used < 2 {
		t.Errorf("%d concurrent programs went to %d backend(s)", clients*programs, used)
	}
}

// TestRouterMidStreamFailure: a backend that dies after part of a streamed
// reply went to the client ends the stream with an OpenAI error event and
// [DONE]; the same failure for a client that does not stream moves the
// call to another backend, and the client sees no error.
func TestRouterMidStreamFailure(t *testing.T) {
	flaky := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/models" {
			_, _ = io.WriteString(w, `{"data":[{"id":"m"}]}`)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"partial \"}}]}\n\n")
		w.(http.Flusher).Flush()
		panic(http.ErrAbortHandler)
	}))
	defer flaky.Close()
	good, _ := testutil.CountingSSEBackend(t, "m", 0, nil, `{"choices":[{"index":0,"delta":{"content":"whole answer"},"finish_reason":"stop"}]}`, "[DONE]")
	specs, _ := remote.ParseSpecs([]string{flaky.URL, good.URL})
	r, err := remote.New(remote.Config{Balancer: "round-robin", HealthInterval: time.Hour, Logger: slog.New(slog.DiscardHandler)}, specs)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	ts := newTestServer(t, serverOpts{rt: runtime.Config{Remote: r}})
	resp, err := http.Post(ts.http.URL+"/v1/chat/completions", "application/json",
		strings.NewReader(`{"model":"m","stream":true,"messages":[{"role":"user","content":"hi"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(body), "partial") || !strings.Contains(string(body), `"code":"backend_failed"`) ||
		!strings.HasSuffix(strings.TrimSpace(string(body)), "data: [DONE]") {
		t.Errorf("streamed call: status %d, body %s", resp.StatusCode, body)
	}
	// The flaky backend is down now; add both again (the flaky one first):
	// a non-stream call whose backend fails midway moves, its partial
	// reply discarded.
	for _, b := range r.Backends() {
		r.Remove(b.Name)
	}
	_ = r.Add(specs[0])
	_ = r.Add(specs[1])
	code, out := ts.do("POST", "/v1/chat/completions", `{"model":"m","messages":[{"role":"user","content":"hi"}]}`, nil)
	if code != 200 {
		t.Fatalf("non-stream call: %d %v", code, out)
	}
	if msg := out["choices"].([]any)[0].(map[string]any)["message"].(map[string]any)["content"]; msg != "whole answer" {
		t.Errorf("non-stream answer %v: the partial reply leaked", msg)
	}
}

// TestRouterBackendToolRound: a tool registered on a pitstop backend runs
// there; its round, with the backend's KV handling, reaches the client
// through the router.
func TestRouterBackendToolRound(t *testing.T) {
	f := newRouterFixture(t, 1, "", "")
	code, body := f.router.do("POST", "/v1/chat/completions",
		`{"model":"pitstop-scripted-test","messages":[{"role":"user","content":"What is (17+25)*3?"}],"tools":[{"type":"function","function":{"name":"calculator"}}]}`, nil)
	if code != 200 {
		t.Fatalf("status %d: %v", code, body)
	}
	rounds, _ := body["pitstop"].(map[string]any)["tool_rounds"].([]any)
	if len(rounds) != 1 {
		t.Fatalf("tool rounds %v", body["pitstop"])
	}
	r := rounds[0].(map[string]any)
	if !strings.HasPrefix(r["handling_reason"].(string), "on backend 127.0.0.1:") || r["calls"].([]any)[0].(map[string]any)["content"] != "126" {
		t.Errorf("round %v", r)
	}
	if f.runs.Load() != 0 {
		t.Error("the router ran a tool the backend runs")
	}
	if u := body["usage"].(map[string]any); u["prompt_tokens"].(float64) == 0 {
		t.Errorf("usage %v", u)
	}
}

// TestRouterLlamaSlotSwap: a router tool predicted to take long, on a
// llama.cpp backend with slots and --slot-save-path: the program's slot is
// saved while the tool runs and restored for the next turn; the round says
// swap and why.
func TestRouterLlamaSlotSwap(t *testing.T) {
	var mu sync.Mutex
	var log []string
	llama := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		switch {
		case r.URL.Path == "/v1/models":
			_, _ = io.WriteString(w, `{"data":[{"id":"llama"}]}`)
		case strings.HasPrefix(r.URL.Path, "/slots/"):
			log = append(log, r.URL.Query().Get("action"))
			_, _ = io.WriteString(w, `{}`)
		default:
			var body struct {
				Messages []struct{ Role string } `json:"messages"`
				Slot     *int                    `json:"id_slot"`
			}
			_ = json.NewDecoder(r.Body).Decode(&body)
			if body.Slot == nil {
				t.Error("a llama.cpp request without id_slot")
			}
			log = append(log, "chat")
			w.Header().Set("Content-Type", "text/event-stream")
			if body.Messages[len(body.Messages)-1].Role == "tool" {
				_, _ = io.WriteString(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"found it\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n")
				return
			}
			_, _ = io.WriteString(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"c1\",\"function\":{\"name\":\"lookup\",\"arguments\":\"{\\\"key\\\":\\\"a\\\"}\"}}]},\"finish_reason\":\"tool_calls\"}]}\n\ndata: [DONE]\n\n")
		}
	}))
	defer llama.Close()
	r := newRemote(t, remote.Config{}, llama.URL+",kind=llamacpp,slots=2,slot-save=true")
	reg := tools.NewRegistry()
	lookup, _ := tools.New("lookup", "Look a key up", json.RawMessage(`{"type":"object","properties":{"key":{"type":"string"}}}`),
		func(context.Context, json.RawMessage) (string, error) { return "value", nil })
	reg.MustRegister(lookup)
	durations := predictor.NewDurationEstimator(predictor.DurationOptions{})
	durations.SetPrior("lookup", 5) // a slow tool, as its statistics say
	ts := newTestServer(t, serverOpts{rt: runtime.Config{Remote: r, Tools: reg, Durations: durations}})
	code, body := ts.do("POST", "/v1/chat/completions", `{"model":"llama","messages":[{"role":"user","content":"find a"}],"tools":[{"type":"function","function":{"name":"lookup"}}]}`, map[string]string{HeaderProgram: "agent"})
	if code != 200 {
		t.Fatalf("status %d: %v", code, body)
	}
	round := body["pitstop"].(map[string]any)["tool_rounds"].([]any)[0].(map[string]any)
	if round["handling"] != "swap" || !strings.Contains(round["handling_reason"].(string), "saved to pitstop-") {
		t.Errorf("round %v", round)
	}
	mu.Lock()
	defer mu.Unlock()
	if got := strings.Join(log, ","); got != "chat,save,restore,chat" {
		t.Errorf("the backend saw %s, want chat,save,restore,chat", got)
	}
}

// TestRouterAdminAndMetrics: with keys configured only an admin key changes
// the backends; /metrics has the per-backend series.
func TestRouterAdminAndMetrics(t *testing.T) {
	b := newTestServer(t, serverOpts{})
	specs, _ := remote.ParseSpecs([]string{b.http.URL + ",kind=pitstop"})
	r, err := remote.New(remote.Config{Logger: slog.New(slog.DiscardHandler)}, specs)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	ring, err := NewKeyring([]Key{{Secret: "user-key", Tenant: "u"}, {Secret: "admin-key", Tenant: "ops", Admin: true}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ts := newTestServer(t, serverOpts{rt: runtime.Config{Remote: r}, api: Config{Keys: ring}})
	user := map[string]string{"Authorization": "Bearer user-key"}
	admin := map[string]string{"Authorization": "Bearer admin-key"}
	name := specs[0].Name()
	if code, body := ts.do("POST", "/v1/backends/"+name+"/drain", "", user); code != 403 {
		t.Errorf("a user key drained a backend: %d %v", code, body)
	}
	if code, body := ts.do("GET", "/v1/backends", "", user); code != 200 {
		t.Errorf("a user key cannot list the backends: %d %v", code, body)
	}
	if code, _ := ts.do("POST", "/v1/chat/completions", `{"model":"pitstop-scripted-test","messages":[{"role":"user","content":"hi"}]}`, user); code != 200 {
		t.Errorf("chat: %d", code)
	}
	req, _ := http.NewRequest("GET", ts.http.URL+"/metrics", nil)
	req.Header.Set("Authorization", "Bearer admin-key")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	metrics, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{`pitstop_backend_calls_total{backend="` + name + `",outcome="ok"} 1`, `pitstop_backend_up{backend="` + name + `"} 1`,
		"pitstop_backend_inflight_limit", "pitstop_backend_cached_tokens_total", "pitstop_backend_latency_seconds_count"} {
		if !strings.Contains(string(metrics), want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	if code, body := ts.do("DELETE", "/v1/backends/"+name, "", admin); code != 200 {
		t.Errorf("an admin key cannot remove a backend: %d %v", code, body)
	}
}
