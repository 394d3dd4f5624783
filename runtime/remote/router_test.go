package remote

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

	"github.com/pitstop-llm/pitstop/internal/testutil"
	"github.com/pitstop-llm/pitstop/models/chat"
)

// fakeServer is a small OpenAI-compatible server: reply writes the body of
// each chat completion; bodies records what the router sent.
type fakeServer struct {
	*httptest.Server
	mu     sync.Mutex
	bodies []map[string]any
	calls  atomic.Int64
}

func newFake(t *testing.T, reply func(w http.ResponseWriter, n int64)) *fakeServer {
	t.Helper()
	f := &fakeServer{}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/models" {
			_, _ = io.WriteString(w, `{"object":"list","data":[{"id":"m1"}]}`)
			return
		}
		var body map[string]any
		_ = json.NewDecoder(r.Body).Decode(&body)
		f.mu.Lock()
		f.bodies = append(f.bodies, body)
		f.mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		reply(w, f.calls.Add(1))
	}))
	t.Cleanup(f.Close)
	return f
}

// fragmentedToolCalls streams two parallel tool calls in fragments.
func fragmentedToolCalls(w http.ResponseWriter, _ int64) {
	testutil.SSE(w,
		`{"model":"m1","choices":[{"index":0,"delta":{"role":"assistant","content":"Let me "}}]}`,
		`{"choices":[{"index":0,"delta":{"content":"look."}}]}`,
		`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"a","type":"function","function":{"name":"lookup","arguments":""}}]}}]}`,
		`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"b","type":"function","function":{"name":"lookup","arguments":"{\"key\""}}]}}]}`,
		`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"key\": \"x\"}"}}]}}]}`,
		`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"function":{"arguments":": \"y\"}"}}]}}]}`,
		`{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`,
		`{"choices":[],"usage":{"prompt_tokens":40,"completion_tokens":12,"prompt_tokens_details":{"cached_tokens":32}}}`,
		`[DONE]`)
}

func newTestRouter(t *testing.T, bal string, urls ...string) *Router {
	t.Helper()
	specs, err := ParseSpecs(urls)
	if err != nil {
		t.Fatal(err)
	}
	r, err := New(Config{Balancer: bal, HealthInterval: 50 * time.Millisecond, Logger: slog.New(slog.DiscardHandler)}, specs)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Close)
	return r
}

func userReq(program string) *Request {
	return &Request{Program: program, Messages: []chat.Message{{Role: chat.RoleUser, Content: "hi"}}, PromptTokens: 10}
}

func TestGenerateParsesStreamedToolCalls(t *testing.T) {
	f := newFake(t, fragmentedToolCalls)
	r := newTestRouter(t, "", f.URL+",kind=vllm")
	var evs []Event
	rep, err := r.Generate(context.Background(), userReq("p"), "", func(e Event) bool { evs = append(evs, e); return true })
	if err != nil {
		t.Fatal(err)
	}
	want := []chat.ToolCall{{ID: "a", Name: "lookup", Arguments: `{"key": "x"}`}, {ID: "b", Name: "lookup", Arguments: `{"key": "y"}`}}
	if len(rep.ToolCalls) != 2 || rep.ToolCalls[0] != want[0] || rep.ToolCalls[1] != want[1] {
		t.Errorf("tool calls %+v", rep.ToolCalls)
	}
	if rep.Content != "Let me look." || rep.FinishReason != "tool_calls" || rep.Usage.CachedTokens != 32 || rep.Usage.PromptTokens != 40 || rep.Model != "m1" {
		t.Errorf("reply %+v", rep)
	}
	if evs[0].Kind != EventContent || evs[len(evs)-1].Kind != EventToolCallArgs {
		t.Errorf("events %+v", evs)
	}
	// vLLM gets the queue key as its priority (a new program: the aging
	// credit of the router's first second, at most), and the backend's model.
	if b := f.bodies[0]; b["priority"] == nil || b["priority"].(float64) < 0 || b["priority"].(float64) > DefaultAging || b["model"] != "m1" || b["stream"] != true {
		t.Errorf("body sent %v", b)
	}
	// The program's service so far is its rank now.
	if got := r.Rank("p"); got != 40-32+12 {
		t.Errorf("rank %v, want %d", got, 40-32+12)
	}
}

