package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/pitstop-llm/pitstop/runtime"
	"github.com/pitstop-llm/pitstop/tools"
)

// tinyServer serves the built-in tiny tool-calling model on the CPU
// executor, as `pitstop serve` does by default, and counts the tool runs
// on the server.
type tinyServer struct {
	*testServer
	mu   sync.Mutex
	runs map[string]int
}

func newTinyServer(t *testing.T) *tinyServer {
	t.Helper()
	m, err := runtime.LoadWeightsModel("builtin:tiny-tools", runtime.WeightsOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// A short calibration keeps the test fast; it still prices the handling.
	b, err := runtime.NewCPUBackend(m, runtime.CPUOptions{KVTokens: 4096, Calibrate: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ts := &tinyServer{runs: map[string]int{}}
	cfg := b.Apply(runtime.Config{ToolExecutor: tools.ExecutorConfig{Observer: tools.ObserverFunc(func(name string, _ time.Duration, _, _ bool) {
		ts.mu.Lock()
		ts.runs[name]++
		ts.mu.Unlock()
	})}})
	ts.testServer = newTestServer(t, serverOpts{rt: cfg})
	return ts
}

func (ts *tinyServer) toolRuns(name string) int {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return ts.runs[name]
}

// builtinTools are the tools the tiny model was trained with, as a client
// declares them (the server renders its registered definitions).
func builtinTools() []openai.Tool {
	var out []openai.Tool
	for _, n := range []string{tools.CalculatorTool, tools.CurrentTimeTool, tools.UnitConvertTool} {
		out = append(out, openai.Tool{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{Name: n}})
	}
	return out
}

// bodyTap records the last response body the client read.
type bodyTap struct {
	mu   sync.Mutex
	last bytes.Buffer
}

func (b *bodyTap) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(r)
	if err != nil {
		return resp, err
	}
	data, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	b.mu.Lock()
	b.last.Reset()
	b.last.Write(data)
	b.mu.Unlock()
	resp.Body = io.NopCloser(bytes.NewReader(data))
	return resp, nil
}

func TestTinyModelCalculatorEndToEnd(t *testing.T) {
	ts := newTinyServer(t)
	tap := &bodyTap{}
	cfg := openai.DefaultConfig("")
	cfg.BaseURL = ts.http.URL + "/v1"
	cfg.HTTPClient = &http.Client{Transport: tap}
	client := openai.NewClientWithConfig(cfg)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	models, err := client.ListModels(ctx)
	if err != nil || len(models.Models) != 1 || models.Models[0].ID != "tiny-tools" {
		t.Fatalf("models: %+v, %v", models, err)
	}
	resp, err := client.CreateChatCompletion(ctx, openai.ChatCompletionRequest{
		Model:    "tiny-tools",
		Messages: []openai.ChatCompletionMessage{{Role: openai.ChatMessageRoleUser, Content: "What is 17 times 23?"}},
		Tools:    builtinTools(),
	})
	if err != nil {
		t.Fatal(err)
	}
	ch := resp.Choices[0]
	t.Logf("answer: %q (finish %s, usage %+v)", ch.Message.Content, ch.FinishReason, resp.Usage)
	if ch.FinishReason != openai.FinishReasonStop || len(ch.Message.ToolCalls) != 0 {
		t.Fatalf("finish %q, tool calls %v: the server did not run the calculator itself", ch.FinishReason, ch.Message.ToolCalls)
	}
	if !strings.Contains(ch.Message.Content, "391") {
		t.Errorf("answer %q lacks 17*23 = 391", ch.Message.Content)
	}
	if n := ts.toolRuns(tools.CalculatorTool); n != 1 {
		t.Errorf("the calculator ran %d times on the server, want 1", n)
	}
	if h := resp.Header().Get(HeaderToolRounds); h != "1" {
		t.Errorf("%s: %q, want 1", HeaderToolRounds, h)
	}
	// The extension: the round, its call as the model wrote it, the result
	// and the handling decision with its reason.
	var body struct {
		Pitstop pitstopInfo `json:"pitstop"`
	}
	tap.mu.Lock()
	err = json.Unmarshal(tap.last.Bytes(), &body)
	tap.mu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	rounds := body.Pitstop.ToolRounds
	if len(rounds) != 1 || len(rounds[0].Calls) != 1 {
		t.Fatalf("tool rounds %+v", rounds)
	}
	r := rounds[0]
	c := r.Calls[0]
	if c.Name != tools.CalculatorTool || !strings.Contains(c.Arguments, "17") || c.Content != "391" {
		t.Errorf("call %+v", c)
	}
	if r.Handling == "" || !strings.Contains(r.HandlingReason, "chose "+r.Handling) {
		t.Errorf("handling %q, reason %q", r.Handling, r.HandlingReason)
	}
	t.Logf("round: %s(%s) = %s; %s: %s", c.Name, c.Arguments, c.Content, r.Handling, r.HandlingReason)
}

func TestTinyModelStreamAndNoTool(t *testing.T) {
	ts := newTinyServer(t)
	client := ts.client(nil)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	// A question that needs no tool: a direct answer, no tool run.
	resp, err := client.CreateChatCompletion(ctx, openai.ChatCompletionRequest{
		Model:    "tiny-tools",
		Messages: []openai.ChatCompletionMessage{{Role: openai.ChatMessageRoleUser, Content: "What is the capital of France?"}},
		Tools:    builtinTools(),
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := resp.Choices[0].Message.Content; !strings.Contains(got, "Paris") || ts.toolRuns(tools.CalculatorTool)+ts.toolRuns(tools.CurrentTimeTool) != 0 {
		t.Errorf("direct answer %q (tool runs %v)", got, ts.runs)
	}

	// Streamed: the content arrives in chunks, the server-side round as a
	// pitstop chunk that go-openai passes over.
	s, err := client.CreateChatCompletionStream(ctx, openai.ChatCompletionRequest{
		Model:    "tiny-tools",
		Messages: []openai.ChatCompletionMessage{{Role: openai.ChatMessageRoleUser, Content: "What is 2^10?"}},
		Tools:    builtinTools(),
		Stream:   true,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var content strings.Builder
	rounds := 0
	for {
		raw, err := s.RecvRaw()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		var c struct {
			openai.ChatCompletionStreamResponse
			Pitstop *pitstopChunk `json:"pitstop"`
		}
		if err := json.Unmarshal(raw, &c); err != nil {
			t.Fatalf("chunk %s: %v", raw, err)
		}
		if c.Pitstop != nil && c.Pitstop.ToolRound != nil {
			rounds++
			if len(c.Choices) != 0 || c.Pitstop.ToolRound.Calls[0].Content != "1024" {
				t.Errorf("round chunk %s", raw)
			}
		}
		for _, ch := range c.Choices {
			content.WriteString(ch.Delta.Content)
		}
	}
	if rounds != 1 || !strings.Contains(content.String(), "1024") {
		t.Errorf("stream: %d round chunks, content %q", rounds, content.String())
	}
}
