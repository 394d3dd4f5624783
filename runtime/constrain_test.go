package runtime

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/pitstop-llm/pitstop/internal/testutil"
	"github.com/pitstop-llm/pitstop/models/chat"
	"github.com/pitstop-llm/pitstop/tools"
)

const weatherSchema = `{"type":"object","properties":{"city":{"type":"string"},"unit":{"enum":["celsius","fahrenheit"]},"days":{"type":"integer"}},"required":["city","unit","days"],"additionalProperties":false}`

// TestResponseFormatScripted: on the scripted path the forced tokens are
// checked against the grammar: a schema answer passes; a text answer under
// json_object fails the call instead of being returned; unsupported schema
// features are 400s naming them.
func TestResponseFormatScripted(t *testing.T) {
	rt := newTestRuntime(t, Config{})
	ctx := context.Background()
	msgs := []chat.Message{{Role: "user", Content: "weather please"}}
	res, err := rt.ChatSync(ctx, ChatRequest{Messages: msgs, ResponseFormat: &ResponseFormat{Type: "json_schema", Schema: []byte(weatherSchema)}})
	if err != nil {
		t.Fatal(err)
	}
	if err := testutil.ValidateJSON(testutil.SchemaValidator(t, weatherSchema), res.Content); err != nil || res.FinishReason != "stop" {
		t.Fatalf("%q %s: %v", res.Content, res.FinishReason, err)
	}
	_, err = rt.Chat(ctx, ChatRequest{Messages: msgs, ResponseFormat: &ResponseFormat{Type: "json_schema", Schema: []byte(`{"type":"string","pattern":"^a"}`)}})
	if e := AsError(err); e.Kind != ErrInvalid || !strings.Contains(e.Msg, "pattern") || e.Param != "response_format.json_schema.schema" {
		t.Fatalf("unsupported schema: %v", err)
	}
	// Under constrained tool calls, the script's call of a tool not
	// offered is refused at the name: the call fails, no tool call returns.
	rt2 := newTestRuntime(t, Config{ConstrainToolCalls: true})
	weather := chat.Tool{Name: "get_weather", Parameters: []byte(`{"type":"object","properties":{"city":{"type":"string"}}}`)}
	res, err = rt2.ChatSync(ctx, ChatRequest{Messages: []chat.Message{{Role: "user", Content: "/call lookup {}"}}, Tools: []chat.Tool{weather}})
	if err == nil || AsError(err).Code != "grammar_violation" || len(res.ToolCalls) != 0 {
		t.Fatalf("undeclared call under the grammar: %+v %v", res, err)
	}
	res, err = rt2.ChatSync(ctx, ChatRequest{Messages: []chat.Message{{Role: "user", Content: "/call get_weather {\"city\": \"Paris\"}"}}, Tools: []chat.Tool{weather}})
	if err != nil || len(res.ToolCalls) != 1 {
		t.Fatalf("declared call under the grammar: %+v %v", res, err)
	}
}

// TestLogprobsScripted: a scripted model's tokens are certain (logprob 0),
// and the entries spell the content.
func TestLogprobsScripted(t *testing.T) {
	rt := newTestRuntime(t, Config{})
	res, err := rt.ChatSync(context.Background(), ChatRequest{Messages: []chat.Message{{Role: "user", Content: "/say Hello there, friend."}}, Logprobs: true, TopLogprobs: 3})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, e := range res.Logprobs {
		b.Write(e.Bytes)
		if e.Logprob != 0 || len(e.Top) != 1 || e.Top[0].Token != e.Token {
			t.Errorf("entry %+v", e)
		}
	}
	if b.String() != res.Content {
		t.Errorf("logprob tokens spell %q, content %q", b.String(), res.Content)
	}
	if _, err := rt.Chat(context.Background(), ChatRequest{Messages: []chat.Message{{Role: "user", Content: "x"}}, TopLogprobs: 21, Logprobs: true}); AsError(err).Param != "top_logprobs" {
		t.Errorf("top_logprobs 21: %v", err)
	}
}

