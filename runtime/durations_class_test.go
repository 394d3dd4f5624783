package runtime

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/pitstop-llm/pitstop/models/chat"
	"github.com/pitstop-llm/pitstop/tools"
)

// A server-side shell tool whose duration depends on the program it runs:
// once the per-program medians beat the tool's median on its recent calls,
// a round's predicted duration is its program's.
func TestToolDurationsPerArgumentClass(t *testing.T) {
	reg := tools.NewRegistry()
	reg.MustRegister(&tools.Tool{Name: "shell", Handler: func(_ context.Context, args json.RawMessage) (string, error) {
		var a struct{ Command string }
		if err := json.Unmarshal(args, &a); err != nil {
			return "", err
		}
		d := time.Millisecond
		if a.Command == "make all" {
			d = 60 * time.Millisecond
		}
		time.Sleep(d)
		return "done", nil
	}})
	rt := newTestRuntime(t, Config{Tools: reg})
	run := func(cmd string) Round {
		t.Helper()
		res, err := rt.ChatSync(context.Background(), ChatRequest{
			Messages: []chat.Message{{Role: "user", Content: fmt.Sprintf("/call shell {\"command\": %q}\n/say ok", cmd)}},
			Tools:    []chat.Tool{{Name: "shell"}}})
		if err != nil || len(res.Rounds) != 1 {
			t.Fatalf("call: %v, %+v", err, res)
		}
		return res.Rounds[0]
	}
	for i := range 24 {
		run([]string{"make all", "ls -l"}[i%2])
	}
	if p := run("make all").Predicted; p < 30*time.Millisecond {
		t.Errorf("make predicted %v, want about 60ms (its class's median)", p)
	}
	if p := run("ls -l").Predicted; p > 10*time.Millisecond {
		t.Errorf("ls predicted %v, want about 1ms (its class's median)", p)
	}
}
