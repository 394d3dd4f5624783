package chat

import (
	"encoding/json"
	"strings"
	"testing"
)

var weatherTool = Tool{
	Name:        "get_weather",
	Description: "Get the weather",
	Parameters:  json.RawMessage(`{"type":"object","properties":{"city":{"type":"string","description":"City name"},"unit":{"type":"string","enum":["c","f"]}},"required":["city"]}`),
}

const qwenToolsBlock = "# Tools\n\nYou may call one or more functions to assist with the user query.\n\nYou are provided with function signatures within <tools></tools> XML tags:\n<tools>\n" +
	`{"type": "function", "function": {"name": "get_weather", "description": "Get the weather", "parameters": {"type": "object", "properties": {"city": {"type": "string", "description": "City name"}, "unit": {"type": "string", "enum": ["c", "f"]}}, "required": ["city"]}}}` +
	"\n</tools>\n\nFor each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:\n<tool_call>\n{\"name\": <function-name>, \"arguments\": <args-json-object>}\n</tool_call><|im_end|>\n"

const qwenDefault = "<|im_start|>system\nYou are Qwen, created by Alibaba Cloud. You are a helpful assistant.<|im_end|>\n"

func multiTurn() []Message {
	return []Message{
		{Role: RoleUser, Content: "Weather in Paris and Rome?"},
		{Role: RoleAssistant, ToolCalls: []ToolCall{
			{ID: "call_1", Name: "get_weather", Arguments: `{"city": "Paris"}`},
			{ID: "call_2", Name: "get_weather", Arguments: `{"city":"Rome","unit":"c"}`},
		}},
		{Role: RoleTool, ToolCallID: "call_1", Content: "18C"},
		{Role: RoleTool, ToolCallID: "call_2", Content: "21C"},
		{Role: RoleAssistant, Content: "Paris 18C, Rome 21C."},
		{Role: RoleUser, Content: "Thanks"},
	}
}

