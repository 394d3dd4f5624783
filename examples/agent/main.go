// Command agent is a small agent written with go-openai that talks to
// pitstop by changing only the client's base URL. It registers no tool: it
// declares the "calculator" tool in its requests and expects the server to
// run it (pitstop runs registered tools itself, inside the serving loop, and
// answers with the final text). Its calls carry an X-Pitstop-Program header,
// so pitstop schedules them as one program; at the end it prints the
// program's row of GET /v1/programs.
//
// Against a running server:
//
//	pitstop serve --addr 127.0.0.1:8080 &
//	go run ./examples/agent -base-url http://127.0.0.1:8080/v1
//
// or self-contained (starts pitstop in-process on a loopback port):
//
//	go run ./examples/agent -embedded
//
// It exits 0 when every question got a final answer computed by a
// server-side tool, 1 otherwise. (The model pitstop serves for now is a
// scripted test model: it turns an arithmetic question into a calculator
// call and quotes the result.)
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/pitstop-llm/pitstop/runtime"
	"github.com/pitstop-llm/pitstop/runtime/api"
)

type config struct {
	baseURL   string
	apiKey    string
	model     string
	program   string
	questions []string
	stream    bool
	embedded  bool
	pace      float64
	timeout   time.Duration
}

func main() {
	var c config
	var questions string
	flag.StringVar(&c.baseURL, "base-url", "http://127.0.0.1:8080/v1", "pitstop's OpenAI-compatible base URL")
	flag.StringVar(&c.apiKey, "api-key", os.Getenv("PITSTOP_API_KEY"), "API key (default $PITSTOP_API_KEY)")
	flag.StringVar(&c.model, "model", "pitstop-scripted-test", "model id")
	flag.StringVar(&c.program, "program", "", "program id sent as X-Pitstop-Program (default: agent-<time>)")
	flag.StringVar(&questions, "questions", "What is (17+25)*3?|What is 2^10 - 24?", "questions, separated by |")
	flag.BoolVar(&c.stream, "stream", false, "stream the answers")
	flag.BoolVar(&c.embedded, "embedded", false, "start pitstop in-process on a loopback port and use it")
	flag.Float64Var(&c.pace, "pace", 1, "with -embedded: the engine's pace (1: the simulated GPU's speed)")
	flag.DurationVar(&c.timeout, "timeout", 2*time.Minute, "give up after this long")
	flag.Parse()
	for _, q := range strings.Split(questions, "|") {
		if q = strings.TrimSpace(q); q != "" {
			c.questions = append(c.questions, q)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
	defer cancel()
	if err := run(ctx, c, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "agent:", err)
		os.Exit(1)
	}
}

// calculator is the tool the agent declares and expects the server to run.
var calculator = openai.Tool{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{
	Name:        "calculator",
	Description: "Evaluate an arithmetic expression exactly",
	Parameters:  json.RawMessage(`{"type":"object","properties":{"expression":{"type":"string"}},"required":["expression"]}`),
}}

func run(ctx context.Context, c config, out io.Writer) error {
	if len(c.questions) == 0 {
		return errors.New("no questions")
	}
	if c.embedded {
		base, stop, err := startEmbedded(c.pace)
		if err != nil {
			return err
		}
		defer stop()
		c.baseURL = base
		fmt.Fprintf(out, "started pitstop in-process at %s\n", base)
	}
	if c.program == "" {
		c.program = "agent-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	}
	cfg := openai.DefaultConfig(c.apiKey)
	cfg.BaseURL = strings.TrimRight(c.baseURL, "/")
	httpClient := &http.Client{Transport: programHeader{program: c.program}}
	cfg.HTTPClient = httpClient
	client := openai.NewClientWithConfig(cfg)
	fmt.Fprintf(out, "program %s, model %s, tools declared: calculator (run by the server)\n", c.program, c.model)

	for i, q := range c.questions {
		fmt.Fprintf(out, "\n[%d] user: %s\n", i+1, q)
		req := openai.ChatCompletionRequest{
			Model:    c.model,
			Messages: []openai.ChatCompletionMessage{{Role: openai.ChatMessageRoleUser, Content: q}},
			Tools:    []openai.Tool{calculator},
		}
		start := time.Now()
		var content, finish string
		var calls []openai.ToolCall
		rounds := "?"
		if c.stream {
			fmt.Fprintf(out, "[%d] assistant (streaming): ", i+1)
			var err error
			content, finish, calls, err = streamAnswer(ctx, client, req, out)
			fmt.Fprintln(out)
			if err != nil {
				return fmt.Errorf("question %d: %w", i+1, err)
			}
		} else {
			resp, err := client.CreateChatCompletion(ctx, req)
			if err != nil {
				return fmt.Errorf("question %d: %w", i+1, err)
			}
			ch := resp.Choices[0]
			content, finish, calls = ch.Message.Content, string(ch.FinishReason), ch.Message.ToolCalls
			rounds = resp.Header().Get(api.HeaderToolRounds)
			fmt.Fprintf(out, "[%d] assistant: %s\n", i+1, content)
			fmt.Fprintf(out, "[%d] usage: %d prompt tokens (%d from the prefix cache), %d completion tokens\n", i+1,
				resp.Usage.PromptTokens, cachedTokens(resp.Usage), resp.Usage.CompletionTokens)
		}
		fmt.Fprintf(out, "[%d] finish: %s, server-side tool rounds: %s, %v\n", i+1, finish, rounds, time.Since(start).Round(time.Millisecond))
		if len(calls) > 0 {
			for _, tc := range calls {
				fmt.Fprintf(out, "[%d] the server returned a tool call instead: %s(%s)\n", i+1, tc.Function.Name, tc.Function.Arguments)
			}
			return fmt.Errorf("question %d: the server did not run the calculator itself (is it registered?)", i+1)
		}
		if finish != string(openai.FinishReasonStop) || content == "" || (rounds != "?" && rounds == "0") {
			return fmt.Errorf("question %d: no final answer from a server-side tool (finish %q, rounds %s)", i+1, finish, rounds)
		}
	}

	row, err := programRow(ctx, httpClient, cfg.BaseURL, c.apiKey, c.program)
	if err != nil {
		return fmt.Errorf("reading the program table: %w", err)
	}
	fmt.Fprintf(out, "\nprogram table row: %s: %d calls, %d server-side tool rounds (%.2f ms of tools), engine service %.1f ms, wait %.1f ms\n",
		row.ID, row.Calls, row.ToolRounds, row.ToolTimeS*1000, row.ServiceS*1000, row.WaitS*1000)
	if row.ToolRounds < len(c.questions) {
		return fmt.Errorf("the server ran %d tool rounds for %d questions", row.ToolRounds, len(c.questions))
	}
	return nil
}

func cachedTokens(u openai.Usage) int {
	if u.PromptTokensDetails == nil {
		return 0
	}
	return u.PromptTokensDetails.CachedTokens
}

// streamAnswer prints the answer as it streams.
func streamAnswer(ctx context.Context, client *openai.Client, req openai.ChatCompletionRequest, out io.Writer) (string, string, []openai.ToolCall, error) {
	req.Stream = true
	s, err := client.CreateChatCompletionStream(ctx, req)
	if err != nil {
		return "", "", nil, err
	}
	defer s.Close()
	var content strings.Builder
	var finish string
	var calls []openai.ToolCall
	for {
		r, err := s.Recv()
		if errors.Is(err, io.EOF) {
			return content.String(), finish, calls, nil
		}
		if err != nil {
			return "", "", nil, err
		}
		if len(r.Choices) == 0 {
			continue
		}
		ch := r.Choices[0]
		fmt.Fprint(out, ch.Delta.Content)
		content.WriteString(ch.Delta.Content)
		for _, tc := range ch.Delta.ToolCalls {
			if tc.Index != nil && *tc.Index == len(calls) {
				calls = append(calls, openai.ToolCall{ID: tc.ID, Function: openai.FunctionCall{Name: tc.Function.Name}})
			}
			if tc.Index != nil && *tc.Index < len(calls) {
				calls[*tc.Index].Function.Arguments += tc.Function.Arguments
			}
		}
		if ch.FinishReason != "" {
			finish = string(ch.FinishReason)
		}
	}
}

// programHeader adds X-Pitstop-Program to every request.
type programHeader struct{ program string }

func (p programHeader) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set(api.HeaderProgram, p.program)
	return http.DefaultTransport.RoundTrip(r)
}

// programRow fetches the program's row of the program table.
func programRow(ctx context.Context, hc *http.Client, base, key, program string) (*runtime.ProgramInfo, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/programs/"+program, nil)
	if err != nil {
		return nil, err
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("HTTP %d: %s", resp.StatusCode, data)
	}
	var row runtime.ProgramInfo
	if err := json.Unmarshal(data, &row); err != nil {
		return nil, err
	}
	return &row, nil
}

// startEmbedded runs pitstop in-process on a loopback port.
func startEmbedded(pace float64) (string, func(), error) {
	rt, err := runtime.New(runtime.Config{Pace: pace, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		return "", nil, err
	}
	srv, err := api.New(api.Config{Runtime: rt})
	if err != nil {
		rt.Close()
		return "", nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		rt.Close()
		return "", nil, err
	}
	hs := &http.Server{Handler: srv.Handler(), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = hs.Serve(ln) }()
	stop := func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = hs.Shutdown(ctx)
		rt.Close()
	}
	return "http://" + ln.Addr().String() + "/v1", stop, nil
}