// tinyRuntime serves the built-in tiny model on the CPU executor.
func tinyRuntime(t *testing.T, cfg Config) *Runtime {
	t.Helper()
	m, err := LoadWeightsModel("builtin:tiny-tools", WeightsOptions{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := NewCPUBackend(m, CPUOptions{KVTokens: 4096, Calibrate: -1})
	if err != nil {
		t.Fatal(err)
	}
	return newTestRuntime(t, b.Apply(cfg))
}

func builtinDecl() []chat.Tool {
	return []chat.Tool{{Name: tools.CalculatorTool}, {Name: tools.CurrentTimeTool}, {Name: tools.UnitConvertTool}}
}

// TestTinyModelConstrained: on the CPU executor the mask steers the real
// model: tool_choice none never calls, required and a named function
// always call (the named one), and a json_schema answer always parses and
// validates; logprobs are real log probabilities.
func TestTinyModelConstrained(t *testing.T) {
	rt := tinyRuntime(t, Config{ClientToolTTL: -1})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	questions := []string{"What is 17 times 23?", "What time is it in Tokyo?", "What is the capital of France?", "Convert 5 miles to kilometers."}
	for _, q := range questions {
		msgs := []chat.Message{{Role: "user", Content: q}}
		res, err := rt.ChatSync(ctx, ChatRequest{Messages: msgs, Tools: builtinDecl(), ToolChoice: ToolChoice{Mode: ChoiceNone}, MaxTokens: 60})
		if err != nil || len(res.Rounds) != 0 || len(res.ToolCalls) != 0 {
			t.Errorf("none, %q: %+v %v", q, res, err)
		}
		res, err = rt.ChatSync(ctx, ChatRequest{Messages: msgs, Tools: builtinDecl(), ToolChoice: ToolChoice{Mode: ChoiceRequired}, MaxTokens: 80})
		if err != nil || len(res.Rounds) == 0 {
			t.Errorf("required, %q: %+v %v", q, res, err)
		}
		res, err = rt.ChatSync(ctx, ChatRequest{Messages: msgs, Tools: builtinDecl(), ToolChoice: ToolChoice{Mode: ChoiceFunction, Name: tools.CurrentTimeTool}, MaxTokens: 80})
		if err != nil || len(res.Rounds) == 0 || res.Rounds[0].Calls[0].Name != tools.CurrentTimeTool {
			t.Errorf("named, %q: %+v %v", q, res, err)
		}
	}
	v := testutil.SchemaValidator(t, weatherSchema)
	for _, q := range questions {
		res, err := rt.ChatSync(ctx, ChatRequest{Messages: []chat.Message{{Role: "user", Content: q}}, MaxTokens: 200,
			ResponseFormat: &ResponseFormat{Type: "json_schema", Schema: []byte(weatherSchema)}, Logprobs: true, TopLogprobs: 2})
		if err != nil {
			t.Fatal(err)
		}
		if res.FinishReason != "stop" {
			t.Errorf("%q: finish %s content %q", q, res.FinishReason, res.Content)
		} else if err := testutil.ValidateJSON(v, res.Content); err != nil {
			t.Errorf("%q: %v", q, err)
		}
		for _, e := range res.Logprobs {
			if e.Logprob > 0 || len(e.Top) == 0 || e.Top[0].Logprob < e.Logprob {
				t.Fatalf("logprob entry %+v", e)
			}
		}
		t.Logf("%q -> %s %q", q, res.FinishReason, res.Content)
	}
}

// freeStringSchemas are answers of free strings, which the tiny model,
// left alone, does not end: under a budget the grammar closes them.
var freeStringSchemas = []string{
	weatherSchema,
	`{"type":"object","properties":{"answer":{"type":"string"},"steps":{"type":"array","items":{"type":"string"},"minItems":1},"confident":{"type":"boolean"}},"required":["answer","steps","confident"],"additionalProperties":false}`,
	`{"type":"object","properties":{"person":{"type":"object","properties":{"name":{"type":"string"},"title":{"type":"string","maxLength":12}},"required":["name","title"]},"note":{"type":"string"}},"required":["person","note"]}`,
}

// TestTinyModelClosesWithinBudget: on the CPU executor, json_schema
// answers of free strings and constrained tool calls with free-string
// arguments finish within max_tokens, however small, as long as it holds
// the shortest valid output: they parse and validate.
func TestTinyModelClosesWithinBudget(t *testing.T) {
	rt := tinyRuntime(t, Config{ClientToolTTL: -1})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	questions := []string{"What is 17 times 23?", "What time is it in Tokyo?", "What is the capital of France?", "Convert 5 miles to kilometers."}
	for i, schema := range freeStringSchemas {
		v := testutil.SchemaValidator(t, schema)
		for j, q := range questions {
			maxTok := 30 + 17*((i+j)%4)
			res, err := rt.ChatSync(ctx, ChatRequest{Messages: []chat.Message{{Role: "user", Content: q}}, MaxTokens: maxTok,
				ResponseFormat: &ResponseFormat{Type: "json_schema", Schema: []byte(schema), Strict: true}})
			if err != nil {
				t.Fatal(err)
			}
			if res.FinishReason != "stop" {
				t.Errorf("schema %d, %q, max_tokens %d: finish %s, content %q", i, q, maxTok, res.FinishReason, res.Content)
			} else if err := testutil.ValidateJSON(v, res.Content); err != nil {
				t.Errorf("schema %d, %q: %v", i, q, err)
			}
		}
	}
	// A client tool with free-string arguments, strict and named by
	// tool_choice, with little room: the call completes and validates.
	params := `{"type":"object","properties":{"city":{"type":"string"},"country":{"type":"string"}},"required":["city","country"],"additionalProperties":false}`
	v := testutil.SchemaValidator(t, params)
	weather := chat.Tool{Name: "get_weather", Description: "Current weather in a city", Parameters: json.RawMessage(params)}
	for j, q := range questions {
		for _, req := range []ChatRequest{
			{Tools: []chat.Tool{weather}, ToolChoice: ToolChoice{Mode: ChoiceFunction, Name: "get_weather"}},
			{Tools: []chat.Tool{weather}, ToolChoice: ToolChoice{Mode: ChoiceRequired}, StrictTools: map[string]bool{"get_weather": true}},
		} {
			req.Messages, req.MaxTokens, req.ParallelToolCalls = []chat.Message{{Role: "user", Content: q}}, 38+5*j, j%2 == 0 // 38: the marker, the shortest call (35), its end
			res, err := rt.ChatSync(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			if len(res.ToolCalls) != 1 || res.FinishReason != "tool_calls" {
				t.Errorf("%q, max_tokens %d: finish %s, calls %+v, content %q", q, req.MaxTokens, res.FinishReason, res.ToolCalls, res.Content)
				continue
			}
			if err := testutil.ValidateJSON(v, res.ToolCalls[0].Arguments); err != nil {
				t.Errorf("%q: %v", q, err)
			}
		}
	}
	// Sampled at temperature 1 (120 seeds), the model wanders further: every answer
	// and call still finishes (a whitespace token at the last position
	// once left a call unfinished: the last token must end the turn).
	one := 1.0
	seeds := int64(120)
	if raceEnabled {
		seeds = 20 // the race detector slows the model 5-10 times; the plain run covers the 120
	}
	for seed := range seeds {
		q := questions[seed%4]
		req := ChatRequest{Messages: []chat.Message{{Role: "user", Content: q}}, Temperature: &one, Seed: &seed, MaxTokens: 40 + int(seed%4)*20, ParallelToolCalls: true}
		schema := freeStringSchemas[seed%3]
		if seed%2 == 0 {
			req.ResponseFormat = &ResponseFormat{Type: "json_schema", Schema: []byte(schema), Strict: true}
		} else {
			req.Tools, req.ToolChoice = []chat.Tool{weather}, ToolChoice{Mode: ChoiceFunction, Name: "get_weather"}
		}
		res, err := rt.ChatSync(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case seed%2 == 0 && res.FinishReason == "stop":
			if err := testutil.ValidateJSON(testutil.SchemaValidator(t, schema), res.Content); err != nil {
				t.Errorf("seed %d: %v", seed, err)
			}
		case seed%2 == 1 && res.FinishReason == "tool_calls" && len(res.ToolCalls) > 0:
			for _, c := range res.ToolCalls {
				if err := testutil.ValidateJSON(v, c.Arguments); err != nil {
					t.Errorf("seed %d: %v", seed, err)
				}
			}
		default:
			t.Errorf("seed %d, %q, max_tokens %d: finish %s, calls %+v, content %q", seed, q, req.MaxTokens, res.FinishReason, res.ToolCalls, res.Content)
		}
	}
}