func TestQueueKey(t *testing.T) {
	r := newTestRouter(t, "")
	r.attained["busy"] = 5000
	if k := r.key("new"); k < 0 || k > r.key("busy") {
		t.Errorf("a new program's key %v is not below a busy one's %v", k, r.key("busy"))
	}
	// Waiting earns credit: a busy program that arrived 6 s ago goes before
	// a new program arriving now (6 s × 1000 tokens/s > 5000 tokens).
	r.start = r.start.Add(-6 * time.Second)
	busyThen := r.Rank("busy") + 0
	newNow := r.key("new")
	if busyThen >= newNow {
		t.Errorf("busy program's key at its arrival %v, a new program's now %v: no aging", busyThen, newNow)
	}
	r.cfg.Order = OrderFCFS
	if a, b := r.key("busy"), r.key("new"); a > b {
		t.Errorf("fcfs keys %v > %v out of arrival order", a, b)
	}
}

func TestGenerateKindFields(t *testing.T) {
	f := newFake(t, fragmentedToolCalls)
	r := newTestRouter(t, "", f.URL+",kind=llamacpp")
	if _, err := r.Generate(context.Background(), userReq("p"), "", func(Event) bool { return false }); err != nil {
		t.Fatal(err)
	}
	if b := f.bodies[0]; b["cache_prompt"] != true || b["priority"] != nil || b["cache_salt"] != nil {
		t.Errorf("llama.cpp body %v", b)
	}
}

// A request's CacheSalt goes as cache_salt to the kinds that take it (vLLM,
// pitstop) and to no other; none is sent when it is empty.
func TestGenerateSendsCacheSalt(t *testing.T) {
	for _, tc := range []struct {
		kind Kind
		send bool
	}{{KindVLLM, true}, {KindPitstop, true}, {KindSGLang, false}, {KindLlamaCpp, false}, {KindOpenAI, false}} {
		f := newFake(t, fragmentedToolCalls)
		r := newTestRouter(t, "", f.URL+",kind="+string(tc.kind))
		for _, salt := range []string{"pitstop-0123", ""} {
			req := userReq("p")
			req.CacheSalt = salt
			if _, err := r.Generate(context.Background(), req, "", func(Event) bool { return false }); err != nil {
				t.Fatal(err)
			}
		}
		if len(f.bodies) != 2 {
			t.Fatalf("%s: %d bodies", tc.kind, len(f.bodies))
		}
		got, sent := f.bodies[0]["cache_salt"]
		if sent != tc.send || (sent && got != "pitstop-0123") {
			t.Errorf("%s: cache_salt %v (sent %v), want sent %v", tc.kind, got, sent, tc.send)
		}
		if _, sent := f.bodies[1]["cache_salt"]; sent {
			t.Errorf("%s: cache_salt sent for a request without one", tc.kind)
		}
	}
}

func TestGenerateMovesBeforeOutput(t *testing.T) {
	failing := newFake(t, func(w http.ResponseWriter, _ int64) { w.WriteHeader(http.StatusInternalServerError) })
	good := newFake(t, fragmentedToolCalls)
	r := newTestRouter(t, "round-robin", failing.URL, good.URL)
	for i := range 3 {
		rep, err := r.Generate(context.Background(), userReq("p"), "", func(Event) bool { return false })
		if err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
		if rep.Backend != good.Listener.Addr().String() {
			t.Errorf("call %d went to %s", i, rep.Backend)
		}
	}
	if n := failing.calls.Load(); n < 1 || n > 3 {
		t.Errorf("the failing backend got %d calls, want 1 to 3 (each moved at once)", n)
	}
}

