package runtime

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/pitstop-llm/pitstop/internal/testutil"
	"github.com/pitstop-llm/pitstop/models/chat"
	"github.com/pitstop-llm/pitstop/predictor"
	"github.com/pitstop-llm/pitstop/runtime/internal/tracetest"
)

func TestConversationOf(t *testing.T) {
	sys := chat.Message{Role: chat.RoleSystem, Content: "you research"}
	task := func(s string) chat.Message { return chat.Message{Role: chat.RoleUser, Content: s} }
	turn := []chat.Message{{Role: chat.RoleAssistant, Content: "searching"}, {Role: chat.RoleTool, Content: "found"}, task("go on")}
	a := conversationOf("", []chat.Message{sys, task("find A")})
	if got := conversationOf("", append([]chat.Message{sys, task("find A")}, turn...)); got != a {
		t.Fatalf("a continuing request of the conversation is %q, its start %q", got, a)
	}
	for _, other := range [][]chat.Message{{sys, task("find B")}, {task("find A")}, {sys, task("find A"), task("and C")}} {
		if conversationOf("", other) == a {
			t.Fatalf("%v opens the same conversation as its sibling", other)
		}
	}
	if conversationOf("s1", []chat.Message{sys, task("find A")}) != "s1" || conversationOf("s1", []chat.Message{task("x")}) != "s1" {
		t.Fatal("a named thread is the conversation, whatever the messages")
	}
}

// researchCall is a subagent's call: its own task opens the conversation;
// after turns, it continues with the model's shell call and its result.
func researchCall(program, task string, turns int) ChatRequest {
	req := shellCall(program, "cat a.txt", "/long 40")
	req.Messages = append([]chat.Message{{Role: chat.RoleSystem, Content: "subagent: " + task}}, req.Messages...)
	for i := range turns {
		id := fmt.Sprintf("c%d", i)
		req.Messages = append(req.Messages,
			chat.Message{Role: chat.RoleAssistant, ToolCalls: []chat.ToolCall{{ID: id, Name: "shell", Arguments: `{"command": "cat a.txt"}`}}},
			chat.Message{Role: chat.RoleTool, ToolCallID: id, Content: "done"})
	}
	return req
}

// A program's parallel subagents, each opening with its own task, keep their
// own length histories: a subagent's start does not wipe its siblings', and
// none reads the others' segments; a subagent that starts over from its own
// opening restarts only its own.
func TestFanoutSubagentsKeepTheirOwnHistories(t *testing.T) {
	lp := &fixedLength{n: 5}
	sink := &testutil.LockedBuffer{}
	rt := newTestRuntime(t, Config{Tools: shellTools(), Length: lp, Trace: sink})
	for _, req := range []ChatRequest{
		researchCall("lead", "plan", 0),   // segments 0, 1: the lead's plan
		researchCall("lead", "find A", 0), // 2, 3: subagent A opens
		researchCall("lead", "find B", 0), // 4, 5: B opens
		researchCall("lead", "find A", 1), // 6: A continues
		researchCall("lead", "find B", 1), // 7: B continues
		researchCall("lead", "find A", 0), // 8, 9: A starts over
		researchCall("lead", "find B", 2), // 10: B continues
	} {
		if _, err := rt.ChatSync(context.Background(), req); err != nil {
			t.Fatal(err)
		}
	}
	lp.mu.Lock()
	ins := append([]predictor.Input(nil), lp.in...)
	lp.mu.Unlock()
	want := []int{0, 1, 0, 1, 0, 1, 2, 2, 0, 1, 3} // each segment's history: its own conversation's
	if len(ins) != len(want) {
		t.Fatalf("%d predictions, want %d", len(ins), len(want))
	}
	for i, in := range ins {
		if in.History.Calls != want[i] {
			t.Fatalf("segment %d read a history of %d segments, want %d (its own conversation's)", i, in.History.Calls, want[i])
		}
	}
	recs := tracetest.Records(t, sink, len(want))
	threads := map[string]bool{}
	for _, r := range recs {
		threads[r.Thread] = true
		if r.Thread == "" {
			t.Fatalf("record %d names no thread", r.Segment)
		}
	}
	if len(threads) != 3 {
		t.Fatalf("%d threads in the trace, want 3 (the lead, A, B)", len(threads))
	}
}

// A program row keeps at most maxConversations conversations, forgetting
// the least recently used.
func TestProgramForgetsItsOldestConversation(t *testing.T) {
	tab := newProgramTable(time.Hour, time.Minute)
	tab.arrive("k", "p", "", "", false, time.Unix(1000, 0))
	tab.segment("k", "first", 9, "", 9, false)
	for i := range maxConversations - 1 {
		tab.segment("k", fmt.Sprint(i), 1, "", 1, false)
	}
	if h, _ := tab.history("k", "first", false); h.Calls != 1 {
		t.Fatalf("first conversation: %d segments, want 1 (the row is full, nothing forgotten yet)", h.Calls)
	}
	tab.segment("k", "one more", 1, "", 1, false)
	if h, _ := tab.history("k", "0", false); h.Calls != 0 {
		t.Fatal("the least recently used conversation was kept past the bound")
	}
	if h, _ := tab.history("k", "first", false); h.Calls != 1 {
		t.Fatal("a conversation read recently was forgotten")
	}
	if n := len(tab.rows["k"].convs); n != maxConversations {
		t.Fatalf("%d conversations kept, want %d", n, maxConversations)
	}
}
