package api

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/pitstop-llm/pitstop/internal/testutil"
	"github.com/pitstop-llm/pitstop/tools"
)

// TestGoOpenAIChecksTinyModel: the checks of scripts/openai_node_check.mjs
// that go-openai has the API for (chat completions; it has no Responses
// API), on the built-in tiny model: no undeclared tool call, tool_choice
// none / required / named, response_format json_schema strict with free
// strings and a small max_tokens, a strict tool with free-string arguments
// named by tool_choice. Server-side runs are counted on the server.
func TestGoOpenAIChecksTinyModel(t *testing.T) {
	ts := newTinyServer(t)
	cl := ts.client(nil)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	questions := []string{"What is 17 times 23?", "What time is it in Tokyo?", "What is the capital of France?", "Convert 5 miles to kilometers.", "What is 144 divided by 12?"}
	n := 8
	if raceEnabled {
		n = 2 // the race detector slows the model 5-10 times; the server's goroutines meet as often
	}
	ask := func(i int) []openai.ChatCompletionMessage {
		return []openai.ChatCompletionMessage{userMsg(questions[i%len(questions)])}
	}
	runs := func() int {
		return ts.toolRuns(tools.CalculatorTool) + ts.toolRuns(tools.CurrentTimeTool) + ts.toolRuns(tools.UnitConvertTool)
	}
	chat := func(req openai.ChatCompletionRequest) openai.ChatCompletionChoice {
		t.Helper()
		req.Model = "tiny-tools"
		resp, err := cl.CreateChatCompletion(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		return resp.Choices[0]
	}
	all := builtinTools()
	for i := range n {
		before, timeRuns := runs(), ts.toolRuns(tools.CurrentTimeTool)
		ch := chat(openai.ChatCompletionRequest{Messages: ask(i), Tools: all[1:2], MaxTokens: 80})
		for _, c := range ch.Message.ToolCalls {
			if c.Function.Name != tools.CurrentTimeTool {
				t.Errorf("undeclared %s returned", c.Function.Name)
			}
		}
		if runs()-before != ts.toolRuns(tools.CurrentTimeTool)-timeRuns {
			t.Errorf("request %d: an undeclared tool ran", i)
		}

		before = runs()
		ch = chat(openai.ChatCompletionRequest{Messages: ask(i), Tools: all, ToolChoice: "none", MaxTokens: 80})
		if runs() != before || len(ch.Message.ToolCalls) != 0 {
			t.Errorf("tool_choice none, request %d: a call (%+v)", i, ch.Message.ToolCalls)
		}

		before = runs()
		chat(openai.ChatCompletionRequest{Messages: ask(i), Tools: all, ToolChoice: "required", MaxTokens: 80})
		if runs() == before {
			t.Errorf("tool_choice required, request %d: no call", i)
		}

		before = ts.toolRuns(tools.UnitConvertTool)
		chat(openai.ChatCompletionRequest{Messages: ask(i), Tools: all, MaxTokens: 80,
			ToolChoice: openai.ToolChoice{Type: openai.ToolTypeFunction, Function: openai.ToolFunction{Name: tools.UnitConvertTool}}})
		if ts.toolRuns(tools.UnitConvertTool) == before {
			t.Errorf("tool_choice unit_convert, request %d: not called", i)
		}
	}

	schema := `{"type":"object","properties":{"answer":{"type":"string"},"city":{"type":"string"},"steps":{"type":"array","items":{"type":"string"}},"sure":{"type":"boolean"}},"required":["answer","city","steps","sure"],"additionalProperties":false}`
	val := testutil.SchemaValidator(t, schema)
	params := `{"type":"object","properties":{"city":{"type":"string"},"country":{"type":"string"}},"required":["city","country"],"additionalProperties":false}`
	pval := testutil.SchemaValidator(t, params)
	weather := openai.Tool{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{Name: "get_weather", Strict: true, Parameters: json.RawMessage(params)}}
	for i := range n {
		maxTok := 40 + (i%4)*20
		ch := chat(openai.ChatCompletionRequest{Messages: ask(i), MaxTokens: maxTok,
			ResponseFormat: &openai.ChatCompletionResponseFormat{Type: openai.ChatCompletionResponseFormatTypeJSONSchema,
				JSONSchema: &openai.ChatCompletionResponseFormatJSONSchema{Name: "free", Schema: json.RawMessage(schema), Strict: true}}})
		if ch.FinishReason != openai.FinishReasonStop || testutil.ValidateJSON(val, ch.Message.Content) != nil {
			t.Errorf("json_schema, max_tokens %d: finish %s, %q: %v", maxTok, ch.FinishReason, ch.Message.Content, testutil.ValidateJSON(val, ch.Message.Content))
		}
		ch = chat(openai.ChatCompletionRequest{Messages: ask(i), MaxTokens: maxTok, Tools: []openai.Tool{weather},
			ToolChoice: openai.ToolChoice{Type: openai.ToolTypeFunction, Function: openai.ToolFunction{Name: "get_weather"}}})
		if ch.FinishReason != openai.FinishReasonToolCalls || len(ch.Message.ToolCalls) == 0 || testutil.ValidateJSON(pval, ch.Message.ToolCalls[0].Function.Arguments) != nil {
			t.Errorf("strict get_weather, max_tokens %d: finish %s, calls %+v", maxTok, ch.FinishReason, ch.Message.ToolCalls)
		}
	}
}
