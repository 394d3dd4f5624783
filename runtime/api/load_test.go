package api

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/pitstop-llm/pitstop/runtime"
)

var (
	loadBig  = flag.Bool("pitstop.load-big", false, "run the load test at full size: 500 concurrent go-openai clients × 20 calls, paced at the GPU's speed")
	loadPace = flag.Float64("pitstop.load-pace", -1, "override the load test's pace (simulated GPU time scale)")
)

// TestLoad runs N concurrent go-openai clients of M calls each against a
// loopback server: half of the clients ask questions the server answers
// with a server-side tool (the calculator), the other half run a
// client-side tool round trip (tool_calls back, then the follow-up) or
// plain chat; half of each stream. Every call must be answered with no
// error, no KV block may leak, and the time each call spent outside the
// engine and the tools is reported (p50/p99).
//
// By default it is small (32 × 4) to stay quick under -race on a small
// machine; -pitstop.load-big runs 500 × 20 paced at the profiled GPU's
// speed:
//
//	go test ./runtime/api -run TestLoad -count=1 -v -pitstop.load-big
func TestLoad(t *testing.T) {
	clients, calls, pace := 32, 4, 0.02
	if testing.Short() {
		clients, calls = 8, 2
	}
	if *loadBig {
		clients, calls, pace = 500, 20, 1
	}
	if *loadPace >= 0 {
		pace = *loadPace
	}
	ts := newTestServer(t, serverOpts{rt: runtime.Config{Pace: pace}})
	transport := &http.Transport{MaxIdleConns: clients * 2, MaxIdleConnsPerHost: clients * 2, IdleConnTimeout: time.Minute}
	defer transport.CloseIdleConnections()

	var errCount atomic.Int64
	var firstErr atomic.Value
	fail := func(format string, args ...any) {
		if errCount.Add(1) == 1 {
			firstErr.Store(fmt.Sprintf(format, args...))
		}
	}
	var answered atomic.Int64
	var clientLat []time.Duration
	var latMu sync.Mutex
	start := time.Now()
	var wg sync.WaitGroup
	for i := range clients {
		wg.Go(func() {
			cfg := openai.DefaultConfig("")
			cfg.BaseURL = ts.http.URL + "/v1"
			cfg.HTTPClient = &http.Client{Transport: headerTransport{base: transport, headers: map[string]string{HeaderProgram: fmt.Sprintf("load-%d", i)}}}
			cl := openai.NewClientWithConfig(cfg)
			stream := i%4 >= 2
			serverTools := i%2 == 0
			var msgs []openai.ChatCompletionMessage
			for j := 0; j < calls; j++ {
				var req openai.ChatCompletionRequest
				want := ""
				switch {
				case serverTools:
					a, b := i+1, j+2
					msgs = []openai.ChatCompletionMessage{userMsg(fmt.Sprintf("What is %d*%d?", a, b))}
					req = openai.ChatCompletionRequest{Tools: []openai.Tool{calculatorDecl()}}
					want = fmt.Sprintf("The result is %d.", a*b)
				case len(msgs) > 0 && msgs[len(msgs)-1].Role == openai.ChatMessageRoleAssistant:
					// the follow-up of a client-side tool call
					last := msgs[len(msgs)-1]
					msgs = append(msgs, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleTool, ToolCallID: last.ToolCalls[0].ID, Content: fmt.Sprintf("%d degrees", j)})
					req = openai.ChatCompletionRequest{Tools: []openai.Tool{weatherDecl()}}
					want = fmt.Sprintf("The result is %d degrees.", j)
				case j%3 == 2:
					msgs = []openai.ChatCompletionMessage{userMsg(fmt.Sprintf("hello number %d", j))}
					want = fmt.Sprintf("You said: hello number %d", j)
				default:
					msgs = []openai.ChatCompletionMessage{userMsg(fmt.Sprintf("/call get_weather {\"city\": \"city-%d\"}", j))}
					req = openai.ChatCompletionRequest{Tools: []openai.Tool{weatherDecl()}}
				}
				req.Model, req.Messages = "pitstop-scripted-test", msgs
				t0 := time.Now()
				content, calls, err := complete(cl, req, stream)
				latMu.Lock()
				clientLat = append(clientLat, time.Since(t0))
				latMu.Unlock()
				if err != nil {
					fail("client %d call %d: %v", i, j, err)
					return
				}
				answered.Add(1)
				switch {
				case want != "" && content != want:
					fail("client %d call %d: answer %q, want %q", i, j, content, want)
				case want == "":
					if len(calls) != 1 || calls[0].Function.Name != "get_weather" {
						fail("client %d call %d: tool calls %+v", i, j, calls)
						return
					}
					msgs = append(msgs, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleAssistant, Content: content, ToolCalls: calls})
				default:
					msgs = nil
				}
			}
		})
	}
	wg.Wait()
	wall := time.Since(start)

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	waitDrained(t, ts.rt, 30*time.Second)
	st, _ := ts.rt.Engine(ctx)
	if n := errCount.Load(); n > 0 {
		t.Errorf("%d errors; first: %v", n, firstErr.Load())
	}
	if answered.Load() != int64(clients*calls) {
		t.Errorf("%d of %d calls answered", answered.Load(), clients*calls)
	}
	if st.Leaked != 0 || st.CheckErr != "" {
		t.Errorf("engine after load: %+v", st)
	}

	ts.mu.Lock()
	stats := slices.Clone(ts.done)
	ts.mu.Unlock()
	outside := make([]time.Duration, 0, len(stats))
	engine := make([]time.Duration, 0, len(stats))
	var prepare, respond []time.Duration
	tools := time.Duration(0)
	for _, s := range stats {
		outside = append(outside, s.Outside)
		engine = append(engine, s.Engine)
		prepare = append(prepare, s.Prepare)
		respond = append(respond, s.Respond)
		tools += s.Tools
	}
	rounds := 0
	progs, _ := ts.rt.Programs(ctx, "", false)
	for _, p := range progs {
		rounds += p.ToolRounds
	}
	t.Logf("load: %d clients × %d calls, pace %g: %d answered, %d errors, %d leaked blocks, wall %v (%.0f calls/s), %d server-side tool rounds, %d programs",
		clients, calls, pace, answered.Load(), errCount.Load(), st.Leaked, wall.Round(time.Millisecond), float64(answered.Load())/wall.Seconds(), rounds, len(progs))
	t.Logf("time outside engine and tools per call: p50 %v, p99 %v, max %v (n=%d)", pct(outside, 50), pct(outside, 99), pct(outside, 100), len(outside))
	t.Logf("  of which before the engine (read, decode, render, tokenize): p50 %v, p99 %v; after it (response written): p50 %v, p99 %v",
		pct(prepare, 50), pct(prepare, 99), pct(respond, 50), pct(respond, 99))
	t.Logf("time in the engine per call: p50 %v, p99 %v; client-side latency per call: p50 %v, p99 %v",
		pct(engine, 50), pct(engine, 99), pct(clientLat, 50), pct(clientLat, 99))
}

