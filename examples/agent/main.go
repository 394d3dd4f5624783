// Command agent is a small agent written with go-openai that talks to
// pitstop by changing only the client's base URL. It registers no tool: it
// declares the built-in tools (calculator, current_time, unit_convert) in
// its requests and lets the server run them (pitstop runs registered tools
// itself, inside the serving loop, and answers with the final text). Its
// calls carry an X-Pitstop-Program header, so pitstop schedules them as one
// program; at the end it prints the program's row of GET /v1/programs.
//
// For every question it prints what happened on the server: the tool call
// the model wrote, what the engine did with the call's KV cache while the
// tool ran (preserve, swap or discard) and why, the tool's result and the
// final answer. It reads these from pitstop's extension of the response,
// which go-openai passes over: the "pitstop" field of a non-streamed
// response (tool_rounds), read from the response body as it goes by, and
// the "pitstop" chunks of a stream, read with the stream's RecvRaw.
//
// Against a running server (by default pitstop serves its built-in tiny
// tool-calling model on the CPU):
//
//	pitstop serve --addr 127.0.0.1:8080 &
//	go run ./examples/agent -base-url http://127.0.0.1:8080/v1
//
// or self-contained (starts pitstop in-process on a loopback port):
//
//	go run ./examples/agent -embedded
//
// It exits 0 when every question got a final answer and no tool call came
// back to it (the server ran them all), 1 otherwise.
package main

import (
	"bytes"
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

	"github.com/pitstop-llm/pitstop/models/builtin"
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
	embedded  string // "": use base-url; else the model to serve in-process
	pace      float64
	timeout   time.Duration
	wait      time.Duration // wait this long for the server's /healthz
}

// defaultQuestions need the calculator, the clock, and no tool at all.
const defaultQuestions = "What is 17 times 23?|What time is it in Tokyo?|What is the capital of France?"

// scripted names the scripted test model for -embedded.
const scripted = "scripted-test"

