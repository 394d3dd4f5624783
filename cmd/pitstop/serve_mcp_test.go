package main

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pitstop-llm/pitstop/tools/mcp/mcptest"
)

func TestMCPFlagSpecs(t *testing.T) {
	f := mcpFlags{
		servers: []string{"everything=npx -y @modelcontextprotocol/server-everything", "docs=https://docs.example/mcp"},
		headers: []string{"docs=Authorization: Bearer ${DOCS_TOKEN}", "docs=X-Team: search"},
		timeout: 5 * time.Second,
	}
	specs, err := f.specs(func(k string) (string, bool) { return map[string]string{"DOCS_TOKEN": "t0k"}[k], k == "DOCS_TOKEN" })
	if err != nil {
		t.Fatal(err)
	}
	if len(specs) != 2 || !slices.Equal(specs[0].Command, []string{"npx", "-y", "@modelcontextprotocol/server-everything"}) || specs[0].Timeout != 5*time.Second {
		t.Errorf("stdio spec %+v", specs[0])
	}
	if specs[1].URL != "https://docs.example/mcp" || specs[1].Header.Get("Authorization") != "Bearer t0k" || specs[1].Header.Get("X-Team") != "search" {
		t.Errorf("http spec %+v", specs[1])
	}
}

func TestServeMCPBadInput(t *testing.T) {
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"no name", []string{"--mcp", "npx server"}, "want NAME=COMMAND [ARGS...] or NAME=URL"},
		{"bad name", []string{"--mcp", "my.server=cmd"}, `invalid MCP server name "my.server"`},
		{"twice", []string{"--mcp", "a=http://127.0.0.1:1/mcp", "--mcp", "a=http://127.0.0.1:2/mcp"}, `server name "a" given twice`},
		{"missing command", []string{"--mcp", "a=/nonexistent/mcp-server --flag"}, `command "/nonexistent/mcp-server"`},
		{"header for unknown server", []string{"--mcp-header", "b=X-Key: v"}, `no --mcp server named "b"`},
		{"header for a command", []string{"--mcp", "a=sh", "--mcp-header", "a=X-Key: v"}, "headers apply to HTTP servers"},
		{"unset variable", []string{"--mcp", "a=http://127.0.0.1:1/mcp", "--mcp-header", "a=X-Key: ${PITSTOP_TEST_UNSET_VAR}"}, "PITSTOP_TEST_UNSET_VAR is not set"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, stdout, stderr := pitstop(t, append([]string{"serve", "--addr", "127.0.0.1:0", "--model", "scripted-test", "--predictor", "history"}, c.args...)...)
			if code != 2 {
				t.Fatalf("exit %d, want 2; stderr %q", code, stderr)
			}
			last := lastLogLine(stderr)
			if stdout != "" || !strings.Contains(last, c.want) {
				t.Errorf("want a last line with %q, got stdout %q stderr %q", c.want, stdout, stderr)
			}
		})
	}
}

func lastLogLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

// serve --mcp with the reference server: its tools are listed, pitstop's
// tools are served at /mcp, and SIGTERM stops pitstop and the server's
// process.
func TestServeMCPEverything(t *testing.T) {
	bin := mcptest.Bin(t, mcptest.Everything)
	p := startServeWithin(t, 60*time.Second, "--model", "scripted-test", "--predictor", "history",
		"--mcp", "everything="+bin+" stdio", "--mcp-timeout", "10s")
	base := p.url("")
	var servers struct {
		Data []struct {
			State string `json:"state"`
			PID   int    `json:"pid"`
			Tools []struct {
				Name string `json:"name"`
			} `json:"tools"`
		} `json:"data"`
	}
	getJSON(t, base+"/v1/mcp/servers", &servers)
	if len(servers.Data) != 1 || servers.Data[0].State != "connected" || servers.Data[0].PID == 0 || len(servers.Data[0].Tools) < 3 {
		t.Fatalf("/v1/mcp/servers %+v; log:\n%s", servers, p.logs.String())
	}
	var listed struct {
		Data []struct {
			Function struct{ Name string } `json:"function"`
		} `json:"data"`
	}
	getJSON(t, base+"/v1/tools", &listed)
	var names []string
	for _, d := range listed.Data {
		names = append(names, d.Function.Name)
	}
	if !slices.Contains(names, "everything__add") || !slices.Contains(names, "calculator") {
		t.Errorf("/v1/tools lists %v", names)
	}
	c := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cs, err := c.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: base + "/mcp"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "calculator", Arguments: map[string]any{"expression": "2^10"}})
	if err != nil || res.IsError || res.Content[0].(*sdk.TextContent).Text != "1024" {
		t.Errorf("/mcp calculator: %+v %v", res, err)
	}
	_ = cs.Close()

	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
		if p.err != nil {
			t.Errorf("serve exited with %v; log:\n%s", p.err, p.logs.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("serve did not stop on SIGTERM; log:\n%s", p.logs.String())
	}
	if err := syscall.Kill(servers.Data[0].PID, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("the MCP server's process outlived pitstop: kill(pid, 0) = %v", err)
	}
}

func getJSON(t *testing.T, url string, v any) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s", url, resp.Status)
	}
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatal(err)
	}
}
