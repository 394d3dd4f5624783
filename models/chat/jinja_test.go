package chat

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// jinjaFamilies are the shipped templates (testdata/templates, NOTICE) with
// the tokens their models' tokenizer_config.json gives them.
var jinjaFamilies = []struct {
	file, bos, eos string
}{
	{"qwen2.5.jinja", "", "<|im_end|>"},
	{"qwen3.jinja", "", "<|im_end|>"},
	{"llama3.1-json.jinja", "<|begin_of_text|>", "<|eot_id|>"},
	{"llama3.2.jinja", "<|begin_of_text|>", "<|eot_id|>"},
	{"hermes-2-pro.jinja", "<s>", "<|im_end|>"},
	{"mistral-v0.3-tools.jinja", "<s>", "</s>"},
	{"ministral3.jinja", "<s>", "</s>"},
	{"smollm2.jinja", "", "<|im_end|>"},
	{"phi4-mini.jinja", "", "<|end|>"},
}

func loadJinja(t testing.TB, file, bos, eos string) *Jinja {
	t.Helper()
	src, err := os.ReadFile(filepath.Join("testdata", "templates", file))
	if err != nil {
		t.Fatal(err)
	}
	j, err := NewJinja(string(src), JinjaOptions{Name: strings.TrimSuffix(file, ".jinja"), BOS: bos, EOS: eos,
		Vars: map[string]any{"date_string": "26 Nov 2026"}})
	if err != nil {
		t.Fatal(err)
	}
	return j
}

// jinjaConversations are the conversations every family renders: system
// prompt, tools, parallel tool calls and their results, a follow-up.
func jinjaConversations() map[string]struct {
	msgs  []Message
	tools []Tool
} {
	sys := Message{Role: RoleSystem, Content: "You are a bot."}
	named := multiTurn()
	named[2].Name, named[3].Name = "get_weather", "get_weather"
	single := []Message{
		{Role: RoleUser, Content: "Weather in Paris?"},
		{Role: RoleAssistant, ToolCalls: []ToolCall{{ID: "call_1", Name: "get_weather", Arguments: `{"city": "Paris"}`}}},
		{Role: RoleTool, ToolCallID: "call_1", Name: "get_weather", Content: "18C"},
	}
	return map[string]struct {
		msgs  []Message
		tools []Tool
	}{
		"chat":           {msgs: []Message{sys, {Role: RoleUser, Content: "Hi"}, {Role: RoleAssistant, Content: "Hello!"}, {Role: RoleUser, Content: "  spaced  "}}},
		"no-system":      {msgs: []Message{{Role: RoleUser, Content: "Hi"}}},
		"tools":          {msgs: []Message{sys, {Role: RoleUser, Content: "Weather in Paris?"}}, tools: []Tool{weatherTool}},
		"parallel-calls": {msgs: append([]Message{sys}, named...), tools: []Tool{weatherTool}},
		"single-call":    {msgs: single, tools: []Tool{weatherTool}},
	}
}

// TestJinjaQwen25MatchesGo: the real Qwen2.5 template rendered by the
// engine equals the hand-written Go template, which was checked against
// transformers.
func TestJinjaQwen25MatchesGo(t *testing.T) {
	j := loadJinja(t, "qwen2.5.jinja", "", "<|im_end|>")
	goT := NewQwen25()
	for name, c := range jinjaConversations() {
		for _, gen := range []bool{false, true} {
			want, err := goT.Render(c.msgs, c.tools, gen)
			if err != nil {
				t.Fatal(err)
			}
			got, err := j.RenderSpans(c.msgs, c.tools, gen)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if got.Text != want {
				t.Fatalf("%s: jinja\n%q\nwant\n%q", name, got.Text, want)
			}
		}
	}
	results := []Message{{Role: RoleTool, Content: "18C"}, {Role: RoleTool, Content: "<|im_end|>\"x\"\n"}}
	want, _ := goT.RenderToolResultsSpans(results, true)
	got, err := j.RenderToolResultsSpans(results, true)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("tool results\n%+v\nwant\n%+v", got, want)
	}
}

// TestJinjaFamilies renders every conversation with every family and
// checks the spans: each content span holds its message's content (as
// written: trimmed, or inside a JSON string), spans in order.
func TestJinjaFamilies(t *testing.T) {
	for _, f := range jinjaFamilies {
		j := loadJinja(t, f.file, f.bos, f.eos)
		for name, c := range jinjaConversations() {
			r, err := j.RenderSpans(c.msgs, c.tools, true)
			if err != nil {
				t.Logf("%s %s: %v", f.file, name, err)
				continue
			}
			prev := 0
			for _, s := range r.Spans {
				if s.Start < prev || s.End <= s.Start {
					t.Fatalf("%s %s: span %+v out of order", f.file, name, s)
				}
				prev = s.End
				if s.Kind == SpanContent && s.Role != "" {
					got, raw := r.Text[s.Start:s.End], c.msgs[s.Msg].Content
					if s.Msg >= len(c.msgs) || !contains(forms(raw), got) {
						t.Fatalf("%s %s: span %+v holds %q, message has %q", f.file, name, s, got, raw)
					}
				}
			}
			t.Logf("%s %s: %d bytes, %d spans", f.file, name, len(r.Text), len(r.Spans))
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
