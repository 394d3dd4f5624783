package chat

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

func seqIDs(i int) string { return fmt.Sprintf("call_%d", i) }

func parseChunks(newP func() ToolCallParser, chunks []string) []Event {
	p := newP()
	var ev []Event
	for _, c := range chunks {
		ev = append(ev, p.Feed(c, false)...)
	}
	return append(ev, p.Close()...)
}

// The parsers of these tests read markup spelled in text (TextProvenance):
// the format itself. Provenance is provenance_test.go's.
func hermesP() ToolCallParser {
	return NewHermesParser(WithIDs(seqIDs), WithProvenance(TextProvenance()))
}
func llamaP() ToolCallParser {
	return NewLlamaParser(WithIDs(seqIDs), WithProvenance(TextProvenance()))
}

func chars(s string) []string {
	var out []string
	for i := 0; i < len(s); i++ {
		out = append(out, s[i:i+1])
	}
	return out
}

func randomChunks(r *rand.Rand, s string) []string {
	var out []string
	for len(s) > 0 {
		n := 1 + r.IntN(min(len(s), 12))
		out = append(out, s[:n])
		s = s[n:]
	}
	return out
}

// checkInvariants: fragments of a finished call add up to its arguments;
// starts come before their fragments and ends; indexes count up.
func checkInvariants(t *testing.T, ev []Event) {
	t.Helper()
	args := map[int]*strings.Builder{}
	next := 0
	for _, e := range ev {
		switch e.Kind {
		case EventToolCallStart:
			if e.Index != next {
				t.Fatalf("start index %d, want %d", e.Index, next)
			}
			next++
			args[e.Index] = &strings.Builder{}
		case EventToolCallArgs:
			b, ok := args[e.Index]
			if !ok {
				t.Fatalf("arguments for call %d before its start", e.Index)
			}
			b.WriteString(e.Text)
		case EventToolCallEnd:
			b, ok := args[e.Index]
			if !ok {
				t.Fatalf("end of call %d before its start", e.Index)
			}
			if b.String() != e.Arguments {
				t.Fatalf("call %d: fragments %q != arguments %q", e.Index, b.String(), e.Arguments)
			}
		case EventError:
			if e.Index >= next || e.Err == "" {
				t.Fatalf("bad error event %+v", e)
			}
		}
	}
}

type parserCase struct {
	name string
	in   string
	want []Event
}

func ev(kind EventKind, index int, fields ...string) Event {
	e := Event{Kind: kind, Index: index}
	switch kind {
	case EventText:
		e.Text = fields[0]
	case EventToolCallStart:
		e.ID, e.Name = seqIDs(index), fields[0]
	case EventToolCallArgs:
		e.ID, e.Text = seqIDs(index), fields[0]
	case EventToolCallEnd:
		e.ID, e.Name, e.Arguments = seqIDs(index), fields[0], fields[1]
	}
	return e
}

func text(s string) Event { return Event{Kind: EventText, Text: s, Index: -1} }

func call(index int, name, args string) []Event {
	return []Event{ev(EventToolCallStart, index, name), ev(EventToolCallArgs, index, args), ev(EventToolCallEnd, index, name, args)}
}

func cat(parts ...any) []Event {
	var out []Event
	for _, p := range parts {
		switch x := p.(type) {
		case Event:
			out = append(out, x)
		case []Event:
			out = append(out, x...)
		}
	}
	return out
}

// checkEvents compares events; an expected error matches by Index, a
// substring of Err and (when set) Raw.
func checkEvents(t *testing.T, name string, got, want []Event) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: got %d events %+v\nwant %d %+v", name, len(got), got, len(want), want)
	}
	for i := range got {
		g, w := got[i], want[i]
		if w.Kind == EventError {
			if g.Kind != EventError || g.Index != w.Index || !strings.Contains(g.Err, w.Err) || (w.Raw != "" && g.Raw != w.Raw) {
				t.Fatalf("%s: event %d = %+v, want error like %+v", name, i, g, w)
			}
			continue
		}
		if !reflect.DeepEqual(g, w) {
			t.Fatalf("%s: event %d = %+v\nwant %+v", name, i, g, w)
		}
	}
}

