package runtime

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/pitstop-llm/pitstop/internal/testutil"
	"github.com/pitstop-llm/pitstop/models/chat"
	"github.com/pitstop-llm/pitstop/predictor"
	"github.com/pitstop-llm/pitstop/runtime/internal/tracetest"
	"github.com/pitstop-llm/pitstop/tools"
)

// shellTools is a registry with a server-side shell tool that answers "done".
func shellTools() *tools.Registry {
	reg := tools.NewRegistry()
	reg.MustRegister(&tools.Tool{Name: "shell", Handler: func(context.Context, json.RawMessage) (string, error) { return "done", nil }})
	return reg
}

// shellCall asks the scripted model to run command, then answer with say
// (a "/say" or "/long" directive).
func shellCall(program, command, say string) ChatRequest {
	return ChatRequest{Program: program, Tools: []chat.Tool{{Name: "shell"}},
		Messages: []chat.Message{{Role: "user", Content: fmt.Sprintf("/call shell {\"command\": %q}\n%s", command, say)}}}
}

// A segment's length prediction knows the argument class of the call whose
// result it reads, never that of its own call; the trace records the class,
// never the arguments.
func TestSegmentsKnowTheClassOfTheCallTheyRead(t *testing.T) {
	lp := &fixedLength{n: 20}
	sink := &testutil.LockedBuffer{}
	rt := newTestRuntime(t, Config{Tools: shellTools(), Length: lp, Trace: sink})
	if _, err := rt.ChatSync(context.Background(), shellCall("p", "cd /repo && make all", "/say ok")); err != nil {
		t.Fatal(err)
	}
	lp.mu.Lock()
	ins := slices.Clone(lp.in)
	lp.mu.Unlock()
	if len(ins) != 2 {
		t.Fatalf("%d predictions, want 2", len(ins))
	}
	if ins[0].LastToolClass != "" || ins[1].LastToolClass != "prog:make" || ins[1].LastTool != "shell" {
		t.Fatalf("classes seen by the predictor: %q then %q (last tool %q); want none for the segment that makes the call, prog:make for the one that reads its result",
			ins[0].LastToolClass, ins[1].LastToolClass, ins[1].LastTool)
	}
	recs := tracetest.Records(t, sink, 2)
	if recs[0].Input.LastToolClass != "" || recs[1].Input.LastToolClass != "prog:make" {
		t.Fatalf("trace classes %q, %q", recs[0].Input.LastToolClass, recs[1].Input.LastToolClass)
	}
	if recs[0].ToolArgs != "" || strings.Contains(sink.String(), `"tool_args"`) {
		t.Fatal("the trace holds the call's arguments")
	}
}