// complete runs one chat call, streamed or not, and returns the content and
// the tool calls.
func complete(cl *openai.Client, req openai.ChatCompletionRequest, stream bool) (string, []openai.ToolCall, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if !stream {
		resp, err := cl.CreateChatCompletion(ctx, req)
		if err != nil {
			return "", nil, err
		}
		return resp.Choices[0].Message.Content, resp.Choices[0].Message.ToolCalls, nil
	}
	req.Stream = true
	s, err := cl.CreateChatCompletionStream(ctx, req)
	if err != nil {
		return "", nil, err
	}
	defer s.Close()
	var content strings.Builder
	var calls []openai.ToolCall
	for {
		r, err := s.Recv()
		if errors.Is(err, io.EOF) {
			return content.String(), calls, nil
		}
		if err != nil {
			return "", nil, err
		}
		if len(r.Choices) == 0 {
			continue
		}
		content.WriteString(r.Choices[0].Delta.Content)
		for _, tc := range r.Choices[0].Delta.ToolCalls {
			if *tc.Index == len(calls) {
				calls = append(calls, openai.ToolCall{ID: tc.ID, Type: tc.Type, Function: openai.FunctionCall{Name: tc.Function.Name}})
			}
			calls[*tc.Index].Function.Arguments += tc.Function.Arguments
		}
	}
}

func pct(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := int(p / 100 * float64(len(s)-1))
	return s[i].Round(time.Microsecond)
}
