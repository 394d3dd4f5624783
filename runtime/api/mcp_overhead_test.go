package api

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pitstop-llm/pitstop/runtime"
	"github.com/pitstop-llm/pitstop/tools"
	"github.com/pitstop-llm/pitstop/tools/mcp"
	"github.com/pitstop-llm/pitstop/tools/mcp/mcptest"
)

var mcpOverheadCalls = flag.Int("pitstop.mcpoverhead", 0, "measure this many calls of the reference MCP server's add tool per path (direct SDK client, pitstop's executor, pitstop's invoke endpoint) and log p50/p99")

// TestMCPCallOverhead is the measurement of docs/results-mcp.md: the same
// tool (the reference server's add, over stdio, each path with its own
// server process) called directly with the SDK's client, through pitstop's
// tool executor (the path of a server-side call in the serving loop:
// schema validation, timeout, statistics, the Source's handler), and through
// POST /v1/tools/{name}/invoke (HTTP, the runtime's Invoke). The paths take
// turns call by call, each first in turn, so that drifts of a shared
// machine hit all three alike.
//
//	go test ./runtime/api -run TestMCPCallOverhead -count=1 -v -pitstop.mcpoverhead=2000
func TestMCPCallOverhead(t *testing.T) {
	n := *mcpOverheadCalls
	if n <= 0 {
		t.Skip("a measurement: run with -pitstop.mcpoverhead=N")
	}
	bin := mcptest.Bin(t, mcptest.Everything)
	reg, _ := withMCPServers(t, mcp.ServerSpec{Name: "everything", Command: []string{bin, "stdio"}})
	ts := newTestServer(t, serverOpts{rt: runtime.Config{Tools: reg}})
	ex, err := tools.NewExecutor(reg, tools.ExecutorConfig{})
	if err != nil {
		t.Fatal(err)
	}
	defer ex.Close()

	client := sdk.NewClient(&sdk.Implementation{Name: "direct", Version: "1"}, nil)
	ctx := context.Background()
	direct, err := client.Connect(ctx, &sdk.CommandTransport{Command: exec.Command(bin, "stdio"), TerminateDuration: time.Second},
		&sdk.ClientSessionOptions{ProtocolVersion: mcp.ProtocolVersion})
	if err != nil {
		t.Fatal(err)
	}
	defer direct.Close()

	paths := []struct {
		name string
		call func(i int) error
	}{
		{"direct SDK client", func(i int) error {
			// The same argument bytes pitstop sends.
			args := json.RawMessage(fmt.Sprintf(`{"a": %d, "b": 1}`, i))
			res, err := direct.CallTool(ctx, &sdk.CallToolParams{Name: "add", Arguments: args})
			if err == nil && res.IsError {
				err = fmt.Errorf("error result")
			}
			return err
		}},
		{"pitstop executor (serving loop)", func(i int) error {
			r := ex.Run(ctx, tools.Call{Name: "everything__add", Arguments: fmt.Sprintf(`{"a": %d, "b": 1}`, i)})
			if r.IsError {
				return fmt.Errorf("%s", r.Content)
			}
			return nil
		}},
		{"pitstop POST /v1/tools/{name}/invoke", func(i int) error {
			req, _ := http.NewRequest("POST", ts.http.URL+"/v1/tools/everything__add/invoke", strings.NewReader(fmt.Sprintf(`{"arguments": {"a": %d, "b": 1}}`, i)))
			req.Header.Set("Content-Type", "application/json")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				return err
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				return fmt.Errorf("status %s", resp.Status)
			}
			return nil
		}},
	}
	warm := min(n, 200)
	durs := make([][]time.Duration, len(paths))
	for i := -warm; i < n; i++ {
		for k := range paths {
			p := (k + i + warm) % len(paths) // each path first in turn
			path := paths[p]
			began := time.Now()
			if err := path.call(i); err != nil {
				t.Fatalf("%s: %v", path.name, err)
			}
			if i >= 0 {
				durs[p] = append(durs[p], time.Since(began))
			}
		}
	}
	base := summarize(durs[0])
	t.Logf("%d calls per path after %d warm-up calls each, paths in turn", n, warm)
	t.Logf("%-38s %9s %9s %9s %12s %12s", "path", "p50", "p99", "mean", "p50 over", "p99 over")
	for p, path := range paths {
		s := summarize(durs[p])
		t.Logf("%-38s %9s %9s %9s %12s %12s", path.name, us(s.p50), us(s.p99), us(s.mean), us(s.p50-base.p50), us(s.p99-base.p99))
	}
}

type summary struct{ p50, p99, mean time.Duration }

func summarize(d []time.Duration) summary {
	s := slices.Clone(d)
	slices.Sort(s)
	var sum time.Duration
	for _, x := range s {
		sum += x
	}
	q := func(f float64) time.Duration { return s[min(len(s)-1, int(f*float64(len(s))))] }
	return summary{p50: q(0.5), p99: q(0.99), mean: sum / time.Duration(len(s))}
}

func us(d time.Duration) string { return fmt.Sprintf("%.0fµs", float64(d.Microseconds())) }
