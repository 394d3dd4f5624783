package api

import (
	"context"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"

	openai "github.com/sashabaranov/go-openai"

	"github.com/pitstop-llm/pitstop/engine"
	"github.com/pitstop-llm/pitstop/engine/policy"
	"github.com/pitstop-llm/pitstop/handling"
	"github.com/pitstop-llm/pitstop/runtime"
)

// A registered tool (the calculator) runs server-side: the client, which
// registered nothing, gets the final answer in one call.
func TestServerSideToolNonStream(t *testing.T) {
	ts := newTestServer(t, serverOpts{})
	cl := ts.client(nil)
	resp, err := cl.CreateChatCompletion(context.Background(), openai.ChatCompletionRequest{
		Model:    "pitstop-scripted-test",
		Messages: []openai.ChatCompletionMessage{userMsg("What is (17+25)*3?")},
		Tools:    []openai.Tool{calculatorDecl()},
	})
	if err != nil {
		t.Fatal(err)
	}
	ch := resp.Choices[0]
	if ch.Message.Content != "The result is 126." || ch.FinishReason != openai.FinishReasonStop || len(ch.Message.ToolCalls) != 0 {
		t.Fatalf("choice %+v", ch)
	}
	if resp.Usage.PromptTokens == 0 || resp.Usage.CompletionTokens == 0 || resp.Usage.TotalTokens != resp.Usage.PromptTokens+resp.Usage.CompletionTokens {
		t.Errorf("usage %+v", resp.Usage)
	}
	if got := resp.Header().Get(HeaderToolRounds); got != "1" {
		t.Errorf("%s = %q, want 1", HeaderToolRounds, got)
	}
	if resp.Object != "chat.completion" || !strings.HasPrefix(resp.ID, "chatcmpl-") {
		t.Errorf("object %q id %q", resp.Object, resp.ID)
	}
}

// collect reads a whole stream: the content, the tool calls assembled from
// their deltas (checking the delta rules on the way) and the finish reason.
type streamed struct {
	content string
	calls   []openai.ToolCall
	finish  openai.FinishReason
	usage   *openai.Usage
	chunks  int
	// argChunks counts chunks with argument text
	argChunks int
}

func collect(t *testing.T, s *openai.ChatCompletionStream) streamed {
	t.Helper()
	var out streamed
	first := true
	for {
		r, err := s.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("stream: %v", err)
		}
		out.chunks++
		if r.Object != "chat.completion.chunk" {
			t.Errorf("chunk object %q", r.Object)
		}
		if r.Usage != nil {
			out.usage = r.Usage
		}
		if len(r.Choices) == 0 {
			continue
		}
		d := r.Choices[0].Delta
		if first {
			if d.Role != openai.ChatMessageRoleAssistant {
				t.Errorf("first delta has role %q", d.Role)
			}
			first = false
		}
		out.content += d.Content
		for _, tc := range d.ToolCalls {
			if tc.Index == nil {
				t.Fatalf("tool call delta without index: %+v", tc)
			}
			i := *tc.Index
			switch {
			case i == len(out.calls): // a new call: id, type and name come first
				if tc.ID == "" || tc.Type != openai.ToolTypeFunction || tc.Function.Name == "" {
					t.Errorf("first delta of call %d lacks id/type/name: %+v", i, tc)
				}
				out.calls = append(out.calls, openai.ToolCall{ID: tc.ID, Type: tc.Type, Function: openai.FunctionCall{Name: tc.Function.Name}})
			case i < len(out.calls):
				if tc.ID != "" || tc.Function.Name != "" {
					t.Errorf("later delta of call %d repeats id/name: %+v", i, tc)
				}
			default:
				t.Fatalf("tool call index %d skips ahead of %d calls", i, len(out.calls))
			}
			out.calls[i].Function.Arguments += tc.Function.Arguments
			if tc.Function.Arguments != "" {
				out.argChunks++
			}
		}
		if f := r.Choices[0].FinishReason; f != "" {
			if out.finish != "" {
				t.Errorf("two finish reasons")
			}
			out.finish = f
		}
	}
	return out
}