func main() {
	var c config
	var questions string
	var embedded bool
	flag.StringVar(&c.baseURL, "base-url", "http://127.0.0.1:8080/v1", "pitstop's OpenAI-compatible base URL")
	flag.StringVar(&c.apiKey, "api-key", os.Getenv("PITSTOP_API_KEY"), "API key (default $PITSTOP_API_KEY)")
	flag.StringVar(&c.model, "model", "", "model id (default: the one the server serves, from GET /v1/models)")
	flag.StringVar(&c.program, "program", "", "program id sent as X-Pitstop-Program (default: agent-<time>)")
	flag.StringVar(&questions, "questions", defaultQuestions, "questions, separated by |")
	flag.BoolVar(&c.stream, "stream", false, "stream the answers")
	flag.BoolVar(&embedded, "embedded", false, "start pitstop in-process on a loopback port and use it")
	embeddedModel := flag.String("embedded-model", builtin.Prefix+builtin.TinyTools, "with -embedded: the model to serve (builtin:NAME, a model directory, or "+scripted+")")
	flag.Float64Var(&c.pace, "pace", 1, "with -embedded-model "+scripted+": the simulated engine's pace (1: the simulated GPU's speed)")
	flag.DurationVar(&c.timeout, "timeout", 2*time.Minute, "give up after this long")
	flag.DurationVar(&c.wait, "wait", 0, "wait up to this long for the server to answer GET /healthz (a server just started)")
	flag.Parse()
	if embedded {
		c.embedded = *embeddedModel
	}
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

// declaredTools are the tools the agent offers the model. It gives only
// their names: the server renders its registered definitions of them (and
// would hand back to the agent any call of a tool it does not have).
func declaredTools() []openai.Tool {
	var out []openai.Tool
	for _, n := range []string{"calculator", "current_time", "unit_convert"} {
		out = append(out, openai.Tool{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{
			Name: n, Parameters: json.RawMessage(`{"type":"object"}`)}})
	}
	return out
}

// answer is what one question got.
type answer struct {
	content, finish string
	calls           []openai.ToolCall // returned to the agent (not run by the server)
	rounds          []runtime.Round   // run by the server
	usage           openai.Usage
}

func run(ctx context.Context, c config, out io.Writer) error {
	if len(c.questions) == 0 {
		return errors.New("no questions")
	}
	if c.embedded != "" {
		base, stop, err := startEmbedded(c.embedded, c.pace)
		if err != nil {
			return err
		}
		defer stop()
		c.baseURL = base
		fmt.Fprintf(out, "started pitstop in-process at %s\n", base)
	}
	if c.wait > 0 {
		if err := waitHealthy(ctx, c.baseURL, c.wait); err != nil {
			return err
		}
	}
	if c.program == "" {
		c.program = "agent-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	}
	cfg := openai.DefaultConfig(c.apiKey)
	cfg.BaseURL = strings.TrimRight(c.baseURL, "/")
	httpClient := &http.Client{Transport: agentTransport{program: c.program}}
	cfg.HTTPClient = httpClient
	client := openai.NewClientWithConfig(cfg)
	if c.model == "" {
		models, err := client.ListModels(ctx)
		if err != nil {
			return fmt.Errorf("asking the server for its model: %w", err)
		}
		if len(models.Models) == 0 {
			return errors.New("the server lists no model")
		}
		c.model = models.Models[0].ID
	}
	fmt.Fprintf(out, "program %s, model %s, tools declared: calculator, current_time, unit_convert (run by the server)\n", c.program, c.model)

	totalRounds := 0
	var prompt, cached, completion int
	var callTime time.Duration
	for i, q := range c.questions {
		n := i + 1
		fmt.Fprintf(out, "\n[%d] user: %s\n", n, q)
		req := openai.ChatCompletionRequest{
			Model:    c.model,
			Messages: []openai.ChatCompletionMessage{{Role: openai.ChatMessageRoleUser, Content: q}},
			Tools:    declaredTools(),
		}
		start := time.Now()
		var a answer
		var err error
		if c.stream {
			a, err = streamAnswer(ctx, client, req, n, out)
		} else {
			a, err = plainAnswer(ctx, client, req, n, out)
		}
		if err != nil {
			return fmt.Errorf("question %d: %w", n, err)
		}
		took := time.Since(start)
		totalRounds += len(a.rounds)
		callTime += took
		prompt, cached, completion = prompt+a.usage.PromptTokens, cached+cachedTokens(a.usage), completion+a.usage.CompletionTokens
		if len(a.rounds) == 0 && len(a.calls) == 0 {
			fmt.Fprintf(out, "[%d]   no tool call: the model answered directly\n", n)
		}
		fmt.Fprintf(out, "[%d] finish: %s, %d server-side tool round(s), %d prompt tokens (%d from the prefix cache), %d completion tokens, %v\n", n,
			a.finish, len(a.rounds), a.usage.PromptTokens, cachedTokens(a.usage), a.usage.CompletionTokens, took.Round(time.Millisecond))
		if len(a.calls) > 0 {
			for _, tc := range a.calls {
				fmt.Fprintf(out, "[%d] the server returned a tool call instead: %s(%s)\n", n, tc.Function.Name, tc.Function.Arguments)
			}
			return fmt.Errorf("question %d: the server did not run the tool itself (is it registered?)", n)
		}
		if a.finish != string(openai.FinishReasonStop) || strings.TrimSpace(a.content) == "" {
			return fmt.Errorf("question %d: no final answer (finish %q)", n, a.finish)
		}
	}

	row, err := programRow(ctx, httpClient, cfg.BaseURL, c.apiKey, c.program)
	if err != nil {
		return fmt.Errorf("reading the program table: %w", err)
	}
	fmt.Fprintf(out, "\nprogram table row: %s: %d calls, %d server-side tool rounds (%.2f ms of tools), engine service %.1f ms, wait %.1f ms\n",
		row.ID, row.Calls, row.ToolRounds, row.ToolTimeS*1000, row.ServiceS*1000, row.WaitS*1000)
	if callTime > 0 {
		fmt.Fprintf(out, "totals: %d calls in %.2f s: %d prompt tokens (%d from the prefix cache), %d completion tokens, %.0f completion tokens/s over the calls' wall time\n",
			len(c.questions), callTime.Seconds(), prompt, cached, completion, float64(completion)/callTime.Seconds())
	}
	if row.ToolRounds != totalRounds {
		return fmt.Errorf("the program table counts %d tool rounds, the responses %d", row.ToolRounds, totalRounds)
	}
	return nil
}

// waitHealthy polls the server's GET /healthz (beside the /v1 base URL)
// until it answers 200 or wait has passed.
func waitHealthy(ctx context.Context, baseURL string, wait time.Duration) error {
	url := strings.TrimSuffix(strings.TrimRight(baseURL, "/"), "/v1") + "/healthz"
	deadline := time.Now().Add(wait)
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			err = fmt.Errorf("HTTP %d", resp.StatusCode)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the server at %s was not healthy after %v: %w", url, wait, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// printRound prints one server-side tool round: the calls the model wrote,
// the handling of the call's KV cache while they ran and why, the results.
func printRound(out io.Writer, n int, r runtime.Round) {
	for _, c := range r.Calls {
		fmt.Fprintf(out, "[%d]   model called  %s(%s), run by the server\n", n, c.Name, c.Arguments)
	}
	fmt.Fprintf(out, "[%d]   KV cache      %s while the tool ran", n, strings.ToUpper(r.Handling))
	for _, l := range r.HandlingLater {
		fmt.Fprintf(out, ", then %s", l)
	}
	fmt.Fprintf(out, "\n[%d]     why: %s\n", n, r.HandlingReason)
	for _, c := range r.Calls {
		status := ""
		if c.IsError {
			status = " (error)"
		}
		fmt.Fprintf(out, "[%d]   tool result   %s%s, in %v\n", n, c.Content, status, c.Duration.Round(time.Microsecond))
	}
}

// plainAnswer asks without streaming; the server-side rounds come from the
// response body's "pitstop" field.
func plainAnswer(ctx context.Context, client *openai.Client, req openai.ChatCompletionRequest, n int, out io.Writer) (answer, error) {
	body := &bytes.Buffer{}
	resp, err := client.CreateChatCompletion(withBodySink(ctx, body), req)
	if err != nil {
		return answer{}, err
	}
	var ext struct {
		Pitstop struct {
			ToolRounds []runtime.Round `json:"tool_rounds"`
		} `json:"pitstop"`
	}
	if err := json.Unmarshal(body.Bytes(), &ext); err != nil {
		return answer{}, fmt.Errorf("reading pitstop's extension of the response: %w", err)
	}
	ch := resp.Choices[0]
	a := answer{content: ch.Message.Content, finish: string(ch.FinishReason), calls: ch.Message.ToolCalls,
		rounds: ext.Pitstop.ToolRounds, usage: resp.Usage}
	for _, r := range a.rounds {
		printRound(out, n, r)
	}
	fmt.Fprintf(out, "[%d] assistant: %s\n", n, a.content)
	return a, nil
}

// streamAnswer prints the answer as it streams, and each server-side round
// as its "pitstop" chunk arrives.
func streamAnswer(ctx context.Context, client *openai.Client, req openai.ChatCompletionRequest, n int, out io.Writer) (answer, error) {
	req.Stream = true
	req.StreamOptions = &openai.StreamOptions{IncludeUsage: true}
	s, err := client.CreateChatCompletionStream(ctx, req)
	if err != nil {
		return answer{}, err
	}
	defer s.Close()
	var a answer
	var content strings.Builder
	open := false // an "assistant:" line is being written
	for {
		raw, err := s.RecvRaw()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return answer{}, err
		}
		var r struct {
			openai.ChatCompletionStreamResponse
			Pitstop *struct {
				ToolRound *runtime.Round `json:"tool_round"`
			} `json:"pitstop"`
		}
		if err := json.Unmarshal(raw, &r); err != nil {
			return answer{}, fmt.Errorf("stream chunk %s: %w", raw, err)
		}
		if r.Pitstop != nil && r.Pitstop.ToolRound != nil {
			if open {
				fmt.Fprintln(out)
				open = false
			}
			a.rounds = append(a.rounds, *r.Pitstop.ToolRound)
			printRound(out, n, *r.Pitstop.ToolRound)
		}
		if r.Usage != nil {
			a.usage = *r.Usage
		}
		if len(r.Choices) == 0 {
			continue
		}
		ch := r.Choices[0]
		if ch.Delta.Content != "" {
			if !open {
				fmt.Fprintf(out, "[%d] assistant (streamed): ", n)
				open = true
			}
			fmt.Fprint(out, ch.Delta.Content)
			content.WriteString(ch.Delta.Content)
		}
		for _, tc := range ch.Delta.ToolCalls {
			if tc.Index != nil && *tc.Index == len(a.calls) {
				a.calls = append(a.calls, openai.ToolCall{ID: tc.ID, Function: openai.FunctionCall{Name: tc.Function.Name}})
			}
			if tc.Index != nil && *tc.Index < len(a.calls) {
				a.calls[*tc.Index].Function.Arguments += tc.Function.Arguments
			}
		}
		if ch.FinishReason != "" {
			a.finish = string(ch.FinishReason)
		}
	}
	if open {
		fmt.Fprintln(out)
	}
	a.content = content.String()
	return a, nil
}

func cachedTokens(u openai.Usage) int {
	if u.PromptTokensDetails == nil {
		return 0
	}
	return u.PromptTokensDetails.CachedTokens
}

// bodySinkKey is the context key of a buffer that receives a response body.
type bodySinkKey struct{}

// withBodySink asks agentTransport to copy the response body into buf as
// the client reads it.
func withBodySink(ctx context.Context, buf *bytes.Buffer) context.Context {
	return context.WithValue(ctx, bodySinkKey{}, buf)
}

// agentTransport adds X-Pitstop-Program to every request and copies the
// response body into the request context's sink, if any (go-openai reads
// it as usual).
type agentTransport struct{ program string }

func (p agentTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set(api.HeaderProgram, p.program)
	resp, err := http.DefaultTransport.RoundTrip(r)
	if err != nil {
		return nil, err
	}
	if buf, ok := r.Context().Value(bodySinkKey{}).(*bytes.Buffer); ok {
		resp.Body = teeBody{Reader: io.TeeReader(resp.Body, buf), Closer: resp.Body}
	}
	return resp, nil
}

type teeBody struct {
	io.Reader
	io.Closer
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

// startEmbedded runs pitstop in-process on a loopback port, serving model
// (a real model on the CPU executor, or the scripted test model).
func startEmbedded(model string, pace float64) (string, func(), error) {
	cfg := runtime.Config{Pace: pace, Logger: slog.New(slog.DiscardHandler)}
	if model != scripted {
		m, err := runtime.LoadWeightsModel(model, runtime.WeightsOptions{})
		if err != nil {
			return "", nil, err
		}
		b, err := runtime.NewCPUBackend(m, runtime.CPUOptions{KVTokens: 8192, Calibrate: 500 * time.Millisecond})
		if err != nil {
			return "", nil, err
		}
		cfg = b.Apply(cfg)
	}
	rt, err := runtime.New(cfg)
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
