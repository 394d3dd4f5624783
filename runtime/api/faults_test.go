package api

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	openai "github.com/sashabaranov/go-openai"

	"github.com/pitstop-llm/pitstop/runtime"
	"github.com/pitstop-llm/pitstop/tools"
)

// faultRegistry has the built-ins plus tools that misbehave.
func faultRegistry(t *testing.T, release <-chan struct{}) *tools.Registry {
	t.Helper()
	reg := tools.NewRegistry()
	if err := tools.RegisterBuiltins(reg, tools.BuiltinConfig{}); err != nil {
		t.Fatal(err)
	}
	empty := json.RawMessage(`{"type":"object","properties":{}}`)
	must := func(tool *tools.Tool, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		reg.MustRegister(tool)
	}
	must(tools.New("boom", "panics", empty, func(context.Context, json.RawMessage) (string, error) {
		panic("kaboom")
	}))
	// hang ignores its context: the executor must give up on its own.
	must(tools.New("hang", "never returns in time", empty, func(context.Context, json.RawMessage) (string, error) {
		<-release
		return "too late", nil
	}, tools.WithTimeout(150*time.Millisecond)))
	must(tools.New("huge", "returns 10 MB", empty, func(context.Context, json.RawMessage) (string, error) {
		return strings.Repeat("0123456789", 1<<20), nil
	}))
	must(tools.New("badutf8", "returns invalid UTF-8", empty, func(context.Context, json.RawMessage) (string, error) {
		return "ok \xff\xfe\xfd then \xc3", nil
	}))
	// slow honours its context: it runs until the call is cancelled.
	must(tools.New("slow", "takes a while", empty, func(ctx context.Context, _ json.RawMessage) (string, error) {
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case <-time.After(30 * time.Second):
			return "done", nil
		}
	}))
	return reg
}

func decl(name string) openai.Tool {
	return openai.Tool{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{Name: name}}
}

// serving checks the server still answers a normal call.
func serving(t *testing.T, ts *testServer) {
	t.Helper()
	resp, err := ts.client(nil).CreateChatCompletion(context.Background(), openai.ChatCompletionRequest{
		Model: "pitstop-scripted-test", Messages: []openai.ChatCompletionMessage{userMsg("What is 2+2?")}, Tools: []openai.Tool{calculatorDecl()}})
	if err != nil || resp.Choices[0].Message.Content != "The result is 4." {
		t.Fatalf("server no longer serving: %v %+v", err, resp)
	}
}

