package runtime

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/pitstop-llm/pitstop/internal/testutil"
	"github.com/pitstop-llm/pitstop/models/chat"
	"github.com/pitstop-llm/pitstop/predictor"
	"github.com/pitstop-llm/pitstop/runtime/internal/tracetest"
)

// searchAt is a search's request at depth turns of its main branch: the
// opening, then per step the model's call and the tool's answer.
func searchAt(turns int) ChatRequest {
	req := shellCall("s", "cat a.txt", "/say ok")
	for i := 1; i <= turns; i++ {
		id := fmt.Sprintf("c%d", i)
		req.Messages = append(req.Messages,
			chat.Message{Role: chat.RoleAssistant, ToolCalls: []chat.ToolCall{{ID: id, Name: "shell", Arguments: fmt.Sprintf(`{"command": "step %d"}`, i)}}},
			chat.Message{Role: chat.RoleTool, ToolCallID: id, Content: fmt.Sprintf("output %d", i)})
	}
	return req
}

// The edges of what serve calls a retry, decided by its rule (a request
// that goes back along the very history its conversation's previous
// request carried, at most predictor.MaxRetryBack turns back) and kept by
// the replay: going back 63 turns is a retry, 64 is not (the turn prefixes
// a conversation keeps are a memory bound; booked as a continuation, as
// before retries were told apart); a client that trims its history and
// goes back is no retry (its request does not carry the history it goes
// back along, so nothing tells it from a trimmed loop that repeats a
// step). The trace records serve's flags and the replay (ReadTraces, then
// DeriveRetries again) neither adds nor drops one: a runtime trace's
// histories grow with every segment, so only the recorded flag counts.
func TestRetryEdgesServeAndReplayAgree(t *testing.T) {
	lp := &fixedLength{n: 5}
	sink := &testutil.LockedBuffer{}
	rt := newTestRuntime(t, Config{Tools: shellTools(), Length: lp, Trace: sink})
	back := predictor.MaxRetryBack
	deep := back + 6
	trimmed := searchAt(6)
	trimmed.Messages = append(trimmed.Messages[:1:1], trimmed.Messages[len(trimmed.Messages)-4:]...) // the opening and the last 2 steps
	reqs := []ChatRequest{
		searchAt(0),               // segments 0, 1: the opening
		searchAt(deep),            // 2: continues
		searchAt(deep - back),     // 3: back 64 turns: no retry
		searchAt(deep),            // 4: more turns than the last: continues
		searchAt(deep - back + 1), // 5: back 63 turns: a retry
		trimmed,                   // 6: trimmed, back 1 turn: no retry
		searchAt(6),               // 7: more turns than the trimmed one: continues
		searchAt(6),               // 8: the same point again: a retry
	}
	want := []bool{false, false, false, false, false, true, false, false, true}
	for _, req := range reqs {
		if _, err := rt.ChatSync(context.Background(), req); err != nil {
			t.Fatal(err)
		}
	}
	seen := lp.retries()
	if !slices.Equal(seen, want) {
		t.Fatalf("retries serve predicted with %v, want %v", seen, want)
	}
	recs := tracetest.Records(t, sink, len(want))
	slices.SortFunc(recs, func(a, b predictor.TraceRecord) int { return a.Segment - b.Segment })
	replayed := slices.Clone(recs)
	predictor.DeriveRetries(replayed)
	cleared := slices.Clone(recs)
	for i := range cleared {
		cleared[i].Input.Retry = false
	}
	predictor.DeriveRetries(cleared)
	for i := range recs {
		if recs[i].Input.Retry != want[i] || replayed[i].Input.Retry != want[i] {
			t.Fatalf("segment %d: the trace says retry %v, the replay %v; serve said %v", recs[i].Segment, recs[i].Input.Retry, replayed[i].Input.Retry, want[i])
		}
		if cleared[i].Input.Retry {
			t.Fatalf("segment %d: the replay derived a retry from a runtime trace's histories", recs[i].Segment)
		}
	}
}
