package runtime

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pitstop-llm/pitstop/engine/policy"
	"github.com/pitstop-llm/pitstop/internal/testutil"
	"github.com/pitstop-llm/pitstop/models/chat"
	"github.com/pitstop-llm/pitstop/runtime/internal/tracetest"
	"github.com/pitstop-llm/pitstop/tools"
	dto "github.com/prometheus/client_model/go"
)

func newTestRuntime(t *testing.T, cfg Config) *Runtime {
	t.Helper()
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	rt, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := rt.ReleaseParked(ctx); err != nil {
			t.Error(err)
		}
		if err := rt.Check(ctx); err != nil {
			t.Errorf("after the test: %v", err)
		}
		rt.Close()
	})
	return rt
}

var calcTool = chat.Tool{Name: "calculator"}

func TestServerSideTool(t *testing.T) {
	rt := newTestRuntime(t, Config{})
	ctx := context.Background()
	res, err := rt.ChatSync(ctx, ChatRequest{
		Messages: []chat.Message{{Role: "user", Content: "What is (17+25)*3?"}},
		Tools:    []chat.Tool{calcTool}, ParallelToolCalls: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Content != "The result is 126." || res.FinishReason != "stop" || len(res.Rounds) != 1 {
		t.Fatalf("result %+v", res)
	}
	if res.Rounds[0].Calls[0].Content != "126" {
		t.Fatalf("round %+v", res.Rounds[0])
	}
	t.Logf("usage %+v timing %+v", res.Usage, res.Timing)
}

func TestClientSideToolAndResume(t *testing.T) {
	rt := newTestRuntime(t, Config{})
	ctx := context.Background()
	weather := chat.Tool{Name: "get_weather", Parameters: []byte(`{"type":"object","properties":{"city":{"type":"string"}}}`)}
	msgs := []chat.Message{{Role: "system", Content: strings.Repeat("You are a weather bot. ", 20)}, {Role: "user", Content: "/call get_weather {\"city\": \"Paris\"}"}}
	res, err := rt.ChatSync(ctx, ChatRequest{Program: "p1", Messages: msgs, Tools: []chat.Tool{weather}})
	if err != nil {
		t.Fatal(err)
	}
	if res.FinishReason != "tool_calls" || len(res.ToolCalls) != 1 || res.ToolCalls[0].Arguments != `{"city": "Paris"}` {
		t.Fatalf("result %+v", res)
	}
	msgs = append(msgs, chat.Message{Role: "assistant", ToolCalls: res.ToolCalls}, chat.Message{Role: "tool", ToolCallID: res.ToolCalls[0].ID, Content: "sunny, 21 C"})
	res2, err := rt.ChatSync(ctx, ChatRequest{Program: "p1", Messages: msgs, Tools: []chat.Tool{weather}})
	if err != nil {
		t.Fatal(err)
	}
	if res2.Content != "The result is sunny, 21 C." {
		t.Fatalf("follow-up %+v", res2)
	}
	if res2.Usage.CachedTokens < res.Usage.PromptTokens/16*16-16 {
		t.Errorf("prefix cache: %d cached of the first call's %d prompt tokens", res2.Usage.CachedTokens, res.Usage.PromptTokens)
	}
	progs, _ := rt.Programs(ctx, "", false)
	if len(progs) != 1 || progs[0].Calls != 2 || progs[0].ServiceS <= 0 {
		t.Fatalf("programs %+v", progs)
	}
	t.Logf("usage1 %+v usage2 %+v prog %+v", res.Usage, res2.Usage, progs[0])
}

// counter reads a counter of the runtime's metrics: the first series with
// label=value, or the first series when label is "".
func counter(t *testing.T, rt *Runtime, name, label, value string) float64 {
	t.Helper()
	want := map[string]string{}
	if label != "" {
		want[label] = value
	}
	for _, m := range metricsNamed(t, rt, name) {
		if hasLabels(m, want) {
			return m.GetCounter().GetValue()
		}
	}
	return 0
}

// metricsNamed gathers the runtime's metrics and returns the series of name.
func metricsNamed(t *testing.T, rt *Runtime, name string) []*dto.Metric {
	t.Helper()
	mfs, err := rt.Metrics().Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name {
			return mf.GetMetric()
		}
	}
	return nil
}

// hasLabels reports whether m carries every label of want with its value.
func hasLabels(m *dto.Metric, want map[string]string) bool {
	labels := map[string]string{}
	for _, lp := range m.GetLabel() {
		labels[lp.GetName()] = lp.GetValue()
	}
	for k, v := range want {
		if labels[k] != v {
			return false
		}
	}
	return true
}

// The sequence of a call that returned tool calls to the client stays
// paused (under the policy's handling) and the program's next call resumes
// it: its whole context is already computed.
func TestParkedResume(t *testing.T) {
	rt := newTestRuntime(t, Config{})
	ctx := context.Background()
	weather := chat.Tool{Name: "get_weather", Parameters: []byte(`{"type":"object","properties":{"city":{"type":"string"}}}`)}
	msgs := []chat.Message{{Role: "user", Content: "/pre Checking.\n/call get_weather {\"city\": \"Paris\"}"}}
	res, err := rt.ChatSync(ctx, ChatRequest{Program: "p", Thread: "t1", Messages: msgs, Tools: []chat.Tool{weather}})
	if err != nil || res.FinishReason != "tool_calls" {
		t.Fatalf("%v %+v", err, res)
	}
	st, _ := rt.Engine(ctx)
	if st.Parked != 1 || st.Live != 1 || st.Paused != 1 {
		t.Fatalf("after the tool calls: %+v", st)
	}
	// Another thread of the program does not take it.
	if _, err := rt.ChatSync(ctx, ChatRequest{Program: "p", Thread: "t2", Messages: []chat.Message{{Role: "user", Content: "hi"}}}); err != nil {
		t.Fatal(err)
	}
	msgs = append(msgs, chat.Message{Role: "assistant", Content: res.Content, ToolCalls: res.ToolCalls},
		chat.Message{Role: "tool", ToolCallID: res.ToolCalls[0].ID, Content: "rain"})
	res2, err := rt.ChatSync(ctx, ChatRequest{Program: "p", Thread: "t1", Messages: msgs, Tools: []chat.Tool{weather}})
	if err != nil || res2.Content != "The result is rain." {
		t.Fatalf("%v %+v", err, res2)
	}
	if got := counter(t, rt, "pitstop_client_tool_pauses_total", "event", "resumed"); got != 1 {
		t.Errorf("resumed %v times", got)
	}
	first := res.Usage.PromptTokens + res.Usage.CompletionTokens
	if res2.Usage.CachedTokens < first-rt.Profile().BlockSize || res2.Usage.CachedTokens > res2.Usage.PromptTokens {
		t.Errorf("resumed call: %d of %d prompt tokens already computed; the first call had %d", res2.Usage.CachedTokens, res2.Usage.PromptTokens, first)
	}
	st, _ = rt.Engine(ctx)
	if st.Parked != 0 || st.Live != 0 {
		t.Fatalf("after the follow-up: %+v", st)
	}
	p, _ := rt.Program(ctx, "", "p")
	if p.Calls != 3 || p.ClientToolCalls != 1 || len(p.Threads) != 2 {
		t.Errorf("program %+v", p)
	}
}

// A next call whose history does not extend the parked one starts afresh
// and the parked sequence is ended; a parked sequence nobody resumes
// expires.
func TestParkedMismatchAndExpiry(t *testing.T) {
	rt := newTestRuntime(t, Config{ClientToolTTL: 200 * time.Millisecond})
	ctx := context.Background()
	weather := chat.Tool{Name: "get_weather"}
	ask := func(program, msg string) *Result {
		res, err := rt.ChatSync(ctx, ChatRequest{Program: program, Messages: []chat.Message{{Role: "user", Content: msg}}, Tools: []chat.Tool{weather}})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	ask("a", "/call get_weather {\"city\": \"X\"}")
	ask("a", "something else entirely") // does not extend: the parked call is replaced
	st, _ := rt.Engine(ctx)
	if st.Parked != 0 || st.Live != 0 {
		t.Fatalf("after a mismatching call: %+v", st)
	}
	if got := counter(t, rt, "pitstop_client_tool_pauses_total", "event", "replaced"); got != 1 {
		t.Errorf("replaced %v", got)
	}
	ask("b", "/call get_weather {\"city\": \"Y\"}")
	deadline := time.Now().Add(5 * time.Second)
	for {
		st, _ = rt.Engine(ctx)
		if st.Live == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("parked call did not expire: %+v", st)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if got := counter(t, rt, "pitstop_client_tool_pauses_total", "event", "expired"); got != 1 {
		t.Errorf("expired %v", got)
	}
	// Without a program the call is its own program: nothing is parked.
	if _, err := rt.ChatSync(ctx, ChatRequest{Messages: []chat.Message{{Role: "user", Content: "/call get_weather"}}, Tools: []chat.Tool{weather}}); err != nil {
		t.Fatal(err)
	}
	if st, _ = rt.Engine(ctx); st.Live != 0 {
		t.Errorf("anonymous call parked: %+v", st)
	}
}

// Each finished call appends its segments' trace records (JSONL), which the
// predictor reads back.
func TestTraceRecords(t *testing.T) {
	var buf testutil.LockedBuffer
	rt := newTestRuntime(t, Config{Trace: &buf})
	ctx := context.Background()
	for _, q := range []string{"What is 6*7?", "What is 1+1?"} {
		if _, err := rt.ChatSync(ctx, ChatRequest{Program: "traced", Messages: []chat.Message{{Role: "user", Content: q}}, Tools: []chat.Tool{calcTool}}); err != nil {
			t.Fatal(err)
		}
	}
	recs := tracetest.Records(t, &buf, 4)
	segs := map[int]bool{}
	for _, r := range recs {
		segs[r.Segment] = true
		if r.Program != "traced" || r.Source != "runtime" || r.PreToolOutputTokens <= 0 || r.Input.PromptTokens <= 0 {
			t.Errorf("record %+v", r)
		}
		if r.Tool == "calculator" && (r.ToolDurationS == nil || r.ToolReturnTokens <= 0) {
			t.Errorf("tool segment without duration or return tokens: %+v", r)
		}
	}
	if len(segs) != 4 {
		t.Errorf("segment indexes %v, want 0..3", segs)
	}
	if st, ok := rt.Durations().Stats("calculator"); !ok || st.Count != 2 {
		t.Errorf("duration stats %+v", st)
	}
}

func TestProgramsExpire(t *testing.T) {
	rt := newTestRuntime(t, Config{ProgramTTL: 50 * time.Millisecond})
	ctx := context.Background()
	if _, err := rt.ChatSync(ctx, ChatRequest{Program: "old", Messages: []chat.Message{{Role: "user", Content: "hi"}}}); err != nil {
		t.Fatal(err)
	}
	if ps, _ := rt.Programs(ctx, "", false); len(ps) != 1 {
		t.Fatalf("programs %+v", ps)
	}
	time.Sleep(120 * time.Millisecond)
	rt.expirePrograms()
	if ps, _ := rt.Programs(ctx, "", false); len(ps) != 0 {
		t.Fatalf("idle program not expired: %+v", ps)
	}
	var engineRows int
	_ = rt.onEngine(ctx, func() { engineRows = rt.eng.Programs().Len() })
	if engineRows != 0 {
		t.Errorf("engine still has %d program rows", engineRows)
	}
}

// Close fails calls in flight with ErrUnavailable and refuses new ones.
func TestCloseWithCallsInFlight(t *testing.T) {
	rt, err := New(Config{Pace: 1, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	c, err := rt.Chat(context.Background(), ChatRequest{Messages: []chat.Message{{Role: "user", Content: "/long 2000"}}})
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond)
	rt.Close()
	res, err := c.Wait(context.Background())
	if err != nil || res.Err == nil || AsError(res.Err).Kind != ErrUnavailable {
		t.Fatalf("call after Close: %v %+v", err, res)
	}
	if _, err := rt.Chat(context.Background(), ChatRequest{Messages: []chat.Message{{Role: "user", Content: "hi"}}}); err == nil || AsError(err).Kind != ErrUnavailable {
		t.Fatalf("Chat after Close: %v", err)
	}
}

func TestChatRequestErrors(t *testing.T) {
	rt := newTestRuntime(t, Config{})
	ctx := context.Background()
	user := []chat.Message{{Role: "user", Content: "hi"}}
	cases := []struct {
		req  ChatRequest
		kind ErrorKind
	}{
		{ChatRequest{Model: "other", Messages: user}, ErrNotFound},
		{ChatRequest{}, ErrInvalid},
		{ChatRequest{Messages: user, MaxTokens: -1}, ErrInvalid},
		{ChatRequest{Messages: user, Tools: []chat.Tool{{Name: "a b"}}}, ErrInvalid},
		{ChatRequest{Messages: user, Tools: []chat.Tool{{Name: "a"}, {Name: "a"}}}, ErrInvalid},
		{ChatRequest{Messages: user, Tools: []chat.Tool{{Name: "a", Parameters: []byte(`{"type":"string"}`)}}}, ErrInvalid},
		{ChatRequest{Messages: user, ToolChoice: ToolChoice{Mode: ChoiceRequired}}, ErrInvalid},
		{ChatRequest{Messages: user, Tools: []chat.Tool{calcTool}, ToolChoice: ToolChoice{Mode: ChoiceFunction, Name: "x"}}, ErrInvalid},
		{ChatRequest{Messages: user, ToolChoice: ToolChoice{Mode: "sometimes"}}, ErrInvalid},
		{ChatRequest{Messages: []chat.Message{{Role: "wizard", Content: "x"}}}, ErrInvalid},
		{ChatRequest{Messages: []chat.Message{{Role: "user", Content: strings.Repeat("zq ", 40000)}}}, ErrContextLength},
	}
	for i, c := range cases {
		_, err := rt.Chat(ctx, c.req)
		if err == nil || AsError(err).Kind != c.kind {
			t.Errorf("case %d: %v, want kind %d", i, err, c.kind)
		}
	}
}

// MaxTokens ends a call with finish reason "length".
func TestMaxTokens(t *testing.T) {
	rt := newTestRuntime(t, Config{})
	res, err := rt.ChatSync(context.Background(), ChatRequest{Messages: []chat.Message{{Role: "user", Content: "/long 100"}}, MaxTokens: 7})
	if err != nil || res.FinishReason != "length" || res.Usage.CompletionTokens != 7 {
		t.Fatalf("%v %+v", err, res)
	}
}

// Every registered policy serves the runtime's calls: server-side tools,
// a client tool round trip, concurrent calls.
func TestAllPolicies(t *testing.T) {
	for _, name := range policy.Names() {
		t.Run(name, func(t *testing.T) {
			rt := newTestRuntime(t, Config{Policy: name})
			ctx := context.Background()
			var wg sync.WaitGroup
			for i := range 6 {
				wg.Go(func() {
					prog := fmt.Sprintf("p%d", i)
					res, err := rt.ChatSync(ctx, ChatRequest{Program: prog, Messages: []chat.Message{{Role: "user", Content: fmt.Sprintf("What is %d*3?", i)}}, Tools: []chat.Tool{calcTool}})
					if err != nil || res.Content != fmt.Sprintf("The result is %d.", i*3) {
						t.Errorf("%s: %v %+v", prog, err, res)
						return
					}
					w := chat.Tool{Name: "w"}
					msgs := []chat.Message{{Role: "user", Content: "/call w {\"i\": 1}"}}
					res, err = rt.ChatSync(ctx, ChatRequest{Program: prog, Messages: msgs, Tools: []chat.Tool{w}})
					if err != nil || len(res.ToolCalls) != 1 {
						t.Errorf("%s: %v %+v", prog, err, res)
						return
					}
					msgs = append(msgs, chat.Message{Role: "assistant", ToolCalls: res.ToolCalls}, chat.Message{Role: "tool", ToolCallID: res.ToolCalls[0].ID, Content: "x"})
					res, err = rt.ChatSync(ctx, ChatRequest{Program: prog, Messages: msgs, Tools: []chat.Tool{w}})
					if err != nil || res.Content != "The result is x." {
						t.Errorf("%s follow-up: %v %+v", prog, err, res)
					}
				})
			}
			wg.Wait()
		})
	}
}

// cappedModel is the scripted model with a position limit.
type cappedModel struct {
	Model
	n int
}

func (m cappedModel) MaxContext() int { return m.n }

// Tool results too long for the model's context are cut to leave it room to
// answer (a short result beside them is kept whole), the cut is visible in
// the round and in /metrics, and the call succeeds.
func TestToolResultsCutToFitContext(t *testing.T) {
	base, err := NewScriptedTestModel()
	if err != nil {
		t.Fatal(err)
	}
	reg := tools.NewRegistry()
	reg.MustRegister(&tools.Tool{Name: "dump", Handler: func(context.Context, json.RawMessage) (string, error) {
		return strings.Repeat("lorem ipsum dolor sit amet ", 400), nil
	}})
	reg.MustRegister(&tools.Tool{Name: "small", Handler: func(context.Context, json.RawMessage) (string, error) {
		return "42", nil
	}})
	const ctxCap = 600
	rt := newTestRuntime(t, Config{Model: cappedModel{base, ctxCap}, Tools: reg})
	res, err := rt.ChatSync(context.Background(), ChatRequest{
		Messages: []chat.Message{{Role: "user", Content: "/call dump\n/call small\n/say ok"}},
		Tools:    []chat.Tool{{Name: "dump"}, {Name: "small"}}, ParallelToolCalls: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Err != nil || res.Content != "ok" || len(res.Rounds) != 1 {
		t.Fatalf("call: err %v, content %q, %d rounds", res.Err, res.Content, len(res.Rounds))
	}
	dump, small := res.Rounds[0].Calls[0], res.Rounds[0].Calls[1]
	if !dump.Truncated || !strings.Contains(dump.Content, "cut by pitstop to fit the model's context") {
		t.Fatalf("long result not cut: truncated=%v, %d bytes", dump.Truncated, len(dump.Content))
	}
	if small.Truncated || small.Content != "42" {
		t.Fatalf("short result changed: %+v", small)
	}
	if n := res.Usage.PromptTokens + res.Usage.CompletionTokens; n > ctxCap {
		t.Errorf("context %d tokens, over the model's %d", n, ctxCap)
	}
	if got := counter(t, rt, "pitstop_tool_results_cut_total", "", ""); got != 1 {
		t.Errorf("cut rounds in metrics %v, want 1", got)
	}
}

// shares is max-min fair: short contents whole, long ones equal cuts.
func TestShares(t *testing.T) {
	ids := func(ns ...int) [][]int32 {
		out := make([][]int32, len(ns))
		for i, n := range ns {
			out[i] = make([]int32, n)
		}
		return out
	}
	cases := []struct {
		lens  []int
		avail int
		want  []int
	}{
		{[]int{1000, 10, 100}, 300, []int{190, -1, -1}},
		{[]int{500, 400}, 300, []int{150, 150}},
		{[]int{5, 5}, 300, []int{-1, -1}},
		{[]int{50}, 0, []int{0}},
	}
	for _, c := range cases {
		if got := shares(ids(c.lens...), c.avail); !slices.Equal(got, c.want) {
			t.Errorf("shares(%v, %d) = %v, want %v", c.lens, c.avail, got, c.want)
		}
	}
}