var hermesCases = []parserCase{
	{"text only", "Hello, world! 1 < 2 and <b>bold</b>", []Event{text("Hello, world! 1 < 2 and <b>bold</b>")}},
	{"text before and after parallel calls",
		"Let me check.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>\n<tool_call>\n{\"name\": \"get_time\", \"arguments\": {}}\n</tool_call> Done.",
		cat(text("Let me check.\n"), call(0, "get_weather", `{"city": "Paris"}`), text("\n"), call(1, "get_time", "{}"), text(" Done."))},
	{"nested arguments with tags and braces in strings",
		`<tool_call>{"name":"run","arguments":{"code":"if x { print(\"}\") } <tool_call>","n":[1,{"a":null}]}}</tool_call>`,
		call(0, "run", `{"code":"if x { print(\"}\") } <tool_call>","n":[1,{"a":null}]}`)},
	{"arguments before name", `<tool_call>{"arguments": {"q": 1}, "name": "search"}</tool_call>`, call(0, "search", `{"q": 1}`)},
	{"string arguments", `<tool_call>{"name": "f", "arguments": "{\"a\": 1}"}</tool_call>`, call(0, "f", `{"a": 1}`)},
	{"missing and null arguments", `<tool_call>{"name": "f"}</tool_call><tool_call>{"name": "g", "arguments": null}</tool_call>`,
		cat(call(0, "f", "{}"), call(1, "g", "{}"))},
	{"parameters key", `<tool_call>{"name": "f", "parameters": {"x": true}}</tool_call>`, call(0, "f", `{"x": true}`)},
	{"malformed JSON keeps going",
		"<tool_call>\n{\"name\": \"f\", \"arguments\": {\"a\": tru}}\n</tool_call>after<tool_call>{\"name\": \"g\", \"arguments\": {}}</tool_call>",
		cat(ev(EventToolCallStart, 0, "f"), ev(EventToolCallArgs, 0, `{"a": tru}`),
			Event{Kind: EventError, Index: 0, Err: "malformed tool call JSON: invalid character",
				Raw: "<tool_call>\n{\"name\": \"f\", \"arguments\": {\"a\": tru}}\n</tool_call>"},
			text("after"), call(1, "g", "{}"))},
	{"not JSON", "<tool_call>get_weather(Paris)</tool_call>x",
		cat(Event{Kind: EventError, Index: -1, Err: "expected a JSON object"}, text("x"))},
	{"no name", `<tool_call>{"arguments": {}}</tool_call>`, cat(Event{Kind: EventError, Index: -1, Err: `no "name" key`})},
	{"arguments not an object", `<tool_call>{"name": "f", "arguments": [1]}</tool_call>`,
		cat(ev(EventToolCallStart, 0, "f"), ev(EventToolCallArgs, 0, "[1]"), Event{Kind: EventError, Index: 0, Err: "arguments must be a JSON object"})},
	{"trailing text inside the call", `<tool_call>{"name": "f", "arguments": {}} extra</tool_call>`,
		cat(ev(EventToolCallStart, 0, "f"), ev(EventToolCallArgs, 0, "{}"), Event{Kind: EventError, Index: 0, Err: "unexpected text"})},
	{"unclosed but complete at end", "<tool_call>\n{\"name\": \"f\", \"arguments\": {\"a\": 1}}\n", call(0, "f", `{"a": 1}`)},
	{"truncated at end", "ok <tool_call>\n{\"name\": \"f\", \"arguments\": {\"a\": ",
		cat(text("ok "), ev(EventToolCallStart, 0, "f"), ev(EventToolCallArgs, 0, `{"a": `), Event{Kind: EventError, Index: 0, Err: "unterminated"})},
	{"partial tag at end is text", "see <tool_ca", []Event{text("see <tool_ca")}},
}

var llamaCases = []parserCase{
	{"text", "The answer is 42.", []Event{text("The answer is 42.")}},
	{"json that is not a call", `{"answer": 42}`, []Event{text(`{"answer": 42}`)}},
	{"leading blanks kept in text", "  hi", []Event{text("  hi")}},
	{"one call", `{"name": "get_weather", "parameters": {"city": "Paris"}}`, call(0, "get_weather", `{"city": "Paris"}`)},
	{"python tag, ; and newline separated",
		"<|python_tag|>{\"name\": \"a\", \"parameters\": {}}; {\"name\": \"b\", \"parameters\": {\"x\": 1}}\n{\"name\": \"c\", \"arguments\": {}}",
		cat(call(0, "a", "{}"), call(1, "b", `{"x": 1}`), call(2, "c", "{}"))},
	{"text after calls", "\n{ \"name\": \"a\", \"parameters\": {}} thanks", cat(call(0, "a", "{}"), text("thanks"))},
	{"malformed then good",
		"{\"name\": \"a\", \"parameters\": {\"x\": }, junk\n{\"name\": \"b\", \"parameters\": {}}",
		cat(ev(EventToolCallStart, 0, "a"), ev(EventToolCallArgs, 0, `{"x": }`),
			Event{Kind: EventError, Index: 0, Err: "malformed tool call JSON"}, call(1, "b", "{}"))},
	{"truncated", `{"name": "a", "parameters": {"x"`,
		cat(ev(EventToolCallStart, 0, "a"), ev(EventToolCallArgs, 0, `{"x"`), Event{Kind: EventError, Index: 0, Err: "unterminated"})},
	{"python tag then code", "<|python_tag|>print(1)", []Event{text("print(1)")}},
}

