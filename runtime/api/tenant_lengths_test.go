package api

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"testing"

	openai "github.com/sashabaranov/go-openai"

	"github.com/pitstop-llm/pitstop/internal/testutil"
	"github.com/pitstop-llm/pitstop/predictor"
	"github.com/pitstop-llm/pitstop/runtime"
	"github.com/pitstop-llm/pitstop/runtime/internal/tracetest"
	"github.com/pitstop-llm/pitstop/tools"
)

// lengthServer is a server with two tenants' keys whose predictor is the
// default length model run in Go, a server-side shell tool and a trace.
func lengthServer(t *testing.T) (*testServer, *testutil.LockedBuffer) {
	t.Helper()
	info, err := predictor.ParseONNX(predictor.DefaultModelBytes())
	if err != nil {
		t.Fatal(err)
	}
	reg := tools.NewRegistry()
	reg.MustRegister(&tools.Tool{Name: "shell", Handler: func(context.Context, json.RawMessage) (string, error) { return "done", nil }})
	ring := keyring(t, twoTenantKeys)
	sink := &testutil.LockedBuffer{}
	ts := newTestServer(t, serverOpts{
		rt:  runtime.Config{Tools: reg, Trace: sink, Length: predictor.GoClassifier{MLP: info.MLP, OverflowTokens: info.OverflowTokens}},
		api: Config{Keys: ring}})
	return ts, sink
}

// shellProgram runs one program of key's tenant: the scripted model calls
// the shell tool with command, then answers as say directs.
func shellProgram(t *testing.T, ts *testServer, key, program, command, say string) {
	t.Helper()
	c := ts.clientWithKey(key, map[string]string{HeaderProgram: program})
	if _, err := c.CreateChatCompletion(context.Background(), openai.ChatCompletionRequest{
		Model:    "pitstop-scripted-test",
		Tools:    []openai.Tool{{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{Name: "shell"}}},
		Messages: []openai.ChatCompletionMessage{userMsg(fmt.Sprintf("/call shell {\"command\": %q}\n%s", command, say))},
	}); err != nil {
		t.Fatal(err)
	}
}

// Through the HTTP API with two tenants' keys: what tenant alpha's calls
// teach the length predictor (its window modes win over the mixture) does
// not move the lengths predicted for tenant beta's calls, which are those
// of a server alpha never called; alpha's own next calls are predicted
// otherwise (the control).
func TestTenantLengthStateIsolation(t *testing.T) {
	const taught = 40
	run := func(teacher, prober string) []int {
		ts, sink := lengthServer(t)
		n := 0
		if teacher != "" {
			for i := range taught {
				cmd, say := "cat a.txt", "/long 40"
				if i%2 == 1 {
					cmd, say = "ls -la /srv/data/archive/2026/november/reports", "/say ok"
				}
				shellProgram(t, ts, teacher, fmt.Sprintf("teach%02d", i), cmd, say)
			}
			n = 2 * taught
		}
		for i, cmd := range []string{"cat b.txt", "ls", "cat c.txt", "ls -la /srv"} {
			shellProgram(t, ts, prober, fmt.Sprintf("probe%d", i), cmd, "/say ok")
		}
		return tracetest.PredictedLengths(tracetest.Records(t, sink, n+8), "probe")
	}
	alone := run("", "kb")
	if got := run("ka", "kb"); !slices.Equal(got, alone) {
		t.Fatalf("beta's predicted lengths moved with alpha's calls: %v, on a server alpha never called %v", got, alone)
	}
	if own := run("ka", "ka"); slices.Equal(own, alone) {
		t.Fatalf("alpha's calls do not move even its own predictions (%v): the test cannot tell isolation from none", own)
	}
}
