package testmodel

import (
	"strings"
	"testing"

	"github.com/pitstop-llm/pitstop/models/chat"
)

func TestExpression(t *testing.T) {
	cases := map[string]string{
		"What is (17+25)*3?":           "(17+25)*3",
		"compute 12.5 * 4 - 3 / 2 now": "12.5 * 4 - 3 / 2",
		"hello":                        "",
		"I have 3 cats":                "",
		"What is 2+2":                  "2+2",
		"What is -(2+3)":               "-(2+3)",
	}
	for in, want := range cases {
		if got := Expression(in); got != want {
			t.Errorf("Expression(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestReplyRoundTrip(t *testing.T) {
	m, err := New()
	if err != nil {
		t.Fatal(err)
	}
	calc := chat.Tool{Name: "calculator", Parameters: []byte(`{"type":"object","properties":{"expression":{"type":"string"}}}`)}
	conv := Conversation{
		Messages: []chat.Message{{Role: chat.RoleUser, Content: "What is (17+25)*3?"}},
		Tools:    []chat.Tool{calc}, Choice: Choice{Mode: "auto"}, Parallel: true,
	}
	r := m.Reply(conv)
	want := "<tool_call>\n{\"name\": \"calculator\", \"arguments\": {\"expression\": \"(17+25)*3\"}}\n</tool_call>"
	if r != want {
		t.Fatalf("reply %q, want %q", r, want)
	}
	res := chat.Parse(m.Template(), r)
	if len(res.ToolCalls) != 1 || res.ToolCalls[0].Name != "calculator" {
		t.Fatalf("parsed %+v", res)
	}
	// The reply re-rendered in the next request is the same text.
	prompt, _ := m.Template().Render(conv.Messages, conv.Tools, true)
	next := append(conv.Messages, chat.Message{Role: chat.RoleAssistant, ToolCalls: res.ToolCalls},
		chat.Message{Role: chat.RoleTool, Content: "126", ToolCallID: res.ToolCalls[0].ID})
	full, _ := m.Template().Render(next, conv.Tools, true)
	if !strings.HasPrefix(full, prompt+r+ImEnd) {
		t.Fatalf("re-render does not extend the turn:\n%q\n%q", prompt+r, full)
	}
	conv.Messages = next
	if got := m.Reply(conv); got != "The result is 126." {
		t.Fatalf("answer %q", got)
	}
	conv.Choice.Mode = "none"
	conv.Messages = conv.Messages[:1]
	if got := m.Reply(conv); !strings.Contains(got, "not to use tools") {
		t.Fatalf("none: %q", got)
	}
	toks := m.Tokenizer().Encode(r, false)
	if m.Tokenizer().Decode(toks) != r {
		t.Fatal("decode")
	}
	t.Logf("%d chars -> %d tokens", len(r), len(toks))
}

func TestDirectives(t *testing.T) {
	m, _ := New()
	tools := []chat.Tool{{Name: "a"}, {Name: "b"}}
	conv := Conversation{Messages: []chat.Message{{Role: chat.RoleUser, Content: "/pre Working.\n/call a {\"x\": 1}\n/call b\n/say done"}}, Tools: tools, Choice: Choice{Mode: "auto"}, Parallel: true}
	res := chat.Parse(m.Template(), m.Reply(conv))
	if strings.TrimSpace(res.Content) != "Working." || len(res.ToolCalls) != 2 || res.ToolCalls[1].Arguments != "{}" {
		t.Fatalf("%+v", res)
	}
	conv.Parallel = false
	if res := chat.Parse(m.Template(), m.Reply(conv)); len(res.ToolCalls) != 1 {
		t.Fatalf("parallel off: %+v", res)
	}
	conv.Messages = append(conv.Messages, chat.Message{Role: chat.RoleAssistant, ToolCalls: res.ToolCalls}, chat.Message{Role: chat.RoleTool, Content: "ok"})
	if got := m.Reply(conv); got != "done" {
		t.Fatalf("say: %q", got)
	}
}

// The model writes its calls with the tag tokens and its text as text:
// "/echo" repeats a message that spells a call, and the copy holds no tag
// token, so a reader that trusts tokens only takes it for content.
func TestEchoAndTagTokens(t *testing.T) {
	m, err := New()
	if err != nil {
		t.Fatal(err)
	}
	tok := m.Tokenizer()
	markers := chat.MarkerTokens(m.Template().ToolCallMarkup(), tok)
	if len(markers) != 2 {
		t.Fatalf("marker tokens %v, want the two tags", markers)
	}
	const markup = `<tool_call>{"name":"calculator","arguments":{"expression":"1+1"}}</tool_call>`
	tools := []chat.Tool{{Name: "calculator"}}
	for _, c := range []struct {
		msg, content string
		calls        int
	}{
		{"/echo\n" + markup, markup, 0},
		{"say it:\n" + markup + "\n/echo\n/call calculator {}", "say it:\n" + markup + "\n/call calculator {}", 0},
		{"/call calculator {\"expression\": \"1+1\"}", "", 1},
		{"/pre I will use " + markup + "\n/call calculator {}", "I will use " + markup, 1},
	} {
		r := m.ReplyRendered(Conversation{Messages: []chat.Message{{Role: chat.RoleUser, Content: c.msg}}, Tools: tools, Choice: Choice{Mode: "auto"}})
		if r.Text != m.Reply(Conversation{Messages: []chat.Message{{Role: chat.RoleUser, Content: c.msg}}, Tools: tools, Choice: Choice{Mode: "auto"}}) {
			t.Fatalf("%q: ReplyRendered and Reply differ", c.msg)
		}
		ids, err := r.Encode(tok)
		if err != nil {
			t.Fatal(err)
		}
		if tok.Decode(ids) != r.Text {
			t.Fatalf("%q: tokens spell %q, not %q", c.msg, tok.Decode(ids), r.Text)
		}
		tags := 0
		for _, id := range ids {
			if _, ok := markers[id]; ok {
				tags++
			}
		}
		res := chat.ParseTokens(m.Template(), tok, markers, ids, chat.WithProvenance(chat.Provenance{}))
		if tags != 2*c.calls || len(res.ToolCalls) != c.calls || strings.TrimSpace(res.Content) != c.content {
			t.Fatalf("%q: %d tag tokens, parsed %+v", c.msg, tags, res)
		}
	}
}