func TestGenerateFailsMidStream(t *testing.T) {
	cut := newFake(t, func(w http.ResponseWriter, _ int64) {
		testutil.SSE(w, `{"choices":[{"index":0,"delta":{"content":"partial"}}]}`)
		panic(http.ErrAbortHandler) // the connection drops mid-reply
	})
	good := newFake(t, fragmentedToolCalls)
	r := newTestRouter(t, "round-robin", cut.URL, good.URL)
	var got strings.Builder
	_, err := r.Generate(context.Background(), userReq("p"), "", func(e Event) bool { got.WriteString(e.Text); return true })
	var re *Error
	if !errors.As(err, &re) || re.Kind != ErrBackendFailed {
		t.Fatalf("streamed call: err %v, want ErrBackendFailed", err)
	}
	// The same failure for a client that does not stream: the call moves.
	req := userReq("q")
	req.Buffered = true
	rep, err := r.Generate(context.Background(), req, cut.Listener.Addr().String(), func(Event) bool { return false })
	if err != nil || len(rep.ToolCalls) != 2 {
		t.Fatalf("buffered call: %v %+v", err, rep)
	}
}

func TestGenerateNoBackend(t *testing.T) {
	f := newFake(t, fragmentedToolCalls)
	addr := f.URL
	f.Close()
	r := newTestRouter(t, "", addr)
	_, err := r.Generate(context.Background(), userReq("p"), "", func(Event) bool { return false })
	var re *Error
	if !errors.As(err, &re) || re.Kind != ErrNoBackend || re.RetryAfter <= 0 {
		t.Fatalf("err %v, want ErrNoBackend with RetryAfter", err)
	}
}

func TestGenerateMalformed(t *testing.T) {
	for name, reply := range map[string]func(http.ResponseWriter, int64){
		"not json":  func(w http.ResponseWriter, _ int64) { testutil.SSE(w, "{oops") },
		"no events": func(w http.ResponseWriter, _ int64) { _, _ = io.WriteString(w, "hello\n") },
		"nameless call": func(w http.ResponseWriter, _ int64) {
			testutil.SSE(w, `{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{}"}}]},"finish_reason":"tool_calls"}]}`, "[DONE]")
		},
	} {
		f := newFake(t, reply)
		r := newTestRouter(t, "", f.URL)
		_, err := r.Generate(context.Background(), userReq("p"), "", func(Event) bool { return false })
		var re *Error
		if !errors.As(err, &re) || re.Kind != ErrBadReply {
			t.Errorf("%s: err %v, want ErrBadReply", name, err)
		}
	}
}

func TestAffinityPin(t *testing.T) {
	a := newFake(t, fragmentedToolCalls)
	b := newFake(t, fragmentedToolCalls)
	r := newTestRouter(t, "round-robin", a.URL, b.URL)
	pin := b.Listener.Addr().String()
	for range 4 {
		rep, err := r.Generate(context.Background(), userReq("p"), pin, func(Event) bool { return false })
		if err != nil || rep.Backend != pin {
			t.Fatalf("pinned call went to %s (%v)", rep.Backend, err)
		}
	}
}