func runParserCases(t *testing.T, newP func() ToolCallParser, cases []parserCase) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, c := range cases {
		whole := Coalesce(parseChunks(newP, []string{c.in}))
		checkEvents(t, c.name, whole, c.want)
		checkInvariants(t, whole)
		byChar := Coalesce(parseChunks(newP, chars(c.in)))
		checkEvents(t, c.name+" (char by char)", byChar, c.want)
		for i := 0; i < 50; i++ {
			got := Coalesce(parseChunks(newP, randomChunks(r, c.in)))
			if !reflect.DeepEqual(got, byChar) {
				t.Fatalf("%s: random chunking differs:\n%+v\n%+v", c.name, got, byChar)
			}
		}
	}
}

func TestHermesParser(t *testing.T) { runParserCases(t, hermesP, hermesCases) }
func TestLlamaParser(t *testing.T)  { runParserCases(t, llamaP, llamaCases) }

func TestHermesStreamsEarly(t *testing.T) {
	p := hermesP()
	if got := p.Feed("Hello <tool", false); !reflect.DeepEqual(got, []Event{text("Hello ")}) {
		t.Fatalf("held-back prefix: %+v", got)
	}
	if got := p.Feed("x", false); !reflect.DeepEqual(got, []Event{text("<toolx")}) {
		t.Fatalf("released prefix: %+v", got)
	}
	if got := p.Feed(" <tool_call>\n{\"name\": \"get_weather\"", false); !reflect.DeepEqual(got, []Event{text(" "), ev(EventToolCallStart, 0, "get_weather")}) {
		t.Fatalf("name as soon as known: %+v", got)
	}
	if got := p.Feed(`, "arguments": {"ci`, false); !reflect.DeepEqual(got, []Event{ev(EventToolCallArgs, 0, `{"ci`)}) {
		t.Fatalf("arguments stream: %+v", got)
	}
	if got := p.Feed(`ty": "Paris"}}`+"\n</tool_", false); !reflect.DeepEqual(got, []Event{ev(EventToolCallArgs, 0, `ty": "Paris"}`)}) {
		t.Fatalf("arguments stream: %+v", got)
	}
	if got := p.Feed("call>", false); !reflect.DeepEqual(got, []Event{ev(EventToolCallEnd, 0, "get_weather", `{"city": "Paris"}`)}) {
		t.Fatalf("end: %+v", got)
	}
	if got := p.Close(); len(got) != 0 {
		t.Fatalf("close: %+v", got)
	}
}

func TestRandomIDs(t *testing.T) {
	res := Parse(NewQwen25(), `<tool_call>{"name": "a", "arguments": {}}</tool_call><tool_call>{"name": "b", "arguments": {}}</tool_call>`)
	if len(res.ToolCalls) != 2 || len(res.Errors) != 0 {
		t.Fatalf("Parse = %+v", res)
	}
	a, b := res.ToolCalls[0].ID, res.ToolCalls[1].ID
	if !strings.HasPrefix(a, "call_") || len(a) != 29 || a == b {
		t.Fatalf("ids %q %q", a, b)
	}
}

// The parser reads back what the template writes for an assistant turn.
func TestParserReadsRenderedCalls(t *testing.T) {
	calls := []ToolCall{{Name: "get_weather", Arguments: `{"city": "Paris"}`}, {Name: "get_time", Arguments: `{}`}}
	for _, name := range Names() {
		tpl, _ := Lookup(name)
		prompt := mustRender(t, tpl, []Message{{Role: RoleUser, Content: "q"}}, []Tool{weatherTool}, true)
		full := mustRender(t, tpl, []Message{{Role: RoleUser, Content: "q"}, {Role: RoleAssistant, ToolCalls: calls}}, []Tool{weatherTool}, false)
		turn := strings.TrimPrefix(full, prompt)
		turn = turn[:strings.LastIndex(turn, tpl.EndOfTurn())]
		res := Parse(tpl, turn, WithIDs(seqIDs))
		if len(res.Errors) != 0 || strings.TrimSpace(res.Content) != "" || len(res.ToolCalls) != 2 {
			t.Fatalf("%s: parsed %q into %+v", name, turn, res)
		}
		for i, c := range res.ToolCalls {
			if c.Name != calls[i].Name || c.Arguments != calls[i].Arguments {
				t.Fatalf("%s: call %d = %+v, want %+v", name, i, c, calls[i])
			}
		}
	}
}