// What serve predicts is what `pitstop predictor eval --online` replays
// (predictor.ServedPoints over the trace serve wrote): the same points,
// segment by segment, including where the window mode by the argument
// class has ordered the segments better than the mixture and is chosen,
// where a program's conversation continues or starts over (the runtime
// restarts the conversation's history and blend; the replay reads the
// restart from the record), and where a program fans out into subagents,
// interleaved, each with its own history and blend (the record names its
// conversation, which the replay keys the blend by).
func TestServePredictsWhatEvalReplays(t *testing.T) {
	info, err := predictor.ParseONNX(predictor.DefaultModelBytes())
	if err != nil {
		t.Fatal(err)
	}
	model := predictor.GoClassifier{MLP: info.MLP, OverflowTokens: info.OverflowTokens}
	sink := &testutil.LockedBuffer{}
	rt := newTestRuntime(t, Config{Tools: shellTools(), Length: model, Trace: sink})
	const programs = 40
	// Fan-outs first (before the window mode is chosen, which would
	// hide the blends): a lead's plan, then subagents that open with their
	// own tasks and continue, interleaved, under the lead's program id.
	const fanouts, subagents, turns = 6, 3, 4
	for i := range fanouts {
		id := fmt.Sprintf("f%02d", i) // before the p programs in the sort below
		reqs := []ChatRequest{researchCall(id, "plan", 0)}
		for turn := range turns {
			for s := range subagents {
				req := researchCall(id, fmt.Sprintf("find %d", s), turn)
				// Each subagent answers at its own length, so a
				// sibling's blend predicts it wrongly.
				say := []string{"/long 40", "/say ok", "/long 12"}[s]
				req.Messages[1].Content = strings.Replace(req.Messages[1].Content, "/long 40", say, 1)
				reqs = append(reqs, req)
			}
		}
		for _, r := range reqs {
			if _, err := rt.ChatSync(context.Background(), r); err != nil {
				t.Fatal(err)
			}
		}
	}
	// Searches that go back in their conversation (the same request
	// again: another branch at the same point), twice each, so that a
	// retry is blended with the conversation's earlier retry.
	const searches, searchRecords = 6, 5
	for i := range searches {
		id := fmt.Sprintf("g%02d", i) // after the fan-outs, before the p programs
		say := []string{"/long 40", "/say ok"}[i%2]
		for _, r := range []ChatRequest{shellCall(id, "cat a.txt", say), continuedShellCall(id, "cat a.txt", say),
			continuedShellCall(id, "cat a.txt", say), continuedShellCall(id, "cat a.txt", say)} {
			if _, err := rt.ChatSync(context.Background(), r); err != nil {
				t.Fatal(err)
			}
		}
	}
	for i := range programs {
		// After cat the answer is long, after ls short; the ls command is
		// the longer call, so the program's history orders them backwards.
		cmd, say := "cat a.txt", "/long 40"
		if i%2 == 1 {
			cmd, say = "ls -la /srv/data/archive/2026/november/reports", "/say ok"
		}
		req := shellCall(fmt.Sprintf("p%02d", i), cmd, say)
		if _, err := rt.ChatSync(context.Background(), req); err != nil {
			t.Fatal(err)
		}
		if i%4 < 2 {
			continue
		}
		// Half the programs continue the conversation, then start it
		// over from its opening (a search back at its root) or open
		// another with the other command (so its own segments differ
		// from what the program showed before).
		next := shellCall(req.Program, cmd, say)
		if (i/4)%2 == 1 {
			next = shellCall(req.Program, "cat a.txt", "/long 40")
			if i%2 == 0 {
				next = shellCall(req.Program, "ls -la /srv/data/archive/2026/november/reports", "/say ok")
			}
		}
		for _, r := range []ChatRequest{continuedShellCall(req.Program, cmd, say), next} {
			if _, err := rt.ChatSync(context.Background(), r); err != nil {
				t.Fatal(err)
			}
		}
	}
	recs := tracetest.Records(t, sink, 2*programs+3*programs/2+fanouts*(2+subagents*(turns+1))+searches*searchRecords)
	// Each call's records are written together, calls in any order (a
	// call's trace may reach the sink after the next call's, under load):
	// put them in the order they ran, by program and then by segment, which
	// counts on across a program's calls and its restarts.
	slices.SortStableFunc(recs, func(a, b predictor.TraceRecord) int {
		if c := strings.Compare(a.Program, b.Program); c != 0 {
			return c
		}
		return a.Segment - b.Segment
	})
	pred := make([]int, len(recs))
	probs := make([][]float32, len(recs))
	for i, r := range recs {
		pred[i], probs[i] = model.PredictLength(r.Input)
	}
	mixed, _, served := predictor.ServedPoints(pred, probs, predictor.DefaultOverflowTokens, recs, -1)
	modeUsed, restarts, retried := 0, 0, 0
	for i, r := range recs {
		if predictor.Restarts(r) {
			restarts++
		}
		if r.Input.Retry {
			retried++
		}
		if want := max(served[i], 1); r.PredictedTokens != want {
			t.Fatalf("record %d (%s segment %d): serve predicted %d, the replay %d", i, r.Program, r.Segment, r.PredictedTokens, want)
		}
		if served[i] != mixed[i] {
			modeUsed++
		}
	}
	if restarts != programs/2+fanouts*subagents {
		t.Fatalf("%d records start a conversation over or open a subagent's, want %d", restarts, programs/2+fanouts*subagents)
	}
	if retried != 2*searches {
		t.Fatalf("%d records are retries, want %d", retried, 2*searches)
	}
	if modeUsed == 0 {
		t.Fatal("the window mode was never chosen: the test does not reach the order-led step")
	}
	// Without the conversations, the subagents' blends pool: the replay
	// then predicts otherwise, so the check above covers the threads.
	pooled := slices.Clone(recs)
	for i := range pooled {
		pooled[i].Thread = ""
	}
	if _, _, other := predictor.ServedPoints(pred, probs, predictor.DefaultOverflowTokens, pooled, -1); slices.Equal(other, served) {
		t.Fatal("the replay predicts the same without the records' threads: the test does not reach the per-conversation blend")
	}
	// Without the retries, they blend with the continuations: the replay
	// then predicts otherwise, so the check above covers the retries.
	continuing := slices.Clone(recs)
	for i := range continuing {
		continuing[i].Input.Retry = false
	}
	if _, _, other := predictor.ServedPoints(pred, probs, predictor.DefaultOverflowTokens, continuing, -1); slices.Equal(other, served) {
		t.Fatal("the replay predicts the same without the records' retries: the test does not reach the retries' blend")
	}
	if !rt.length.led.ModeChosen() {
		t.Fatal("the runtime's choice is not the mode at the end, the replay's was")
	}
}

