package runtime

import (
	"fmt"
	"testing"
	"time"

	"github.com/pitstop-llm/pitstop/models/chat"
)

// agentHistory is an agent's full conversation after steps tool calls: the
// system and user messages, then per step the model's tool call and the
// tool's answer.
func agentHistory(steps int) []chat.Message {
	msgs := []chat.Message{{Role: chat.RoleSystem, Content: "you are an agent"}, {Role: chat.RoleUser, Content: "fix the bug"}}
	for i := 1; i <= steps; i++ {
		id := fmt.Sprintf("c%d", i)
		msgs = append(msgs,
			chat.Message{Role: chat.RoleAssistant, ToolCalls: []chat.ToolCall{{ID: id, Name: "shell", Arguments: fmt.Sprintf(`{"command": "step %d"}`, i)}}},
			chat.Message{Role: chat.RoleTool, ToolCallID: id, Content: fmt.Sprintf("output %d", i)})
	}
	return msgs
}

// retryOf books the request's messages in the table's program "k", as a
// call does (conversationOf, then retries), and says whether it is a retry.
func retryOf(tab *programTable, msgs []chat.Message) bool {
	return tab.retries("k", conversationOf("", msgs), turnPrefixes(msgs))
}

func newRetryTable() *programTable {
	tab := newProgramTable(time.Hour, time.Minute)
	tab.arrive("k", "p", "", "", false, time.Unix(1000, 0))
	return tab
}

// A client that keeps the system message and its last n messages sends
// requests whose turn count stops growing once the window fills, and whose
// opening (a window starting with the model's or a tool's message) is the
// system message alone, one conversation: each request still moves on in
// its history, so none is a retry.
func TestSlidingWindowClientIsNoRetry(t *testing.T) {
	const window = 6
	tab := newRetryTable()
	for step := range 20 {
		full := agentHistory(step)
		msgs := full
		if rest := full[1:]; len(rest) > window {
			msgs = append([]chat.Message{full[0]}, rest[len(rest)-window:]...)
		}
		if retryOf(tab, msgs) {
			t.Fatalf("request %d (%d turns in a window of %d messages) flagged a retry", step, modelTurns(msgs), window)
		}
	}
}

// A client that compacts its history, replacing the turns after the first
// with a summary, sends fewer turns than before over the same opening; it
// goes on from where it was, so it is no retry, nor are the requests after.
func TestCompactedHistoryIsNoRetry(t *testing.T) {
	tab := newRetryTable()
	for step := range 9 {
		if retryOf(tab, agentHistory(step)) {
			t.Fatalf("request %d flagged a retry", step)
		}
	}
	full := agentHistory(12)
	compacted := append(append([]chat.Message{}, full[:4]...), chat.Message{Role: chat.RoleUser, Content: "summary of steps 2 to 8"})
	compacted = append(compacted, full[18:20]...) // step 9's call and answer
	for i := range 3 {
		msgs := append(append([]chat.Message{}, compacted...), full[20:20+2*i]...)
		if retryOf(tab, msgs) {
			t.Fatalf("compacted request %d (%d turns) flagged a retry", i, modelTurns(msgs))
		}
	}
	// Replaced whole by a summary: a new opening, a new conversation.
	summary := []chat.Message{full[0], {Role: chat.RoleUser, Content: "summary of steps 1 to 12"}}
	if retryOf(tab, append(summary, full[24:26]...)) {
		t.Fatal("a history replaced by a summary flagged a retry")
	}
}

// A tree search going back to an earlier node of the same history resends
// its messages up to that node's turn: a retry, whether it then tries the
// same continuation again or another one.
func TestTreeSearchBackToAnEarlierTurnIsARetry(t *testing.T) {
	tab := newRetryTable()
	for step := range 4 {
		if retryOf(tab, agentHistory(step)) {
			t.Fatalf("request %d flagged a retry", step)
		}
	}
	back := agentHistory(2)
	if !retryOf(tab, back) {
		t.Fatal("going back to turn 2 of the same history is no retry")
	}
	if !retryOf(tab, agentHistory(2)) {
		t.Fatal("the same node tried again is no retry")
	}
	other := agentHistory(2)
	other[len(other)-1].Content = "another answer"
	if !retryOf(tab, other) {
		t.Fatal("turn 2 with another tool answer is no retry")
	}
	if retryOf(tab, agentHistory(3)) {
		t.Fatal("going on from turn 2 flagged a retry")
	}
}
