package chat

import (
	"strings"
	"testing"
)

func mistralP() ToolCallParser {
	return NewMistralParser(WithIDs(seqIDs), WithProvenance(TextProvenance()))
}

var mistralCases = []parserCase{
	{"text only", "Paris is sunny.", []Event{text("Paris is sunny.")}},
	{"one call, array", `[TOOL_CALLS][{"name": "get_weather", "arguments": {"city": "Paris"}}]`,
		call(0, "get_weather", `{"city": "Paris"}`)},
	{"parallel calls, array", `[TOOL_CALLS] [{"name": "a", "arguments": {"x": 1}}, {"name": "b", "arguments": {}}]`,
		cat(call(0, "a", `{"x": 1}`), call(1, "b", "{}"))},
	{"text then calls", `Let me check.[TOOL_CALLS][{"name": "a", "arguments": {}}]`,
		cat(text("Let me check."), call(0, "a", "{}"))},
	{"v11 calls", `[TOOL_CALLS]get_weather[ARGS]{"city": "Paris"}[TOOL_CALLS]get_time[ARGS]{"tz": "UTC"}`,
		cat(call(0, "get_weather", `{"city": "Paris"}`), call(1, "get_time", `{"tz": "UTC"}`))},
	{"text after the array", `[TOOL_CALLS][{"name": "a", "arguments": {}}] done`, cat(call(0, "a", "{}"), text(" done"))},
	{"not json", `[TOOL_CALLS][oops]`, cat(Event{Kind: EventError, Index: -1, Err: "expected a JSON object"}, text("oops]"))},
	{"truncated", `[TOOL_CALLS][{"name": "a", "arguments": {"x"`,
		cat(ev(EventToolCallStart, 0, "a"), ev(EventToolCallArgs, 0, `{"x"`), Event{Kind: EventError, Index: 0, Err: "unterminated"})},
	{"name without args", `[TOOL_CALLS]get_weather`, cat(Event{Kind: EventError, Index: -1, Err: "no [ARGS]"})},
}

func TestMistralParser(t *testing.T) { runParserCases(t, mistralP, mistralCases) }

// TestMistralProvenance: by default only the marker token opens calls;
// text that spells it is content.
func TestMistralProvenance(t *testing.T) {
	p := NewMistralParser(WithIDs(seqIDs))
	out := `[TOOL_CALLS][{"name": "a", "arguments": {}}]`
	r := Summarize(append(p.Feed(out, false), p.Close()...))
	if len(r.ToolCalls) != 0 || r.Content != out {
		t.Fatalf("spelled marker: %+v", r)
	}
	p = NewMistralParser(WithIDs(seqIDs))
	ev := p.Feed("[TOOL_CALLS]", true)
	ev = append(ev, p.Feed(`[{"name": "a", "arguments": {"k": "v"}}]`, false)...)
	r = Summarize(append(ev, p.Close()...))
	if len(r.ToolCalls) != 1 || r.ToolCalls[0].Arguments != `{"k": "v"}` || strings.TrimSpace(r.Content) != "" {
		t.Fatalf("marker token: %+v", r)
	}
}