func FuzzReadStream(f *testing.F) {
	f.Add([]byte("data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"x\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n"))
	f.Add([]byte("data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":3,\"function\":{\"name\":\"f\"}}]}}]}\n\n"))
	f.Add([]byte(": comment\nevent: x\ndata: {\"error\":{\"message\":\"boom\"}}\n\n"))
	b := &Backend{}
	f.Fuzz(func(t *testing.T, data []byte) {
		rep, err := b.readStream(strings.NewReader(string(data)), func(Event) {})
		if err == nil {
			for _, c := range rep.ToolCalls {
				if c.Name == "" {
					t.Fatalf("a tool call without a name: %+v", rep)
				}
			}
			if rep.FinishReason == "" {
				t.Fatal("a reply without a finish reason")
			}
		}
	})
}

func TestWatchDNS(t *testing.T) {
	a := newFake(t, fragmentedToolCalls)
	_, portA, _ := strings.Cut(a.Listener.Addr().String(), ":")
	// Each address the name resolves to is a backend on the spec's port;
	// two loopback addresses stand for two pods.
	var mu sync.Mutex
	addrs := []string{"127.0.0.1"}
	lookup := func(context.Context, string) ([]string, error) {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(addrs), nil
	}
	r := newTestRouter(t, "")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	spec := Spec{URL: "http://vllm-headless.default.svc:" + portA, Kind: KindVLLM, Weight: 1}
	go r.WatchDNS(ctx, spec, 20*time.Millisecond, lookup)
	waitFor(t, func() bool { return len(r.Backends()) == 1 })
	if bs := r.Backends(); bs[0].Name != "127.0.0.1:"+portA || bs[0].Kind != KindVLLM || !bs[0].Up {
		t.Fatalf("backends %+v", bs)
	}
	mu.Lock()
	addrs = []string{"127.0.0.1", "127.0.0.2"}
	mu.Unlock()
	waitFor(t, func() bool { return len(r.Backends()) == 2 })
	mu.Lock()
	addrs = []string{"127.0.0.2"}
	mu.Unlock()
	waitFor(t, func() bool { bs := r.Backends(); return len(bs) == 1 && bs[0].Name == "127.0.0.2:"+portA })
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not reached in 5 s")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestProgramsExpire(t *testing.T) {
	f := newFake(t, fragmentedToolCalls)
	r := newTestRouter(t, "", f.URL)
	if _, err := r.Generate(context.Background(), userReq("p"), "", func(Event) bool { return false }); err != nil {
		t.Fatal(err)
	}
	if r.Rank("p") == 0 {
		t.Fatal("no rank recorded")
	}
	r.expirePrograms(time.Now())
	if r.Rank("p") == 0 {
		t.Fatal("a program in use was forgotten")
	}
	r.expirePrograms(time.Now().Add(DefaultProgramTTL + time.Second))
	if r.Rank("p") != 0 || len(r.used) != 0 || r.due.Len() != 0 {
		t.Error("an idle program was not forgotten")
	}
	for _, h := range r.holds {
		if _, ok := h.Holds("p"); ok {
			t.Error("a backend still holds an expired program")
		}
	}
}

func TestGenerateMovesAfterHeldEvents(t *testing.T) {
	// The backend dies after streaming part of a tool call the runtime
	// holds (nothing reached the client): the call moves, and the events
	// seen are voided by EventRestart first.
	cut := newFake(t, func(w http.ResponseWriter, _ int64) {
		testutil.SSE(w, `{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"x","function":{"name":"lookup","arguments":"{\"ke"}}]}}]}`)
		panic(http.ErrAbortHandler)
	})
	good := newFake(t, fragmentedToolCalls)
	r := newTestRouter(t, "round-robin", cut.URL, good.URL)
	var kinds []EventKind
	rep, err := r.Generate(context.Background(), userReq("p"), cut.Listener.Addr().String(), func(e Event) bool {
		kinds = append(kinds, e.Kind)
		return e.Kind == EventContent // content reaches the client; tool calls are held
	})
	if err != nil {
		t.Fatalf("the call did not move: %v", err)
	}
	if rep.Backend != good.Listener.Addr().String() || len(rep.ToolCalls) != 2 {
		t.Errorf("reply %+v", rep)
	}
	restart := slices.Index(kinds, EventRestart)
	if restart < 1 || kinds[0] != EventToolCallStart {
		t.Errorf("events %v: want the failed attempt's, then EventRestart, then the new backend's", kinds)
	}
}

// TestRequestBody: the request a backend gets carries the conversation,
// the sampling fields given, streaming with usage, and its kind's own
// fields only.
func TestRequestBody(t *testing.T) {
	f := newFake(t, func(w http.ResponseWriter, _ int64) {
		testutil.SSE(w, `{"choices":[{"index":0,"delta":{"content":"x"},"finish_reason":"stop"}]}`, `[DONE]`)
	})
	r := newTestRouter(t, "", f.URL)
	temp := 0.5
	req := userReq("p")
	req.Messages = append(req.Messages, chat.Message{Role: chat.RoleAssistant, ToolCalls: []chat.ToolCall{{ID: "c1", Name: "f", Arguments: "{}"}}},
		chat.Message{Role: chat.RoleTool, Content: "out", ToolCallID: "c1", Name: "f"})
	req.Temperature, req.MaxTokens, req.Stop = &temp, 7, []string{"END"}
	if _, err := r.Generate(context.Background(), req, "", func(Event) bool { return true }); err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(f.bodies[0])
	want := `{"max_tokens":7,"messages":[{"content":"hi","role":"user"},{"content":null,"role":"assistant","tool_calls":[{"function":{"arguments":"{}","name":"f"},"id":"c1","type":"function"}]},` +
		`{"content":"out","name":"f","role":"tool","tool_call_id":"c1"}],"model":"m1","stop":["END"],"stream":true,"stream_options":{"include_usage":true},"temperature":0.5}`
	if string(got) != want {
		t.Errorf("body\n got %s\nwant %s", got, want)
	}
	if !r.Serves("m1") || r.Serves("m2") {
		t.Errorf("Serves(m1) %v, Serves(m2) %v; the backend serves m1", r.Serves("m1"), r.Serves("m2"))
	}
}

// TestBodyReusesConversation: a request's next generation (a longer
// conversation, as after a tool round) sends what a fresh encoding would,
// and so does one whose earlier messages changed. A request without tools
// (no tool round can continue it) keeps no encoding.
func TestBodyReusesConversation(t *testing.T) {
	specs, _ := ParseSpecs([]string{"http://a:1,kind=llamacpp"})
	b, err := newBackend(specs[0], nil)
	if err != nil {
		t.Fatal(err)
	}
	all := toolRounds(3)
	tools := []chat.Tool{{Name: "search", Parameters: json.RawMessage(`{"type":"object"}`)}}
	fresh := func(msgs []chat.Message) string {
		data, err := b.body(&Request{Messages: msgs, Tools: tools}, 0, 2)
		if err != nil {
			t.Fatal(err)
		}
		return string(data)
	}
	req := &Request{Tools: tools}
	for _, n := range []int{2, 4, 4, 8} {
		req.Messages = all[:n:n]
		got, err := b.body(req, 0, 2)
		if err != nil {
			t.Fatal(err)
		}
		if want := fresh(req.Messages); string(got) != want {
			t.Fatalf("%d messages:\n got %s\nwant %s", n, got, want)
		}
		if len(req.sent.msgs) != n || !strings.Contains(string(got), string(req.sent.json)) {
			t.Fatalf("%d messages: the encoding kept is of %d", n, len(req.sent.msgs))
		}
		var v map[string]any
		if err := json.Unmarshal(got, &v); err != nil || len(v["messages"].([]any)) != n || v["id_slot"] != 2.0 {
			t.Fatalf("%d messages: not the request: %v %.200s", n, err, got)
		}
	}
	// An earlier message changed (a new slice, not the one sent): encoded
	// again, not reused.
	changed := slices.Clone(all[:8])
	changed[3].Content = "another result"
	req.Messages = changed
	got, _ := b.body(req, 0, 2)
	if string(got) != fresh(changed) || !strings.Contains(string(got), "another result") {
		t.Errorf("changed conversation sent as %.300s", got)
	}
	// An earlier message changed in place, in the very slice sent: the
	// kept copy tells, so it is encoded again.
	changed[1].Content = "edited in place"
	if got, _ := b.body(req, 0, 2); string(got) != fresh(changed) || !strings.Contains(string(got), "edited in place") {
		t.Errorf("conversation changed in place sent as %.300s", got)
	}
	// Shorter (a new call reusing the request): encoded again.
	req.Messages = all[:2]
	if got, _ := b.body(req, 0, 2); string(got) != fresh(all[:2]) {
		t.Errorf("shorter conversation sent as %.300s", got)
	}
	noTools := &Request{Messages: all[:4]}
	got, _ = b.body(noTools, 0, 2)
	if noTools.sent.msgs != nil || noTools.sent.json != nil {
		t.Errorf("a request without tools kept its encoding (%d messages)", len(noTools.sent.msgs))
	}
	var v map[string]any
	if err := json.Unmarshal(got, &v); err != nil || len(v["messages"].([]any)) != 4 || v["tools"] != nil {
		t.Errorf("request without tools sent as %v %.200s", err, got)
	}
}