// modePredictions are what led predicts for a few segments after shell
// calls of several classes.
func modePredictions(led *predictor.ModeLed) []int {
	var out []int
	for _, class := range []string{"", "prog:cat", "prog:ls", "prog:make"} {
		in := predictor.Input{LastTool: "shell", LastToolClass: class, LastMessage: "done", History: predictor.History{Calls: 1, LastOutputTokens: 30}}
		p, mode := led.Predict(in, 1000)
		out = append(out, p, mode)
	}
	return out
}

// The window modes and the choice by order are kept under the state
// directory with the mixture: saved at Close (without online learning) or
// by the learner, restored at start either way.
func TestWindowModesKeptAcrossRestarts(t *testing.T) {
	needORT(t)
	dir := t.TempDir()
	l := onnxLength(t)
	if err := l.KeepMixture(dir, nil); err != nil {
		t.Fatal(err)
	}
	rt := newTestRuntime(t, Config{Tools: shellTools(), Length: l})
	for i := range 6 {
		req := shellCall(fmt.Sprintf("k%d", i), "cat a.txt", "/long 30")
		if i%2 == 1 {
			req = shellCall(fmt.Sprintf("k%d", i), "ls", "/say ok")
		}
		if _, err := rt.ChatSync(context.Background(), req); err != nil {
			t.Fatal(err)
		}
	}
	before := modePredictions(l.modeLed())
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, predictor.ModeLedStateFile)); err != nil {
		t.Fatalf("no window modes saved at Close: %v", err)
	}
	fresh := onnxLength(t)
	defer fresh.Close()
	if slices.Equal(modePredictions(fresh.modeLed()), before) {
		t.Fatal("fresh window modes predict as the learnt ones: the test cannot tell a restore from none")
	}
	again := onnxLength(t)
	if err := again.KeepMixture(dir, nil); err != nil {
		t.Fatal(err)
	}
	if got := modePredictions(again.modeLed()); !slices.Equal(got, before) {
		t.Fatalf("after a restart the window modes predict %v, before %v", got, before)
	}
	if rt2 := newTestRuntime(t, Config{Length: again}); rt2.length.led != again.led {
		t.Fatal("the restarted runtime predicts with other window modes than the restored ones")
	}
	again.Close()

	learning := onnxLength(t)
	if err := learning.LearnOnline(dir, predictor.OnlineOptions{}, nil); err != nil {
		t.Fatal(err)
	}
	if got := modePredictions(learning.modeLed()); !slices.Equal(got, before) {
		t.Fatalf("with online learning the restored window modes predict %v, before %v", got, before)
	}
	learning.led.Observe(predictor.Input{LastTool: "shell", LastToolClass: "prog:make"}, 5, 5, 700)
	after := modePredictions(learning.modeLed())
	if err := learning.Close(); err != nil {
		t.Fatal(err)
	}
	last := onnxLength(t)
	defer last.Close()
	if err := last.KeepMixture(dir, nil); err != nil {
		t.Fatal(err)
	}
	if got := modePredictions(last.modeLed()); !slices.Equal(got, after) {
		t.Fatalf("the learner did not save the window modes: %v, want %v", got, after)
	}
}