func TestServerSideToolStream(t *testing.T) {
	ts := newTestServer(t, serverOpts{})
	s, err := ts.client(nil).CreateChatCompletionStream(context.Background(), openai.ChatCompletionRequest{
		Model:         "pitstop-scripted-test",
		Messages:      []openai.ChatCompletionMessage{userMsg("What is (17+25)*3?")},
		Tools:         []openai.Tool{calculatorDecl()},
		Stream:        true,
		StreamOptions: &openai.StreamOptions{IncludeUsage: true},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	got := collect(t, s)
	if got.content != "The result is 126." || got.finish != openai.FinishReasonStop || len(got.calls) != 0 {
		t.Fatalf("stream %+v", got)
	}
	if got.usage == nil || got.usage.CompletionTokens == 0 {
		t.Errorf("usage chunk %+v", got.usage)
	}
}

// A client-declared tool that is not registered comes back as tool_calls,
// streamed as OpenAI does (index, id, type and name first, then argument
// fragments); the follow-up call of the same program completes it, and its
// prompt is found in the prefix cache.
func TestClientToolRoundTrip(t *testing.T) {
	for _, stream := range []bool{false, true} {
		t.Run(map[bool]string{false: "nonstream", true: "stream"}[stream], func(t *testing.T) {
			// Paced, so the tokens arrive one iteration at a time.
			ts := newTestServer(t, serverOpts{rt: runtime.Config{Pace: 0.05}})
			program := map[string]string{HeaderProgram: "weather-agent"}
			cl := ts.client(program)
			msgs := []openai.ChatCompletionMessage{
				{Role: openai.ChatMessageRoleSystem, Content: strings.Repeat("You answer questions about the weather. ", 10)},
				userMsg("/pre Let me look that up.\n/call get_weather {\"city\": \"Paris\"}\n/call get_weather {\"city\": \"Oslo\"}"),
			}
			req := openai.ChatCompletionRequest{Model: "pitstop-scripted-test", Messages: msgs, Tools: []openai.Tool{weatherDecl()}}
			var calls []openai.ToolCall
			var content string
			var usage openai.Usage
			if stream {
				req.Stream = true
				req.StreamOptions = &openai.StreamOptions{IncludeUsage: true}
				s, err := cl.CreateChatCompletionStream(context.Background(), req)
				if err != nil {
					t.Fatal(err)
				}
				got := collect(t, s)
				s.Close()
				if got.finish != openai.FinishReasonToolCalls {
					t.Fatalf("finish %q", got.finish)
				}
				if got.argChunks <= len(got.calls) {
					t.Errorf("arguments came in %d chunks for %d calls: not streamed", got.argChunks, len(got.calls))
				}
				calls, content, usage = got.calls, got.content, *got.usage
			} else {
				resp, err := cl.CreateChatCompletion(context.Background(), req)
				if err != nil {
					t.Fatal(err)
				}
				if resp.Choices[0].FinishReason != openai.FinishReasonToolCalls {
					t.Fatalf("finish %q", resp.Choices[0].FinishReason)
				}
				calls, content, usage = resp.Choices[0].Message.ToolCalls, resp.Choices[0].Message.Content, resp.Usage
			}
			if content != "Let me look that up." {
				t.Errorf("content %q", content)
			}
			if len(calls) != 2 || calls[0].Function.Name != "get_weather" || calls[0].Function.Arguments != `{"city": "Paris"}` ||
				calls[1].Function.Arguments != `{"city": "Oslo"}` || calls[0].ID == calls[1].ID || !strings.HasPrefix(calls[0].ID, "call_") {
				t.Fatalf("tool calls %+v", calls)
			}
			msgs = append(msgs, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleAssistant, Content: content, ToolCalls: calls},
				openai.ChatCompletionMessage{Role: openai.ChatMessageRoleTool, ToolCallID: calls[0].ID, Content: "sunny"},
				openai.ChatCompletionMessage{Role: openai.ChatMessageRoleTool, ToolCallID: calls[1].ID, Content: "snow"})
			resp, err := cl.CreateChatCompletion(context.Background(), openai.ChatCompletionRequest{
				Model: "pitstop-scripted-test", Messages: msgs, Tools: []openai.Tool{weatherDecl()}})
			if err != nil {
				t.Fatal(err)
			}
			if got := resp.Choices[0].Message.Content; got != "The results are: (1) sunny; (2) snow." {
				t.Fatalf("follow-up %q", got)
			}
			cached := 0
			if resp.Usage.PromptTokensDetails != nil {
				cached = resp.Usage.PromptTokensDetails.CachedTokens
			}
			if cached < usage.PromptTokens/16*16-16 || cached == 0 {
				t.Errorf("follow-up found %d prompt tokens in the prefix cache; the first call had %d", cached, usage.PromptTokens)
			}
			progs, _ := ts.rt.Programs(context.Background(), "", false)
			if len(progs) != 1 || progs[0].ID != "weather-agent" || progs[0].Calls != 2 || progs[0].ClientToolCalls != 2 {
				t.Errorf("programs %+v", progs)
			}
		})
	}
}

// Several registered tool calls in one turn run in parallel, server-side.
func TestParallelServerTools(t *testing.T) {
	ts := newTestServer(t, serverOpts{})
	resp, err := ts.client(nil).CreateChatCompletion(context.Background(), openai.ChatCompletionRequest{
		Model:    "pitstop-scripted-test",
		Messages: []openai.ChatCompletionMessage{userMsg("/call calculator {\"expression\": \"2^10\"}\n/call calculator {\"expression\": \"7*6\"}")},
		Tools:    []openai.Tool{calculatorDecl()},
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := resp.Choices[0].Message.Content; got != "The results are: (1) 1024; (2) 42." {
		t.Fatalf("content %q", got)
	}
}

// A turn that mixes a registered tool and a client tool goes back to the
// client whole.
func TestMixedTurnGoesToClient(t *testing.T) {
	ts := newTestServer(t, serverOpts{})
	resp, err := ts.client(nil).CreateChatCompletion(context.Background(), openai.ChatCompletionRequest{
		Model:    "pitstop-scripted-test",
		Messages: []openai.ChatCompletionMessage{userMsg("/call calculator {\"expression\": \"1+1\"}\n/call get_weather {\"city\": \"Rome\"}")},
		Tools:    []openai.Tool{calculatorDecl(), weatherDecl()},
	})
	if err != nil {
		t.Fatal(err)
	}
	ch := resp.Choices[0]
	if ch.FinishReason != openai.FinishReasonToolCalls || len(ch.Message.ToolCalls) != 2 || ch.Message.ToolCalls[0].Function.Name != "calculator" {
		t.Fatalf("choice %+v", ch)
	}
}

func TestToolChoice(t *testing.T) {
	ts := newTestServer(t, serverOpts{})
	cl := ts.client(nil)
	ask := func(choice any, parallel any, tools []openai.Tool, msg string) openai.ChatCompletionChoice {
		t.Helper()
		resp, err := cl.CreateChatCompletion(context.Background(), openai.ChatCompletionRequest{
			Model: "pitstop-scripted-test", Messages: []openai.ChatCompletionMessage{userMsg(msg)},
			Tools: tools, ToolChoice: choice, ParallelToolCalls: parallel,
		})
		if err != nil {
			t.Fatal(err)
		}
		return resp.Choices[0]
	}
	both := []openai.Tool{calculatorDecl(), weatherDecl()}
	if ch := ask("none", nil, both, "What is 6*7?"); ch.FinishReason != "stop" || !strings.Contains(ch.Message.Content, "not to use tools") {
		t.Errorf("none: %+v", ch)
	}
	if ch := ask("auto", nil, both, "hello there"); ch.Message.Content != "You said: hello there" {
		t.Errorf("auto, no expression: %+v", ch)
	}
	if ch := ask("required", nil, []openai.Tool{weatherDecl()}, "hello"); ch.FinishReason != "tool_calls" || ch.Message.ToolCalls[0].Function.Name != "get_weather" {
		t.Errorf("required: %+v", ch)
	}
	named := openai.ToolChoice{Type: openai.ToolTypeFunction, Function: openai.ToolFunction{Name: "get_weather"}}
	if ch := ask(named, nil, both, "What is 6*7?"); ch.FinishReason != "tool_calls" || ch.Message.ToolCalls[0].Function.Name != "get_weather" {
		t.Errorf("named: %+v", ch)
	}
	if ch := ask(named, false, both, "/call get_weather {\"city\": \"A\"}\n/call get_weather {\"city\": \"B\"}"); len(ch.Message.ToolCalls) != 1 {
		t.Errorf("parallel_tool_calls false: %+v", ch)
	}
	if ch := ask(nil, nil, nil, "What is 6*7?"); ch.FinishReason != "stop" || len(ch.Message.ToolCalls) != 0 {
		t.Errorf("no tools: %+v", ch)
	}
}

// spyPolicy records the program ids the engine's policy is asked about.
type spyPolicy struct {
	engine.Policy
	mu       sync.Mutex
	programs map[string]int
}

func (p *spyPolicy) Priority(v *engine.View, s *engine.Sequence) engine.Priority {
	p.mu.Lock()
	p.programs[s.Program()]++
	p.mu.Unlock()
	return p.Policy.Priority(v, s)
}

func (p *spyPolicy) Handle(v *engine.View, s *engine.Sequence) handling.Kind {
	return p.Policy.Handle(v, s)
}

// A program of several calls (threads included) is one row of
// /v1/programs with its attained service, and the policy sees its id.
func TestProgramTable(t *testing.T) {
	base, _ := policy.New("infercept", policy.Options{})
	spy := &spyPolicy{Policy: base, programs: map[string]int{}}
	ts := newTestServer(t, serverOpts{rt: runtime.Config{PolicyImpl: spy}})
	for i, thread := range []string{"main", "main", "side"} {
		cl := ts.client(map[string]string{HeaderProgram: "agent-7", HeaderThread: thread, HeaderParents: "main"})
		_, err := cl.CreateChatCompletion(context.Background(), openai.ChatCompletionRequest{
			Model: "pitstop-scripted-test", Messages: []openai.ChatCompletionMessage{userMsg("What is 3*" + strings.Repeat("1", i+1) + "?")},
			Tools: []openai.Tool{calculatorDecl()},
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	// and one call of its own
	if _, err := ts.client(nil).CreateChatCompletion(context.Background(), openai.ChatCompletionRequest{
		Model: "pitstop-scripted-test", Messages: []openai.ChatCompletionMessage{userMsg("hi")}}); err != nil {
		t.Fatal(err)
	}
	status, body := ts.do("GET", "/v1/programs", "", nil)
	if status != 200 {
		t.Fatalf("status %d", status)
	}
	rows := body["data"].([]any)
	var agent map[string]any
	anon := 0
	for _, r := range rows {
		m := r.(map[string]any)
		if m["id"] == "agent-7" {
			agent = m
		} else if m["anonymous"] == true {
			anon++
		}
	}
	if len(rows) != 2 || agent == nil || anon != 1 {
		t.Fatalf("rows %v", rows)
	}
	if agent["calls"].(float64) != 3 || agent["service_s"].(float64) <= 0 || agent["tool_rounds"].(float64) != 3 || agent["active"].(float64) != 0 {
		t.Errorf("agent row %v", agent)
	}
	if th := agent["threads"].([]any); len(th) != 2 {
		t.Errorf("threads %v", th)
	}
	spy.mu.Lock()
	n := spy.programs["agent-7"]
	spy.mu.Unlock()
	if n == 0 {
		t.Errorf("the policy never saw program agent-7: %v", spy.programs)
	}
	status, one := ts.do("GET", "/v1/programs/agent-7", "", nil)
	if status != 200 || one["calls"].(float64) != 3 {
		t.Errorf("GET one: %d %v", status, one)
	}
}