func mustRender(t *testing.T, tpl Template, msgs []Message, tools []Tool, gen bool) string {
	t.Helper()
	got, err := tpl.Render(msgs, tools, gen)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func checkRender(t *testing.T, name string, got, want string) {
	t.Helper()
	if got != want {
		t.Errorf("%s:\n got %q\nwant %q", name, got, want)
	}
}

func TestQwen25Render(t *testing.T) {
	q := NewQwen25()
	user := Message{Role: RoleUser, Content: "Hi"}
	checkRender(t, "system+user", mustRender(t, q, []Message{{Role: RoleSystem, Content: "You are a bot."}, user}, nil, true),
		"<|im_start|>system\nYou are a bot.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n")
	checkRender(t, "default system", mustRender(t, q, []Message{user}, nil, true),
		qwenDefault+"<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n")
	checkRender(t, "no generation prompt", mustRender(t, q, []Message{user}, nil, false),
		qwenDefault+"<|im_start|>user\nHi<|im_end|>\n")
	checkRender(t, "tools", mustRender(t, q, []Message{{Role: RoleUser, Content: "Weather in Paris?"}}, []Tool{weatherTool}, true),
		"<|im_start|>system\nYou are Qwen, created by Alibaba Cloud. You are a helpful assistant.\n\n"+qwenToolsBlock+
			"<|im_start|>user\nWeather in Paris?<|im_end|>\n<|im_start|>assistant\n")
	checkRender(t, "tools+system", mustRender(t, q, []Message{{Role: RoleSystem, Content: "Be brief."}, {Role: RoleUser, Content: "Weather in Paris?"}}, []Tool{weatherTool}, true),
		"<|im_start|>system\nBe brief.\n\n"+qwenToolsBlock+
			"<|im_start|>user\nWeather in Paris?<|im_end|>\n<|im_start|>assistant\n")
	checkRender(t, "multi-turn with parallel tool calls and results", mustRender(t, q, multiTurn(), nil, true),
		qwenDefault+
			"<|im_start|>user\nWeather in Paris and Rome?<|im_end|>\n"+
			"<|im_start|>assistant\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>\n"+
			"<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Rome\", \"unit\": \"c\"}}\n</tool_call><|im_end|>\n"+
			"<|im_start|>user\n<tool_response>\n18C\n</tool_response>\n<tool_response>\n21C\n</tool_response><|im_end|>\n"+
			"<|im_start|>assistant\nParis 18C, Rome 21C.<|im_end|>\n"+
			"<|im_start|>user\nThanks<|im_end|>\n<|im_start|>assistant\n")
	checkRender(t, "assistant content with a tool call", mustRender(t, q, []Message{
		{Role: RoleUser, Content: "Hi"},
		{Role: RoleAssistant, Content: "Let me check.", ToolCalls: []ToolCall{{Name: "get_time", Arguments: ""}}},
	}, nil, false),
		qwenDefault+"<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\nLet me check.\n<tool_call>\n{\"name\": \"get_time\", \"arguments\": {}}\n</tool_call><|im_end|>\n")
}

func TestHermesRender(t *testing.T) {
	h := NewHermes()
	user := Message{Role: RoleUser, Content: "Hi"}
	checkRender(t, "no system", mustRender(t, h, []Message{user}, nil, true),
		"<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n")
	checkRender(t, "tools, no system", mustRender(t, h, []Message{user}, []Tool{weatherTool}, true),
		"<|im_start|>system\n"+qwenToolsBlock+"<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n")
	checkRender(t, "system", mustRender(t, h, []Message{{Role: RoleSystem, Content: "S"}, user}, nil, false),
		"<|im_start|>system\nS<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n")
}

const llamaToolJSON = `{
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Get the weather",
        "parameters": {
            "type": "object",
            "properties": {
                "city": {
                    "type": "string",
                    "description": "City name"
                },
                "unit": {
                    "type": "string",
                    "enum": [
                        "c",
                        "f"
                    ]
                }
            },
            "required": [
                "city"
            ]
        }
    }
}`

func TestLlama31Render(t *testing.T) {
	l := NewLlama31(Llama31Options{})
	checkRender(t, "system+user", mustRender(t, l, []Message{{Role: RoleSystem, Content: " You are a bot.\n"}, {Role: RoleUser, Content: "Hi "}}, nil, true),
		"<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\nCutting Knowledge Date: December 2023\nToday Date: 26 Jul 2024\n\nYou are a bot.<|eot_id|>"+
			"<|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n")
	msgs := []Message{
		{Role: RoleUser, Content: "Weather in Paris?"},
		{Role: RoleAssistant, ToolCalls: []ToolCall{{ID: "c1", Name: "get_weather", Arguments: `{"city":"Paris"}`}}},
		{Role: RoleTool, ToolCallID: "c1", Content: `{"temp": 18}`},
	}
	checkRender(t, "tools in user message, tool call, tool result", mustRender(t, l, msgs, []Tool{weatherTool}, true),
		"<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\nEnvironment: ipython\nCutting Knowledge Date: December 2023\nToday Date: 26 Jul 2024\n\n<|eot_id|>"+
			"<|start_header_id|>user<|end_header_id|>\n\nGiven the following functions, please respond with a JSON for a function call with its proper arguments that best answers the given prompt.\n\n"+
			"Respond in the format {\"name\": function name, \"parameters\": dictionary of argument name and its value}.Do not use variables.\n\n"+
			llamaToolJSON+"\n\nWeather in Paris?<|eot_id|>"+
			"<|start_header_id|>assistant<|end_header_id|>\n\n{\"name\": \"get_weather\", \"parameters\": {\"city\": \"Paris\"}}<|eot_id|>"+
			"<|start_header_id|>ipython<|end_header_id|>\n\n\"{\\\"temp\\\": 18}\"<|eot_id|>"+
			"<|start_header_id|>assistant<|end_header_id|>\n\n")
	ls := NewLlama31(Llama31Options{ToolsInSystem: true, DateString: "01 Jan 2025"})
	checkRender(t, "tools in system", mustRender(t, ls, []Message{{Role: RoleSystem, Content: "Sys"}, {Role: RoleUser, Content: "Q"}}, []Tool{{Name: "f"}}, true),
		"<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\nEnvironment: ipython\nCutting Knowledge Date: December 2023\nToday Date: 01 Jan 2025\n\n"+
			"You have access to the following functions. To call a function, please respond with JSON for a function call."+
			"Respond in the format {\"name\": function name, \"parameters\": dictionary of argument name and its value}.Do not use variables.\n\n"+
			"{\n    \"type\": \"function\",\n    \"function\": {\n        \"name\": \"f\"\n    }\n}\n\nSys<|eot_id|>"+
			"<|start_header_id|>user<|end_header_id|>\n\nQ<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n")
	if _, err := l.Render([]Message{{Role: RoleSystem, Content: "s"}}, []Tool{weatherTool}, true); err == nil {
		t.Error("tools without a user message: want an error")
	}
}

// The runtime appends RenderToolResults after the generated assistant turn
// and its end token; that must equal rendering the whole conversation.
func TestRenderToolResultsContinuesContext(t *testing.T) {
	for _, name := range Names() {
		tpl, _ := Lookup(name)
		for _, tools := range [][]Tool{nil, {weatherTool}} {
			all := multiTurn()[:4] // user, assistant tool calls, two results
			if name == "llama3.1" {
				all[1].ToolCalls = all[1].ToolCalls[:1]
			}
			withCalls := mustRender(t, tpl, all[:2], tools, false)
			cut := strings.LastIndex(withCalls, tpl.EndOfTurn())
			context := withCalls[:cut+len(tpl.EndOfTurn())]
			if !strings.HasPrefix(context, mustRender(t, tpl, all[:1], tools, true)) {
				t.Fatalf("%s: the assistant turn does not follow the generation prompt", name)
			}
			tail, err := tpl.RenderToolResults(all[2:], true)
			if err != nil {
				t.Fatal(err)
			}
			checkRender(t, name+" tool results", context+tail, mustRender(t, tpl, all, tools, true))
		}
		if _, err := tpl.RenderToolResults([]Message{{Role: RoleUser, Content: "x"}}, true); err == nil {
			t.Errorf("%s: a non-tool result was accepted", name)
		}
	}
}

func TestLookup(t *testing.T) {
	for _, n := range []string{"qwen2.5", "Hermes", "llama3.1"} {
		tpl, err := Lookup(n)
		if err != nil || !strings.EqualFold(tpl.Name(), n) {
			t.Fatalf("Lookup(%q) = %v, %v", n, tpl, err)
		}
	}
	_, err := Lookup("mistral")
	if err == nil || !strings.Contains(err.Error(), "valid: hermes, llama3.1, qwen2.5") {
		t.Fatalf("Lookup(mistral) err = %v", err)
	}
}

func TestRenderErrors(t *testing.T) {
	q := NewQwen25()
	if _, err := q.Render([]Message{{Role: "robot", Content: "x"}}, nil, true); err == nil {
		t.Error("unknown role accepted")
	}
	if _, err := q.Render([]Message{{Role: RoleAssistant, ToolCalls: []ToolCall{{Name: "f", Arguments: "{bad"}}}}, nil, true); err == nil {
		t.Error("invalid arguments accepted")
	}
	if _, err := q.Render(nil, []Tool{{Name: "f", Parameters: json.RawMessage("{")}}, true); err == nil {
		t.Error("invalid parameters accepted")
	}
}

func TestPythonJSON(t *testing.T) {
	for in, want := range map[string]string{
		"1.0": "1.0", "1e16": "1e+16", "1e15": "1000000000000000.0", "0.0001": "0.0001", "0.00001": "1e-05",
		"2.5e3": "2500.0", "0.1": "0.1", "123456789012345678.0": "1.2345678901234568e+17", "-0.0": "-0.0",
		"1.5e-7": "1.5e-07", "10": "10", "-0": "0", "12345678901234567890": "12345678901234567890", "1e400": "Infinity",
		"-2.50": "-2.5", "3.0E2": "300.0",
	} {
		if got := pyNumber(in); got != want {
			t.Errorf("pyNumber(%s) = %s, want %s", in, got, want)
		}
	}
	if got := pyQuote("é\n\"\\\x01/<>&\u2028"); got != "\"é\\n\\\"\\\\\\u0001/<>&\u2028\"" {
		t.Errorf("pyQuote = %q", got)
	}
	v, err := parsePy([]byte(`{"b": [1, {"x": []}], "a": {}, "b": 2.50}`))
	if err != nil {
		t.Fatal(err)
	}
	if got := pyDumps(v, 0); got != `{"b": 2.5, "a": {}}` {
		t.Errorf("pyDumps = %s", got)
	}
	if got := pyDumps(v, 2); got != "{\n  \"b\": 2.5,\n  \"a\": {}\n}" {
		t.Errorf("pyDumps indent = %q", got)
	}
}