func TestToolFaults(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	ts := newTestServer(t, serverOpts{rt: runtime.Config{Tools: faultRegistry(t, release)}})
	cases := []struct {
		tool  string
		check func(t *testing.T, content string, run runtime.ToolRun)
	}{
		{"boom", func(t *testing.T, content string, run runtime.ToolRun) {
			if !run.IsError || !strings.Contains(run.Content, "panicked") || !strings.Contains(content, "The tool reported an error") {
				t.Errorf("panic: %q %+v", content, run)
			}
		}},
		{"hang", func(t *testing.T, content string, run runtime.ToolRun) {
			if !run.IsError || !strings.Contains(run.Content, "timed out") || run.Duration > 5*time.Second {
				t.Errorf("hang: %q %+v", content, run)
			}
		}},
		{"huge", func(t *testing.T, content string, run runtime.ToolRun) {
			if !run.Truncated || len(run.Content) > tools.DefaultMaxOutputBytes+100 || !strings.Contains(run.Content, "[truncated:") ||
				!strings.Contains(content, "truncated") {
				t.Errorf("huge: %q, truncated=%v, %d bytes", content, run.Truncated, len(run.Content))
			}
		}},
		{"badutf8", func(t *testing.T, content string, run runtime.ToolRun) {
			if !utf8.ValidString(run.Content) || !utf8.ValidString(content) || !strings.Contains(content, "\uFFFD") {
				t.Errorf("invalid UTF-8 not replaced: %q %q", content, run.Content)
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.tool, func(t *testing.T) {
			status, body := ts.do("POST", "/v1/chat/completions", `{"model":"pitstop-scripted-test","messages":[{"role":"user","content":"/call `+c.tool+`"}],"tools":[{"type":"function","function":{"name":"`+c.tool+`"}}]}`, nil)
			if status != 200 {
				t.Fatalf("status %d: %v", status, body)
			}
			msg := body["choices"].([]any)[0].(map[string]any)["message"].(map[string]any)
			var rounds []runtime.Round
			raw, _ := json.Marshal(body["pitstop"].(map[string]any)["tool_rounds"])
			if err := json.Unmarshal(raw, &rounds); err != nil || len(rounds) != 1 || len(rounds[0].Calls) != 1 {
				t.Fatalf("rounds %s", raw)
			}
			c.check(t, msg["content"].(string), rounds[0].Calls[0])
			serving(t, ts)
		})
	}
}

// A webhook tool whose server is down is an error result; the call and
// the server carry on.
func TestWebhookDown(t *testing.T) {
	ts := newTestServer(t, serverOpts{api: Config{AllowToolRegistration: true}})
	dead := httptest.NewServer(http.NotFoundHandler())
	url := dead.URL + "/tools/weather"
	dead.Close()
	status, body := ts.do("POST", "/v1/tools", `{"name":"weather","url":"`+url+`","timeout_s":2,"parameters":{"type":"object","properties":{"city":{"type":"string"}}}}`, nil)
	if status != 201 {
		t.Fatalf("register: %d %v", status, body)
	}
	resp, err := ts.client(nil).CreateChatCompletion(context.Background(), openai.ChatCompletionRequest{
		Model: "pitstop-scripted-test", Messages: []openai.ChatCompletionMessage{userMsg(`/call weather {"city": "Paris"}`)}, Tools: []openai.Tool{decl("weather")}})
	if err != nil {
		t.Fatal(err)
	}
	if c := resp.Choices[0].Message.Content; !strings.Contains(c, "The tool reported an error") || !strings.Contains(c, "unreachable") {
		t.Fatalf("content %q", c)
	}
	serving(t, ts)
}

// A client that disconnects mid-stream: its call is cancelled and its KV
// blocks freed (the cleanup checks the block invariant and leaks).
func TestClientDisconnectMidStream(t *testing.T) {
	ts := newTestServer(t, serverOpts{rt: runtime.Config{Pace: 0.2}})
	ctx, cancel := context.WithCancel(context.Background())
	s, err := ts.client(nil).CreateChatCompletionStream(ctx, openai.ChatCompletionRequest{
		Model: "pitstop-scripted-test", Messages: []openai.ChatCompletionMessage{userMsg("/long 5000")}, Stream: true})
	if err != nil {
		t.Fatal(err)
	}
	for range 5 {
		if _, err := s.Recv(); err != nil {
			t.Fatal(err)
		}
	}
	st, _ := ts.rt.Engine(context.Background())
	if st.Live != 1 || st.UsedBlocks == 0 {
		t.Fatalf("mid-stream: %+v", st)
	}
	cancel()
	s.Close()
	waitDrained(t, ts.rt, 3*time.Second)
	serving(t, ts)
}

// A non-stream client that gives up while a server-side tool runs: the
// tool's context is cancelled and the paused call is ended.
func TestClientDisconnectDuringTool(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	ts := newTestServer(t, serverOpts{rt: runtime.Config{Tools: faultRegistry(t, release)}})
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := ts.client(nil).CreateChatCompletion(ctx, openai.ChatCompletionRequest{
			Model: "pitstop-scripted-test", Messages: []openai.ChatCompletionMessage{userMsg("/call slow")}, Tools: []openai.Tool{decl("slow")}})
		errc <- err
	}()
	deadline := time.Now().Add(5 * time.Second)
	for {
		st, _ := ts.rt.Engine(context.Background())
		if st.Paused == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("call never paused on its tool: %+v", st)
		}
		time.Sleep(2 * time.Millisecond)
	}
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Errorf("client error %v", err)
	}
	waitDrained(t, ts.rt, 3*time.Second)
	serving(t, ts)
}

func waitDrained(t *testing.T, rt *runtime.Runtime, within time.Duration) {
	t.Helper()
	if err := rt.ReleaseParked(context.Background()); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(within)
	for {
		st, err := rt.Engine(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if st.Live == 0 && st.Calls == 0 {
			if st.Leaked != 0 || st.CheckErr != "" || st.UsedBlocks != 0 {
				t.Fatalf("after cancel: %+v", st)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("call not cancelled within %v: %+v", within, st)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// With the KV memory far too small for all calls at once, calls queue and
// all of them complete.
func TestKVMemoryFull(t *testing.T) {
	// 96 blocks of 16 tokens: about three of these calls at a time.
	ts := newTestServer(t, serverOpts{rt: runtime.Config{KVTokens: 96 * 16, Pace: 0.02}})
	const n = 16
	var wg sync.WaitGroup
	errs := make(chan error, n)
	stop := make(chan struct{})
	maxUsed := 0
	var pollWG sync.WaitGroup
	pollWG.Go(func() {
		for {
			select {
			case <-stop:
				return
			case <-time.After(2 * time.Millisecond):
			}
			if st, err := ts.rt.Engine(context.Background()); err == nil {
				maxUsed = max(maxUsed, st.UsedBlocks)
			}
		}
	})
	sys := strings.Repeat("Memory is tight today, so please be brief. ", 12)
	for i := range n {
		wg.Go(func() {
			msg := "/long 150"
			tools := []openai.Tool(nil)
			if i%2 == 0 {
				msg, tools = "What is 12*12?", []openai.Tool{calculatorDecl()}
			}
			_, err := ts.client(nil).CreateChatCompletion(context.Background(), openai.ChatCompletionRequest{
				Model: "pitstop-scripted-test", Tools: tools,
				Messages: []openai.ChatCompletionMessage{{Role: "system", Content: sys}, userMsg(msg)}})
			errs <- err
		})
	}
	wg.Wait()
	close(stop)
	pollWG.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Errorf("call failed: %v", err)
		}
	}
	st, _ := ts.rt.Engine(context.Background())
	if st.PeakWaiting == 0 {
		t.Errorf("no call ever waited (max used %d of 96 blocks)", maxUsed)
	}
	t.Logf("peak waiting %d, max used blocks %d of 96", st.PeakWaiting, maxUsed)
}
