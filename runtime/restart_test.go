package runtime

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/pitstop-llm/pitstop/internal/testutil"
	"github.com/pitstop-llm/pitstop/models/chat"
	"github.com/pitstop-llm/pitstop/predictor"
	"github.com/pitstop-llm/pitstop/runtime/internal/tracetest"
)

func TestStartsOver(t *testing.T) {
	for _, c := range []struct {
		roles []string
		want  bool
	}{
		{[]string{chat.RoleUser}, true},
		{[]string{chat.RoleSystem, chat.RoleUser}, true},
		{[]string{chat.RoleSystem, chat.RoleUser, chat.RoleUser}, true},
		{nil, true},
		{[]string{chat.RoleSystem, chat.RoleUser, chat.RoleAssistant, chat.RoleUser}, false},
		{[]string{chat.RoleUser, chat.RoleAssistant, chat.RoleTool}, false},
		{[]string{chat.RoleUser, chat.RoleTool}, false},
	} {
		msgs := make([]chat.Message, len(c.roles))
		for i, r := range c.roles {
			msgs[i].Role = r
		}
		if got := startsOver(msgs); got != c.want {
			t.Errorf("startsOver(%v) = %v, want %v", c.roles, got, c.want)
		}
	}
}

// continuedShellCall is shellCall's conversation after the shell call ran
// on the client: it carries the model's turn, so it continues the program.
func continuedShellCall(program, command, say string) ChatRequest {
	req := shellCall(program, command, say)
	req.Messages = append(req.Messages,
		chat.Message{Role: chat.RoleAssistant, ToolCalls: []chat.ToolCall{{ID: "c1", Name: "shell", Arguments: fmt.Sprintf("{\"command\": %q}", command)}}},
		chat.Message{Role: chat.RoleTool, ToolCallID: "c1", Content: "done"})
	return req
}

// A known program's request whose conversation starts over gets the first
// segment's prediction (the model's point, no program blend) and an empty
// history; a request that continues the conversation keeps both.
func TestRestartStartsTheProgramsLengthHistoryAfresh(t *testing.T) {
	lp := &fixedLength{n: 5}
	sink := &testutil.LockedBuffer{}
	rt := newTestRuntime(t, Config{Tools: shellTools(), Length: lp, Trace: sink})
	ctx := context.Background()
	for _, req := range []ChatRequest{
		shellCall("p", "cat a.txt", "/long 40"),          // segments 0, 1
		continuedShellCall("p", "cat a.txt", "/long 40"), // segment 2
		shellCall("p", "cat a.txt", "/long 40"),          // starts over: segments 3, 4
	} {
		if _, err := rt.ChatSync(ctx, req); err != nil {
			t.Fatal(err)
		}
	}
	lp.mu.Lock()
	ins := append([]predictor.Input(nil), lp.in...)
	lp.mu.Unlock()
	if len(ins) != 5 {
		t.Fatalf("%d predictions, want 5", len(ins))
	}
	if ins[2].History.Calls != 2 || ins[3].History.Calls != 0 || ins[4].History.Calls != 1 {
		t.Fatalf("histories seen: %d, %d, %d calls; want 2 (continuing), 0 (starting over), 1",
			ins[2].History.Calls, ins[3].History.Calls, ins[4].History.Calls)
	}
	recs := tracetest.Records(t, sink, 5)
	bySeg := map[int]predictor.TraceRecord{}
	for _, r := range recs {
		bySeg[r.Segment] = r
	}
	if len(bySeg) != 5 {
		t.Fatalf("segments %v, want 0 to 4: the index counts on across a restart", bySeg)
	}
	if r := bySeg[2]; r.PredictedTokens == 5 {
		t.Fatal("the continuing request was predicted as a first segment (the model's 5), not blended with its program")
	}
	if r := bySeg[3]; r.PredictedTokens != 5 || !predictor.Restarts(r) {
		t.Fatalf("the restart: predicted %d (want the model's 5, a first segment), restarts %v", r.PredictedTokens, predictor.Restarts(r))
	}
	for _, s := range []int{0, 1, 2, 4} {
		if predictor.Restarts(bySeg[s]) {
			t.Fatalf("segment %d reads as a restart", s)
		}
	}
	info, _ := rt.programs.get(programKey("", "p"))
	if info.Calls != 3 {
		t.Fatalf("program calls %d, want 3: a restart is the same program", info.Calls)
	}
}

