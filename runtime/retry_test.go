package runtime

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/pitstop-llm/pitstop/internal/testutil"
	"github.com/pitstop-llm/pitstop/models/chat"
	"github.com/pitstop-llm/pitstop/predictor"
	"github.com/pitstop-llm/pitstop/runtime/internal/tracetest"
)

// A request that carries no more of the model's turns than its
// conversation's previous request did goes back in the conversation (a
// search trying another branch): its first segment is a retry, for the
// length predictor and in the trace, and the conversation's blend books it
// apart from the continuations. Continuing, or starting over, is not.
func TestRetryIsTheFirstSegmentOfARequestBackInItsConversation(t *testing.T) {
	lp := &fixedLength{n: 5}
	sink := &testutil.LockedBuffer{}
	rt := newTestRuntime(t, Config{Tools: shellTools(), Length: lp, Trace: sink})
	deeper := continuedShellCall("p", "cat a.txt", "/say ok")
	deeper.Messages = append(deeper.Messages,
		chat.Message{Role: chat.RoleAssistant, ToolCalls: []chat.ToolCall{{ID: "c2", Name: "shell", Arguments: `{"command": "ls"}`}}},
		chat.Message{Role: chat.RoleTool, ToolCallID: "c2", Content: "a.txt"})
	for _, req := range []ChatRequest{
		shellCall("p", "cat a.txt", "/say ok"),          // segments 0, 1: 0 turns (the opening)
		continuedShellCall("p", "cat a.txt", "/say ok"), // 2: 1 turn, continues
		continuedShellCall("p", "cat a.txt", "/say ok"), // 3: 1 turn again: a retry
		deeper,                                 // 4: 2 turns, continues
		shellCall("p", "cat a.txt", "/say ok"), // 5, 6: starts over, no retry
	} {
		if _, err := rt.ChatSync(context.Background(), req); err != nil {
			t.Fatal(err)
		}
	}
	seen := lp.retries()
	want := []bool{false, false, false, true, false, false, false}
	if !slices.Equal(seen, want) {
		t.Fatalf("retries the length predictor saw %v, want %v", seen, want)
	}
	recs := tracetest.Records(t, sink, 7)
	slices.SortFunc(recs, func(a, b predictor.TraceRecord) int { return a.Segment - b.Segment })
	for i, r := range recs {
		if r.Input.Retry != want[i] {
			t.Fatalf("segment %d's trace record says retry %v, want %v", r.Segment, r.Input.Retry, want[i])
		}
	}
	// The table's blend (before the restart cleared it) kept the retry
	// apart: replayed from the trace, the retry's class holds it alone.
	b := predictor.ProgramBlend{}
	for _, r := range recs[:5] {
		b = b.Next(r.Input).Observe(5, r.PreToolOutputTokens, r.Tool)
	}
	if m := b.Next(predictor.Input{Retry: true}).Mean(); m != float64(recs[3].PreToolOutputTokens) {
		t.Fatalf("the replayed retry class's mean %v, want the retry's %d", m, recs[3].PreToolOutputTokens)
	}
}

// The table says retry only for a known conversation whose request carries
// some turns, no more than its previous request did, of the same history.
func TestProgramTableRetries(t *testing.T) {
	tab := newProgramTable(time.Hour, time.Minute)
	tab.arrive("k", "p", "", "", false, time.Unix(1000, 0))
	for _, c := range []struct {
		conv  string
		turns int
		want  bool
	}{{"a", 0, false}, {"a", 1, false}, {"a", 3, false}, {"a", 3, true}, {"a", 2, true}, {"b", 2, false}, {"a", 0, false}, {"a", 1, false}} {
		if got := tab.retries("k", c.conv, turnPrefixes(agentHistory(c.turns))); got != c.want {
			t.Fatalf("conversation %s, %d turns: retry %v, want %v", c.conv, c.turns, got, c.want)
		}
	}
	if tab.retries("unknown", "a", turnPrefixes(agentHistory(5))) {
		t.Fatal("a retry for an unknown program")
	}
}

// A conversation keeps its latest request's last maxTurnPrefixes turn
// prefixes, no more: going back within them is a retry, going back further
// is not told apart from a trimmed history.
func TestRetriesKeepTheLastTurnPrefixesOnly(t *testing.T) {
	const turns = maxTurnPrefixes + 36
	tab := newRetryTable()
	if retryOf(tab, agentHistory(turns)) {
		t.Fatal("the first request flagged a retry")
	}
	c := tab.rows["k"].conversation(conversationOf("", agentHistory(1)))
	if len(c.prefixes) != maxTurnPrefixes || c.turns != turns {
		t.Fatalf("the conversation keeps %d prefixes of %d turns, want %d of %d", len(c.prefixes), c.turns, maxTurnPrefixes, turns)
	}
	if !retryOf(tab, agentHistory(turns)) {
		t.Fatal("back within the kept prefixes: no retry")
	}
	if !retryOf(tab, agentHistory(turns-maxTurnPrefixes+1)) {
		t.Fatal("back to the oldest kept prefix: no retry")
	}
	tab = newRetryTable()
	retryOf(tab, agentHistory(turns))
	if retryOf(tab, agentHistory(turns-maxTurnPrefixes)) {
		t.Fatal("back past the kept prefixes flagged a retry")
	}
}
