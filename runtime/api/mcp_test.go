package api

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	openai "github.com/sashabaranov/go-openai"

	"github.com/pitstop-llm/pitstop/runtime"
	"github.com/pitstop-llm/pitstop/tools"
	"github.com/pitstop-llm/pitstop/tools/mcp"
	"github.com/pitstop-llm/pitstop/tools/mcp/mcptest"
)

// mcpOptions are the Source options of these tests: quick reconnection.
var mcpOptions = mcp.Options{Logger: slog.New(slog.DiscardHandler), MinBackoff: 20 * time.Millisecond,
	MaxBackoff: 200 * time.Millisecond, ConnectTimeout: 30 * time.Second, TerminateAfter: time.Second}

// withMCPServers returns a registry with the built-in tools and the tools
// of the given MCP servers, connected.
func withMCPServers(t *testing.T, specs ...mcp.ServerSpec) (*tools.Registry, *mcp.Sources) {
	t.Helper()
	reg := tools.NewRegistry()
	if err := tools.RegisterBuiltins(reg, tools.BuiltinConfig{}); err != nil {
		t.Fatal(err)
	}
	set, err := mcp.StartAll(reg, specs, mcpOptions)
	if err != nil {
		t.Fatal(err)
	}
	// Registered after newTestServer's cleanup, so it runs first: the
	// servers stop before the engine's drain check.
	t.Cleanup(func() { _ = set.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := set.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	return reg, set
}

func everythingSpec(t *testing.T, timeout time.Duration) mcp.ServerSpec {
	return mcp.ServerSpec{Name: "everything", Command: []string{mcptest.Bin(t, mcptest.Everything), "stdio"}, Timeout: timeout}
}

func declare(names ...string) []openai.Tool {
	out := make([]openai.Tool, len(names))
	for i, n := range names {
		out[i] = openai.Tool{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{Name: n, Parameters: json.RawMessage(`{"type":"object"}`)}}
	}
	return out
}

// listedTool finds a tool of GET /v1/tools.
func listedTool(t *testing.T, ts *testServer, name string, headers map[string]string) map[string]any {
	t.Helper()
	code, body := ts.do("GET", "/v1/tools", "", headers)
	if code != http.StatusOK {
		t.Fatalf("GET /v1/tools: %d %v", code, body)
	}
	data, _ := body["data"].([]any)
	for _, d := range data {
		entry, _ := d.(map[string]any)
		if fn, _ := entry["function"].(map[string]any); fn["name"] == name {
			return entry
		}
	}
	return nil
}

// Show 1: the reference server started by pitstop over stdio. Its tools
// appear in /v1/tools with their schemas; a chat's /call directives run add
// and echo server-side and their results reach the answer; invoke runs one
// directly; the long-running tool past a short timeout is an error result
// and the server keeps serving.
func TestMCPEverythingToolsServerSide(t *testing.T) {
	reg, set := withMCPServers(t, everythingSpec(t, 2*time.Second))
	ts := newTestServer(t, serverOpts{rt: runtime.Config{Tools: reg}, api: Config{MCP: MCPConfig{Sources: set}}})

	add := listedTool(t, ts, "everything__add", nil)
	if add == nil {
		t.Fatal("everything__add not in /v1/tools")
	}
	params, _ := json.Marshal(add["function"].(map[string]any)["parameters"])
	if !strings.Contains(string(params), `"required":["a","b"]`) || !strings.Contains(string(params), `"description":"First number"`) {
		t.Errorf("everything__add parameters %s", params)
	}
	if listedTool(t, ts, "everything__echo", nil) == nil || listedTool(t, ts, "everything__longRunningOperation", nil) == nil {
		t.Error("echo or longRunningOperation not in /v1/tools")
	}

	resp, err := ts.client(nil).CreateChatCompletion(context.Background(), openai.ChatCompletionRequest{
		Model:    "pitstop-scripted-test",
		Messages: []openai.ChatCompletionMessage{userMsg("/call everything__add {\"a\": 2, \"b\": 3}\n/call everything__echo {\"message\": \"hello over MCP\"}")},
		Tools:    declare("everything__add", "everything__echo"),
	})
	if err != nil {
		t.Fatal(err)
	}
	answer := resp.Choices[0].Message.Content
	if !strings.Contains(answer, "The sum of 2 and 3 is 5.") || !strings.Contains(answer, "Echo: hello over MCP") || len(resp.Choices[0].Message.ToolCalls) != 0 {
		t.Errorf("answer %q (tool calls %v)", answer, resp.Choices[0].Message.ToolCalls)
	}

	code, body := ts.do("POST", "/v1/tools/everything__add/invoke", `{"arguments": {"a": 40, "b": 2}}`, nil)
	if code != http.StatusOK || body["content"] != "The sum of 40 and 2 is 42." || body["is_error"] != false {
		t.Errorf("invoke add: %d %v", code, body)
	}
	code, body = ts.do("POST", "/v1/tools/everything__add/invoke", `{"arguments": {"a": "forty"}}`, nil)
	wantError(t, code, body, http.StatusBadRequest, "arguments")

	pid := set.Status()[0].PID
	code, body = ts.do("POST", "/v1/tools/everything__longRunningOperation/invoke", `{"arguments": {"duration": 60, "steps": 60}}`, nil)
	if code != http.StatusOK || body["is_error"] != true || !strings.Contains(body["content"].(string), "timed out after 2s") {
		t.Errorf("long-running tool past its timeout: %d %v", code, body)
	}
	code, body = ts.do("POST", "/v1/tools/everything__echo/invoke", `{"arguments": {"message": "still here"}}`, nil)
	if code != http.StatusOK || body["content"] != "Echo: still here" {
		t.Errorf("echo after the timeout: %d %v", code, body)
	}
	if st := set.Status()[0]; st.PID != pid || st.Connects != 1 {
		t.Errorf("the server was restarted after a timeout: %+v", st)
	}
	// Duration statistics per MCP tool (they feed the handling decision).
	if stats, _ := listedTool(t, ts, "everything__add", nil)["stats"].(map[string]any); stats == nil || stats["count"].(float64) < 2 {
		t.Errorf("everything__add statistics %v", stats)
	}
	// /mcp serves pitstop's own tools, not the proxied ones, by default.
	cs := mcpClient(t, ts.http.URL+"/mcp", "")
	if names := mcptest.ToolNames(t, cs); !slices.Contains(names, "calculator") || slices.Contains(names, "everything__add") {
		t.Errorf("/mcp lists %v", names)
	}
}

// Show 3: the MCP server process is killed while a chat's call runs one of
// its tools: the tool result is an error (the chat call still answers),
// pitstop starts the server again, the next call succeeds, and the engine
// holds nothing afterwards (newTestServer's drain check).
func TestMCPServerKilledMidCall(t *testing.T) {
	reg, set := withMCPServers(t, everythingSpec(t, 0))
	ts := newTestServer(t, serverOpts{rt: runtime.Config{Tools: reg}, api: Config{MCP: MCPConfig{Sources: set}}})
	pid := set.Status()[0].PID

	type outcome struct {
		resp openai.ChatCompletionResponse
		err  error
	}
	done := make(chan outcome, 1)
	go func() {
		resp, err := ts.client(nil).CreateChatCompletion(context.Background(), openai.ChatCompletionRequest{
			Model:    "pitstop-scripted-test",
			Messages: []openai.ChatCompletionMessage{userMsg("/call everything__longRunningOperation {\"duration\": 60, \"steps\": 60}")},
			Tools:    declare("everything__longRunningOperation"),
		})
		done <- outcome{resp, err}
	}()
	waitFor(t, "the call to pause on its tool", func() bool {
		st, err := ts.rt.Engine(context.Background())
		return err == nil && st.Paused > 0
	})
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	var o outcome
	select {
	case o = <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("the chat call did not end after the MCP server died")
	}
	if o.err != nil {
		t.Fatalf("the chat call failed: %v", o.err)
	}
	if answer := o.resp.Choices[0].Message.Content; !strings.HasPrefix(answer, "The tool reported an error:") {
		t.Errorf("answer %q", answer)
	}
	waitFor(t, "the server to be started again", func() bool {
		st := set.Status()[0]
		return st.State == mcp.StateConnected && st.Connects == 2 && st.PID != pid
	})
	resp, err := ts.client(nil).CreateChatCompletion(context.Background(), openai.ChatCompletionRequest{
		Model:    "pitstop-scripted-test",
		Messages: []openai.ChatCompletionMessage{userMsg("/call everything__add {\"a\": 1, \"b\": 2}")},
		Tools:    declare("everything__add"),
	})
	if err != nil || resp.Choices[0].Message.Content != "The result is The sum of 1 and 2 is 3.." {
		t.Errorf("call after the restart: %v %+v", err, resp.Choices)
	}
}

// waitFor polls cond for up to 20 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Show 2: the MCP Inspector in CLI mode lists pitstop's tools at /mcp and
// calls the calculator, with the API key; without one it is refused.
func TestMCPInspectorCLI(t *testing.T) {
	inspector := mcptest.Bin(t, mcptest.Inspector)
	ts := newTestServer(t, serverOpts{api: Config{APIKeys: []string{"sk-inspector"}}})
	url := ts.http.URL + "/mcp"
	inspect := func(key string, args ...string) (string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
		defer cancel()
		argv := append([]string{"--cli", url, "--transport", "http"}, args...)
		if key != "" {
			argv = append(argv, "--header", "Authorization: Bearer "+key)
		}
		out, err := exec.CommandContext(ctx, inspector, argv...).CombinedOutput()
		return string(out), err
	}
	out, err := inspect("sk-inspector", "--method", "tools/list")
	if err != nil {
		t.Fatalf("inspector tools/list: %v\n%s", err, out)
	}
	var list struct {
		Tools []struct {
			Name        string         `json:"name"`
			InputSchema map[string]any `json:"inputSchema"`
		} `json:"tools"`
	}
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		t.Fatalf("inspector output is not the tools/list JSON: %v\n%s", err, out)
	}
	var names []string
	for _, tl := range list.Tools {
		names = append(names, tl.Name)
	}
	if !slices.Equal(names, []string{"calculator", "current_time", "unit_convert"}) {
		t.Errorf("inspector lists %v", names)
	}
	out, err = inspect("sk-inspector", "--method", "tools/call", "--tool-name", "calculator", "--tool-arg", "expression=(17+25)*3")
	if err != nil {
		t.Fatalf("inspector tools/call: %v\n%s", err, out)
	}
	var call struct {
		Content []struct{ Type, Text string } `json:"content"`
		IsError bool                          `json:"isError"`
	}
	if err := json.Unmarshal([]byte(out), &call); err != nil || call.IsError || len(call.Content) != 1 || call.Content[0].Text != "126" {
		t.Errorf("inspector calculator call: %v\n%s", err, out)
	}
	t.Logf("inspector tools/call:\n%s", out)
	if out, err := inspect("", "--method", "tools/list"); err == nil {
		t.Errorf("inspector without a key was served:\n%s", out)
	} else {
		t.Logf("inspector without a key: %v\n%s", err, out)
	}
}

func mcpClient(t *testing.T, url, key string) *sdk.ClientSession {
	t.Helper()
	hc := &http.Client{Transport: headerTransport{base: http.DefaultTransport, headers: map[string]string{}}}
	if key != "" {
		hc.Transport = headerTransport{base: http.DefaultTransport, headers: map[string]string{"Authorization": "Bearer " + key, HeaderProgram: "mcp-program"}}
	}
	return mcptest.Connect(t, url, hc, nil)
}

// /mcp behind tenants' keys: each tenant's MCP client sees the server's
// tools and its own, its calls are booked to its programs, a call without a
// key is refused, and /v1/mcp/servers is for admins.
func TestMCPEndpointTenants(t *testing.T) {
	ring, err := NewKeyring([]Key{{Secret: "ka", Tenant: "a"}, {Secret: "kb", Tenant: "b"}, {Secret: "kadmin", Tenant: "ops", Admin: true}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ts := newTestServer(t, serverOpts{api: Config{Keys: ring}})
	hook, _ := tools.New("hook", "tenant a's tool", nil, func(context.Context, json.RawMessage) (string, error) { return "hooked", nil })
	if err := ts.rt.Tools().RegisterIn("a", hook, tools.ScopeOptions{}); err != nil {
		t.Fatal(err)
	}
	url := ts.http.URL + "/mcp"
	csA, csB := mcpClient(t, url, "ka"), mcpClient(t, url, "kb")
	if got := mcptest.ToolNames(t, csA); !slices.Equal(got, []string{"calculator", "current_time", "hook", "unit_convert"}) {
		t.Errorf("tenant a lists %v", got)
	}
	if got := mcptest.ToolNames(t, csB); slices.Contains(got, "hook") {
		t.Errorf("tenant b lists %v", got)
	}
	ctx := context.Background()
	res, err := csA.CallTool(ctx, &sdk.CallToolParams{Name: "hook"})
	if err != nil || res.IsError || res.Content[0].(*sdk.TextContent).Text != "hooked" {
		t.Errorf("tenant a's tool: %+v %v", res, err)
	}
	res, err = csA.CallTool(ctx, &sdk.CallToolParams{Name: "calculator", Arguments: map[string]any{"expression": true}})
	if err != nil || !res.IsError || !strings.Contains(res.Content[0].(*sdk.TextContent).Text, "invalid arguments") {
		t.Errorf("bad arguments: %+v %v", res, err)
	}
	if _, err := csB.CallTool(ctx, &sdk.CallToolParams{Name: "hook"}); err == nil {
		t.Error("tenant b ran tenant a's tool")
	}
	// The calls were booked to tenant a's program of the header.
	if code, body := ts.do("GET", "/v1/programs/mcp-program", "", map[string]string{"Authorization": "Bearer ka"}); code != http.StatusOK {
		t.Errorf("tenant a's program: %d %v", code, body)
	}
	if code, _ := ts.do("GET", "/v1/programs/mcp-program", "", map[string]string{"Authorization": "Bearer kb"}); code != http.StatusNotFound {
		t.Errorf("tenant b sees tenant a's program: %d", code)
	}
	code, body := ts.do("POST", "/mcp", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, nil)
	wantError(t, code, body, http.StatusUnauthorized, "")
	code, body = ts.do("GET", "/v1/mcp/servers", "", map[string]string{"Authorization": "Bearer ka"})
	wantError(t, code, body, http.StatusForbidden, "")
	if code, body := ts.do("GET", "/v1/mcp/servers", "", map[string]string{"Authorization": "Bearer kadmin"}); code != http.StatusOK {
		t.Errorf("admin /v1/mcp/servers: %d %v", code, body)
	}
}

// With ServeProxied, /mcp serves the tools pitstop proxies from an MCP
// server too (an in-process SDK server over loopback HTTP), and /v1/mcp/servers
// shows the server.
func TestMCPServeProxiedTools(t *testing.T) {
	up := sdk.NewServer(&sdk.Implementation{Name: "upstream", Version: "1"}, nil)
	up.AddTool(&sdk.Tool{Name: "ping", Description: "Answers pong", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "pong"}}}, nil
		})
	upstream := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return up }, nil))
	t.Cleanup(upstream.Close)
	reg, set := withMCPServers(t, mcp.ServerSpec{Name: "up", URL: upstream.URL})
	ts := newTestServer(t, serverOpts{rt: runtime.Config{Tools: reg}, api: Config{MCP: MCPConfig{Sources: set, ServeProxied: true}}})

	cs := mcpClient(t, ts.http.URL+"/mcp", "")
	if names := mcptest.ToolNames(t, cs); !slices.Contains(names, "up__ping") {
		t.Errorf("/mcp lists %v", names)
	}
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "up__ping"})
	if err != nil || res.IsError || res.Content[0].(*sdk.TextContent).Text != "pong" {
		t.Errorf("proxied call: %+v %v", res, err)
	}
	code, body := ts.do("GET", "/v1/mcp/servers", "", nil)
	data, _ := body["data"].([]any)
	if code != http.StatusOK || len(data) != 1 || data[0].(map[string]any)["state"] != "connected" {
		t.Errorf("/v1/mcp/servers: %d %v", code, body)
	}
	// The upstream goes away: /v1/tools says the tool is unavailable.
	upstream.CloseClientConnections()
	upstream.Close()
	if _, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "up__ping"}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the tool to be marked unavailable", func() bool {
		tl := listedTool(t, ts, "up__ping", nil)
		desc, _ := tl["function"].(map[string]any)["description"].(string)
		return strings.HasPrefix(desc, mcp.UnavailablePrefix)
	})
}