// A restart clears only the length predictor's view: the row's tenant,
// counters, attained service and segment index stay the program's.
func TestProgramRestartKeepsTheProgram(t *testing.T) {
	tab := newProgramTable(time.Hour, time.Minute)
	now := time.Unix(1000, 0)
	tab.arrive("k", "p", "acme", "", false, now)
	tab.segment("k", "c", 30, "shell", 20, false)
	tab.segment("k", "c", 50, "", 20, false)
	tab.engineStats("k", 2*time.Second, time.Second, 2*time.Second)
	if h, b := tab.history("k", "c", false); h.Calls != 2 || b.Segments != 2 {
		t.Fatalf("continuing: %d calls, %d blended segments; want 2, 2", h.Calls, b.Segments)
	}
	if h, b := tab.history("k", "c", true); h.Calls != 0 || b.Segments != 0 || b.LastTool != "" {
		t.Fatalf("starting over: %+v, %+v; want empty", h, b)
	}
	if idx := tab.segment("k", "c", 7, "", 20, false); idx != 2 {
		t.Fatalf("segment index after the restart %d, want 2", idx)
	}
	if h, b := tab.history("k", "c", false); h.Calls != 1 || h.MeanOutputTokens != 7 || b.Mean() != 7 {
		t.Fatalf("after the restart's segment: %+v, mean %v; want its 7 only", h, b.Mean())
	}
	info, _ := tab.get("k")
	if info.Tenant != "acme" || info.Calls != 1 || info.ServiceS != 2 {
		t.Fatalf("row %+v: tenant, calls and service must stay", info)
	}
	if h, _ := tab.history("unknown", "c", true); h.Calls != 0 || tab.len() != 1 {
		t.Fatal("an unknown program's restart made a row")
	}
}

// Calls of one program that start over and continue at once (the race
// detector checks the table).
func TestConcurrentRestartsOfOneProgram(t *testing.T) {
	rt := newTestRuntime(t, Config{Tools: shellTools(), Length: &fixedLength{n: 5}})
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for i := range 16 {
		wg.Go(func() {
			req := shellCall("p", "ls", "/say ok")
			if i%2 == 1 {
				req = continuedShellCall("p", "ls", "/say ok")
			}
			if _, err := rt.ChatSync(context.Background(), req); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if info, _ := rt.programs.get(programKey("", "p")); info.Calls != 16 || info.Active != 0 {
		t.Fatalf("program row %+v, want 16 calls, none active", info)
	}
}

// A routed call (Config.Remote) restarts the program's history the same
// way: its decode estimate for the balancer reads that history.
func TestRemoteCallRestartsTheProgramsHistory(t *testing.T) {
	rt, g := newGatedRuntime(t)
	close(g.gate)
	first := gatedRequest(false)
	first.Program = "p"
	continued := first
	continued.Messages = append(slices.Clone(first.Messages),
		chat.Message{Role: chat.RoleAssistant, Content: "ok done"}, chat.Message{Role: chat.RoleUser, Content: "again"})
	key := programKey("", "p")
	for i, c := range []struct {
		req   ChatRequest
		calls int // the program's history after the call
	}{{first, 1}, {continued, 2}, {first, 1}} {
		if _, err := rt.ChatSync(context.Background(), c.req); err != nil {
			t.Fatal(err)
		}
		if h, _ := rt.programs.history(key, conversationOf("", first.Messages), false); h.Calls != c.calls {
			t.Fatalf("after call %d the history holds %d segments, want %d", i+1, h.Calls, c.calls)
		}
	}
}
