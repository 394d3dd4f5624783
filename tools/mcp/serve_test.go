package mcp

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pitstop-llm/pitstop/tools"
	"github.com/pitstop-llm/pitstop/tools/mcp/mcptest"
)

// scopeHeader picks the scope in these tests (pitstop takes it from the API
// key).
const scopeHeader = "X-Test-Scope"

func serveRegistry(t *testing.T, reg *tools.Registry, include func(string) bool) (*httptest.Server, chan ServeCall) {
	t.Helper()
	ex := newExecutor(t, reg)
	calls := make(chan ServeCall, 16)
	h, err := NewHandler(ServeConfig{Registry: reg, Include: include,
		Invoke: func(ctx context.Context, c ServeCall) (tools.Result, error) {
			calls <- c
			return ex.Run(ctx, tools.Call{Name: c.Tool, Arguments: c.Arguments, Scope: c.Scope}), nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeScope(r.Header.Get(scopeHeader), w, r)
	}))
	t.Cleanup(srv.Close)
	return srv, calls
}

func connectClient(t *testing.T, url, scope string, opts *sdk.ClientOptions) *sdk.ClientSession {
	t.Helper()
	hc := &http.Client{Transport: headerTransport{header: http.Header{scopeHeader: {scope}}}}
	return mcptest.Connect(t, url, hc, opts)
}

func textOf(t *testing.T, res *sdk.CallToolResult) string {
	t.Helper()
	var parts []string
	for _, c := range res.Content {
		tc, ok := c.(*sdk.TextContent)
		if !ok {
			t.Fatalf("content %T", c)
		}
		parts = append(parts, tc.Text)
	}
	return strings.Join(parts, "")
}

// A scope's MCP clients see the global tools and the scope's own, call them
// through Invoke, and get error results for failures; the tool list follows
// the registry, with tools/list_changed.
func TestHandlerServesScopes(t *testing.T) {
	reg := tools.NewRegistry()
	if err := tools.RegisterBuiltins(reg, tools.BuiltinConfig{}); err != nil {
		t.Fatal(err)
	}
	hook, _ := tools.New("hook", "tenant a's tool", nil, func(context.Context, json.RawMessage) (string, error) { return "hooked", nil })
	if err := reg.RegisterIn("a", hook, tools.ScopeOptions{}); err != nil {
		t.Fatal(err)
	}
	proxied, _ := tools.New("srv__x", "a proxied tool", nil, func(context.Context, json.RawMessage) (string, error) { return "x", nil })
	reg.MustRegister(proxied)
	srv, calls := serveRegistry(t, reg, func(name string) bool { return name != "srv__x" })

	changed := make(chan struct{}, 4)
	csA := connectClient(t, srv.URL, "a", &sdk.ClientOptions{ToolListChangedHandler: func(context.Context, *sdk.ToolListChangedRequest) {
		changed <- struct{}{}
	}})
	if got := mcptest.ToolNames(t, csA); !slices.Equal(got, []string{"calculator", "current_time", "hook", "unit_convert"}) {
		t.Errorf("scope a lists %v", got)
	}
	csB := connectClient(t, srv.URL, "b", nil)
	if got := mcptest.ToolNames(t, csB); slices.Contains(got, "hook") || !slices.Contains(got, "calculator") {
		t.Errorf("scope b lists %v", got)
	}

	ctx := context.Background()
	res, err := csA.CallTool(ctx, &sdk.CallToolParams{Name: "calculator", Arguments: map[string]any{"expression": "6*7"}})
	if err != nil || res.IsError || textOf(t, res) != "42" {
		t.Fatalf("calculator: %+v %v", res, err)
	}
	if c := <-calls; c.Scope != "a" || c.Tool != "calculator" || !strings.Contains(c.Arguments, "6*7") || c.Header.Get(scopeHeader) != "a" {
		t.Errorf("invoke got %+v", c)
	}
	res, err = csA.CallTool(ctx, &sdk.CallToolParams{Name: "calculator", Arguments: map[string]any{"expression": 7}})
	if err != nil || !res.IsError || !strings.Contains(textOf(t, res), "invalid arguments") {
		t.Errorf("bad arguments: %+v %v", res, err)
	}
	<-calls
	if _, err := csB.CallTool(ctx, &sdk.CallToolParams{Name: "hook"}); err == nil {
		t.Error("scope b called scope a's tool")
	}

	late, _ := tools.New("late", "registered later", nil, func(context.Context, json.RawMessage) (string, error) { return "late", nil })
	reg.MustRegister(late)
	reg.RemoveIn("a", "hook")
	// The next request of the scope brings its list up to date and notifies.
	if got := mcptest.ToolNames(t, csA); !slices.Contains(got, "late") || slices.Contains(got, "hook") {
		t.Errorf("after registry changes scope a lists %v", got)
	}
	select {
	case <-changed:
	case <-time.After(10 * time.Second):
		t.Error("no tools/list_changed notification")
	}
}
