package runtime

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/pitstop-llm/pitstop/models/chat"
)

// echoModel writes, as its first turn, exactly the text of the last user
// message (so a fuzzer chooses the model's raw output, tool-call markup
// included), and "done" after tool results.
type echoModel struct{ Model }

func (m echoModel) Script(t *Turn) []int32 {
	last := t.Messages[len(t.Messages)-1]
	text := "done"
	if last.Role == chat.RoleUser {
		text = last.Content
	}
	end, _ := m.Tokenizer().TokenID(m.Template().EndOfTurn())
	return append(m.Tokenizer().Encode(text, false), end)
}

// FuzzInterception feeds arbitrary model output through the interception
// path (streaming decode, the template's streaming tool-call parser, the
// pause/finish decision, server-side tools, resume) and checks that every
// call ends cleanly, that the streamed deltas add up to the result, and that
// the engine's block invariants hold.
func FuzzInterception(f *testing.F) {
	seeds := []string{
		"plain answer",
		"<tool_call>\n{\"name\": \"calculator\", \"arguments\": {\"expression\": \"1+2\"}}\n</tool_call>",
		"Let me see.\n<tool_call>\n{\"name\": \"f\", \"arguments\": {\"a\": [1, {\"b\": \"}\"}]}}\n</tool_call>\n<tool_call>\n{\"name\": \"f\", \"arguments\": {}}\n</tool_call>",
		"<tool_call>\n{\"name\": \"calculator\", \"arguments\": {\"expression\": \"1+\"}}\n</tool_call><tool_call>{\"name\": \"f\"}</tool_call>",
		"<tool_call>{\"name\": \"calculator\", \"arguments\": \"{\\\"expression\\\": \\\"2*3\\\"}\"}</tool_call>",
		"<tool_call>{not json}</tool_call> text after",
		"<tool_call>{\"name\": \"f\", \"arguments\": {\"a\": 1}",
		"<tool_ca",
		"héllo wörld \xff\xfe <|im_end|> not special",
		"<tool_call>\n{\"name\": \"calculator\", \"parameters\": {\"expression\": \"(1+2)*3\"}}\n</tool_call>",
	}
	for _, s := range seeds {
		f.Add(s)
	}
	base, err := NewScriptedTestModel()
	if err != nil {
		f.Fatal(err)
	}
	rt, err := New(Config{Model: echoModel{base}, Logger: slog.New(slog.DiscardHandler), MaxToolRounds: 2})
	if err != nil {
		f.Fatal(err)
	}
	defer rt.Close()
	decl := []chat.Tool{{Name: "calculator"}, {Name: "f", Parameters: []byte(`{"type":"object"}`)}}
	f.Fuzz(func(t *testing.T, output string) {
		if len(output) > 4000 {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		c, err := rt.Chat(ctx, ChatRequest{Messages: []chat.Message{{Role: chat.RoleUser, Content: output}}, Tools: decl,
			ParallelToolCalls: true, Stream: true})
		if err != nil {
			var e *Error
			if errors.As(err, &e) && e.Kind == ErrContextLength {
				return
			}
			t.Fatalf("chat: %v", err)
		}
		var content strings.Builder
		var calls []chat.ToolCall
		for {
			ds, err := c.Recv(ctx)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatalf("recv: %v", err)
			}
			for _, d := range ds {
				switch d.Kind {
				case DeltaContent:
					content.WriteString(d.Text)
				case DeltaToolCallStart:
					if d.Index != len(calls) {
						t.Fatalf("tool call index %d after %d calls", d.Index, len(calls))
					}
					calls = append(calls, chat.ToolCall{ID: d.ID, Name: d.Name})
				case DeltaToolCallArgs:
					if d.Index >= len(calls) {
						t.Fatalf("arguments for unknown call %d", d.Index)
					}
					calls[d.Index].Arguments += d.Text
				}
			}
		}
		res, err := c.Wait(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if res.Err != nil && AsError(res.Err).Kind != ErrToolLoop {
			t.Fatalf("call failed: %v", res.Err)
		}
		if !utf8.ValidString(res.Content) {
			t.Fatalf("content is not valid UTF-8: %q", res.Content)
		}
		if content.String() != res.Content {
			t.Fatalf("streamed content %q != result %q", content.String(), res.Content)
		}
		if res.FinishReason == "tool_calls" {
			// Every call returned to the client was streamed, with the same
			// arguments. (A call whose start was streamed and that then
			// turned out malformed is not in the result: its text is
			// content.)
			byID := map[string]chat.ToolCall{}
			for _, sc := range calls {
				byID[sc.ID] = sc
			}
			for _, tc := range res.ToolCalls {
				sc, ok := byID[tc.ID]
				if !ok || sc.Name != tc.Name || sc.Arguments != tc.Arguments {
					t.Fatalf("result call %+v was streamed as %+v", tc, sc)
				}
			}
			if len(res.ToolCalls) == 0 {
				t.Fatal("finish tool_calls without calls")
			}
		} else if len(res.ToolCalls) != 0 {
			t.Fatalf("finish %q with tool calls", res.FinishReason)
		}
		if err := rt.Check(ctx); err != nil {
			t.Fatal(err)
		}
	})
}

// FuzzFitResults: cut tool results always fit the room they were cut for,
// results that fit whole are left as they were, and a cut one says so.
func FuzzFitResults(f *testing.F) {
	f.Add("short", strings.Repeat("long result text ", 200), 300)
	f.Add("héllo \xff <|im_end|>", "", 40)
	f.Add(strings.Repeat("x", 3000), strings.Repeat("y z ", 900), 0)
	rt, err := New(Config{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		f.Fatal(err)
	}
	defer rt.Close()
	f.Fuzz(func(t *testing.T, a, b string, room int) {
		if len(a)+len(b) > 20000 || room < -10 || room > 5000 {
			return
		}
		msgs := []chat.Message{{Role: chat.RoleTool, Content: a, ToolCallID: "c1", Name: "t1"}, {Role: chat.RoleTool, Content: b, ToolCallID: "c2", Name: "t2"}}
		out, kept := rt.fitResults(msgs, room)
		if out == nil {
			return
		}
		if n := len(rt.encodeResults(&Call{}, out)); n > room {
			t.Fatalf("cut results take %d tokens, room %d", n, room)
		}
		for i, k := range kept {
			switch {
			case k < 0 && out[i].Content != msgs[i].Content:
				t.Fatalf("result %d fits whole but changed", i)
			case k >= 0 && !strings.Contains(out[i].Content, "cut by pitstop"):
				t.Fatalf("result %d cut without a note: %q", i, out[i].Content)
			}
		}
	})
}