// Calls on many handlers at once predict and book through the one
// deployment ModeLed while its state is saved (run under -race).
func TestModeLedUnderConcurrentCalls(t *testing.T) {
	info, err := predictor.ParseONNX(predictor.DefaultModelBytes())
	if err != nil {
		t.Fatal(err)
	}
	sink := &testutil.LockedBuffer{}
	rt := newTestRuntime(t, Config{Tools: shellTools(), Trace: sink,
		Length: predictor.GoClassifier{MLP: info.MLP, OverflowTokens: info.OverflowTokens}})
	dir := t.TempDir()
	const workers, calls = 4, 5
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := range calls {
				if w == 0 {
					if err := rt.length.led.Save(dir); err != nil {
						t.Error(err)
					}
				}
				cmd := []string{"cat a.txt", "ls", "make"}[(w+i)%3]
				if _, err := rt.ChatSync(context.Background(), shellCall(fmt.Sprintf("w%d-%d", w, i), cmd, "/say ok")); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	for _, r := range tracetest.Records(t, sink, 2*workers*calls) {
		if r.PredictedTokens < 1 {
			t.Fatalf("record %s/%d: no prediction recorded", r.Program, r.Segment)
		}
	}
}

// A call whose request ends in the results of a client's tool calls reads
// the first of those calls: its tool and argument class, from the request,
// as the trace converters derive them from the program's previous segment.
func TestFirstSegmentKnowsTheClientCallItReads(t *testing.T) {
	lp := &fixedLength{n: 20}
	rt := newTestRuntime(t, Config{Length: lp})
	msgs := []chat.Message{{Role: "user", Content: "fix the bug"},
		{Role: "assistant", ToolCalls: []chat.ToolCall{{ID: "c1", Name: "bash", Arguments: `{"command": "cd /repo && pytest -x tests/"}`},
			{ID: "c2", Name: "bash", Arguments: `{"command": "ls"}`}}},
		{Role: "tool", ToolCallID: "c1", Content: "1 failed"}, {Role: "tool", ToolCallID: "c2", Content: "a b"}}
	if _, err := rt.ChatSync(context.Background(), ChatRequest{Program: "c", Messages: msgs, Tools: []chat.Tool{{Name: "bash"}}}); err != nil {
		t.Fatal(err)
	}
	lp.mu.Lock()
	ins := slices.Clone(lp.in)
	lp.mu.Unlock()
	if len(ins) == 0 || ins[0].LastTool != "bash" || ins[0].LastToolClass != "prog:pytest" {
		t.Fatalf("first segment's input %+v: want last tool bash, class prog:pytest", ins)
	}
	for _, c := range []struct {
		msgs        []chat.Message
		tool, class string
	}{
		{msgs[:1], "", ""}, // the user's message
		{append(slices.Clone(msgs), chat.Message{Role: "user", Content: "and?"}), "", ""},
		{[]chat.Message{{Role: "tool", Content: "orphan"}}, "", ""},
		{[]chat.Message{{Role: "assistant", ToolCalls: []chat.ToolCall{{Name: "fetch", Arguments: `{"url": "https://Docs.Example.com/x"}`}}}, {Role: "tool", Content: "page"}}, "fetch", "host:docs.example.com"},
	} {
		if tool, class := answeredCall(c.msgs); tool != c.tool || class != c.class {
			t.Errorf("answeredCall(%d messages) = %q, %q; want %q, %q", len(c.msgs), tool, class, c.tool, c.class)
		}
	}
}
