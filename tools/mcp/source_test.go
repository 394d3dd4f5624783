package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"os"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pitstop-llm/pitstop/tools"
)

// quick are the options of Sources under test: fast reconnection.
func quick(log *slog.Logger) Options {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return Options{Logger: log, MinBackoff: 20 * time.Millisecond, MaxBackoff: 200 * time.Millisecond,
		ConnectTimeout: 20 * time.Second, TerminateAfter: time.Second}
}

func startSource(t *testing.T, reg *tools.Registry, spec ServerSpec, opts Options) *Source {
	t.Helper()
	s, err := Start(reg, spec, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := s.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	return s
}

func newExecutor(t *testing.T, reg *tools.Registry) *tools.Executor {
	t.Helper()
	ex, err := tools.NewExecutor(reg, tools.ExecutorConfig{DefaultTimeout: 20 * time.Second, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ex.Close)
	return ex
}

// eventually polls cond for up to 10 s.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func run(ex *tools.Executor, name, args string) tools.Result {
	return ex.Run(context.Background(), tools.Call{ID: "call-1", Name: name, Arguments: args})
}

// Tools come from every page of tools/list, under the naming rule, with
// their schemas; calls run through the executor (validation first), and the
// server's content and isError reach the result.
func TestSourceHTTPToolsAndCalls(t *testing.T) {
	fs := newFakeServer(2) // five tools: three pages
	h := startHTTPFake(t, fs)
	reg := tools.NewRegistry()
	spec := ServerSpec{Name: "srv", URL: h.url(), Header: http.Header{"Authorization": {"Bearer t0ken"}}}
	src := startSource(t, reg, spec, quick(nil))

	want := []string{"srv__add", "srv__echo_v2", "srv__fail", "srv__picture", "srv__sleep"}
	if got := reg.Names(); !slices.Equal(got, want) {
		t.Fatalf("registered %v, want %v", got, want)
	}
	if hd := h.header.Load(); hd == nil || hd.Get("Authorization") != "Bearer t0ken" {
		t.Errorf("the server did not get the configured header: %v", hd)
	}
	add, _ := reg.Get("srv__add")
	if add.Description != "Adds two numbers" || !strings.Contains(string(add.Parameters), `"required":["a","b"]`) {
		t.Errorf("add registered as %q %s", add.Description, add.Parameters)
	}
	st := src.Status()
	if st.State != StateConnected || st.Connects != 1 || st.Transport != "http" || len(st.Tools) != 5 ||
		st.Tools[1] != (ToolStatus{Name: "srv__echo_v2", MCPName: "echo.v2"}) {
		t.Errorf("status %+v", st)
	}

	ex := newExecutor(t, reg)
	if r := run(ex, "srv__add", `{"a":2,"b":3}`); r.IsError || r.Content != "The sum of 2 and 3 is 5." {
		t.Errorf("add: %+v", r)
	}
	if r := run(ex, "srv__echo_v2", `{"message":"hi"}`); r.IsError || r.Content != "Echo: hi" {
		t.Errorf("echo: %+v", r)
	}
	before := fs.calls.Load()
	if r := run(ex, "srv__add", `{"a":"two"}`); !r.IsError || !errors.Is(r.Err, tools.ErrInvalidArguments) {
		t.Errorf("bad arguments: %+v", r)
	}
	if fs.calls.Load() != before {
		t.Error("arguments that fail the schema reached the server")
	}
	r := run(ex, "srv__fail", "")
	var te *ToolError
	if !r.IsError || !errors.As(r.Err, &te) || !strings.Contains(r.Content, "boom: the disk is full") {
		t.Errorf("isError result: %+v", r)
	}
	if r := run(ex, "srv__picture", "{}"); r.IsError || r.Content != "A tiny picture:\n[image: image/png, 16 bytes, not shown]" {
		t.Errorf("picture: %+v", r)
	}
}

// A call past its tool's timeout ends with an error result and the
// cancellation reaches the server, which keeps serving.
func TestSourceTimeoutCancelsServerCall(t *testing.T) {
	fs := newFakeServer(0)
	h := startHTTPFake(t, fs)
	reg := tools.NewRegistry()
	startSource(t, reg, ServerSpec{Name: "srv", URL: h.url(), Timeout: 100 * time.Millisecond}, quick(nil))
	ex := newExecutor(t, reg)
	r := run(ex, "srv__sleep", `{"ms":30000}`)
	if !r.IsError || !errors.Is(r.Err, tools.ErrTimeout) {
		t.Fatalf("slow call: %+v", r)
	}
	select {
	case <-fs.cancelled:
	case <-time.After(10 * time.Second):
		t.Fatal("the server's handler was not cancelled")
	}
	if r := run(ex, "srv__add", `{"a":1,"b":1}`); r.IsError {
		t.Errorf("call after the timeout: %+v", r)
	}
}

// notifications/tools/list_changed re-lists: a new tool is registered, a
// removed one unregistered.
func TestSourceListChanged(t *testing.T) {
	fs := newFakeServer(0)
	h := startHTTPFake(t, fs)
	reg := tools.NewRegistry()
	startSource(t, reg, ServerSpec{Name: "srv", URL: h.url()}, quick(nil))
	fs.add("late", "Added later", `{"type":"object"}`, func(context.Context, map[string]any) (*sdk.CallToolResult, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "late"}}}, nil
	})
	eventually(t, "srv__late registered", func() bool { _, ok := reg.Get("srv__late"); return ok })
	fs.srv.RemoveTools("picture")
	eventually(t, "srv__picture removed", func() bool { _, ok := reg.Get("srv__picture"); return !ok })
	if r := run(newExecutor(t, reg), "srv__late", ""); r.IsError || r.Content != "late" {
		t.Errorf("late tool: %+v", r)
	}
}

// The endpoint goes away mid-call: the call gets an error result, the tools
// are marked unavailable and fail at once, and when the endpoint is back
// the Source reconnects and calls succeed.
func TestSourceHTTPEndpointFailure(t *testing.T) {
	fs := newFakeServer(0)
	h := startHTTPFake(t, fs)
	reg := tools.NewRegistry()
	src := startSource(t, reg, ServerSpec{Name: "srv", URL: h.url()}, quick(nil))
	ex := newExecutor(t, reg)

	before := fs.calls.Load()
	res := make(chan tools.Result, 1)
	go func() { res <- run(ex, "srv__sleep", `{"ms":30000}`) }()
	eventually(t, "the call to reach the server", func() bool { return fs.calls.Load() > before })
	h.stop()
	select {
	case r := <-res:
		if !r.IsError || errors.Is(r.Err, tools.ErrTimeout) {
			t.Errorf("call in flight when the endpoint failed: %+v", r)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("the call in flight did not end when the endpoint failed")
	}
	eventually(t, "state reconnecting", func() bool { return src.Status().State == StateReconnecting })
	add, _ := reg.Get("srv__add")
	if !strings.HasPrefix(add.Description, UnavailablePrefix) {
		t.Errorf("unavailable tool's description %q", add.Description)
	}
	if r := run(ex, "srv__add", `{"a":1,"b":2}`); !r.IsError || !strings.Contains(r.Content, "unavailable") {
		t.Errorf("call while unavailable: %+v", r)
	}

	h.start(h.addr)
	eventually(t, "reconnected", func() bool { return src.Status().State == StateConnected })
	if r := run(ex, "srv__add", `{"a":1,"b":2}`); r.IsError || r.Content != "The sum of 1 and 2 is 3." {
		t.Errorf("call after reconnecting: %+v", r)
	}
	add, _ = reg.Get("srv__add")
	if add.Description != "Adds two numbers" || src.Status().Connects != 2 {
		t.Errorf("after reconnecting: description %q, status %+v", add.Description, src.Status())
	}
}

// stderrWatch is a slog handler that passes on the lines a stdio server
// wrote to stderr.
type stderrWatch struct{ lines chan string }

func (w stderrWatch) Enabled(context.Context, slog.Level) bool { return true }
func (w stderrWatch) Handle(_ context.Context, r slog.Record) error {
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "line" {
			select {
			case w.lines <- a.Value.String():
			default:
			}
		}
		return true
	})
	return nil
}
func (w stderrWatch) WithAttrs([]slog.Attr) slog.Handler { return w }
func (w stderrWatch) WithGroup(string) slog.Handler      { return w }

// A stdio server (this test binary) killed mid-call: the call's result is
// an error, pitstop starts the server again, the next call succeeds.
func TestSourceStdioProcessKilled(t *testing.T) {
	watch := stderrWatch{lines: make(chan string, 64)}
	reg := tools.NewRegistry()
	spec := ServerSpec{Name: "local", Command: []string{os.Args[0], "-test.run=^$"}, Env: []string{stdioServerEnv + "=1"}}
	src := startSource(t, reg, spec, quick(slog.New(watch)))
	ex := newExecutor(t, reg)
	if r := run(ex, "local__add", `{"a":20,"b":22}`); r.IsError || r.Content != "The sum of 20 and 22 is 42." {
		t.Fatalf("add over stdio: %+v", r)
	}
	pid := src.Status().PID
	if pid <= 0 {
		t.Fatalf("no pid in %+v", src.Status())
	}
	res := make(chan tools.Result, 1)
	go func() { res <- run(ex, "local__sleep", `{"ms":30000}`) }()
	waitLine(t, watch, "sleep started")
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	select {
	case r := <-res:
		if !r.IsError || errors.Is(r.Err, tools.ErrTimeout) {
			t.Errorf("call in flight when the server died: %+v", r)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("the call in flight did not end when the server died")
	}
	eventually(t, "a new server process", func() bool {
		st := src.Status()
		return st.State == StateConnected && st.Connects == 2 && st.PID != pid
	})
	if r := run(ex, "local__add", `{"a":1,"b":2}`); r.IsError || r.Content != "The sum of 1 and 2 is 3." {
		t.Errorf("call after the restart: %+v", r)
	}
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("the killed server's process was not reaped: kill(pid, 0) = %v", err)
	}
}

func waitLine(t *testing.T, w stderrWatch, want string) {
	t.Helper()
	timeout := time.After(15 * time.Second)
	for {
		select {
		case l := <-w.lines:
			if strings.Contains(l, want) {
				return
			}
		case <-timeout:
			t.Fatalf("the server never wrote %q to stderr", want)
		}
	}
}

// A name a Go tool already has is not taken over: that MCP tool is
// skipped and said so; the others register. Close removes the tools.
func TestSourceNameTakenAndClose(t *testing.T) {
	fs := newFakeServer(0)
	h := startHTTPFake(t, fs)
	reg := tools.NewRegistry()
	mine, err := tools.New("srv__add", "the operator's own", nil, func(context.Context, json.RawMessage) (string, error) { return "mine", nil })
	if err != nil {
		t.Fatal(err)
	}
	reg.MustRegister(mine)
	src := startSource(t, reg, ServerSpec{Name: "srv", URL: h.url()}, quick(nil))
	st := src.Status()
	if len(st.Skipped) != 1 || st.Skipped[0].MCPName != "add" || !strings.Contains(st.Skipped[0].Reason, "already registered") {
		t.Errorf("skipped %+v", st.Skipped)
	}
	if got, _ := reg.Get("srv__add"); got.Description != "the operator's own" {
		t.Errorf("the Go tool was replaced: %q", got.Description)
	}
	if src.Owns("srv__add") || !src.Owns("srv__fail") {
		t.Error("Owns is wrong")
	}
	if err := src.Close(); err != nil {
		t.Fatal(err)
	}
	if got := reg.Names(); !slices.Equal(got, []string{"srv__add"}) {
		t.Errorf("after Close: %v", got)
	}
	if st := src.Status(); st.State != StateClosed {
		t.Errorf("state after Close: %s", st.State)
	}
}

// A server not reachable at start: WaitReady says why; the Source keeps
// trying and connects once the server is up.
func TestSourceUnreachableAtStart(t *testing.T) {
	fs := newFakeServer(0)
	h := startHTTPFake(t, fs)
	h.stop()
	reg := tools.NewRegistry()
	src, err := Start(reg, ServerSpec{Name: "srv", URL: h.url()}, quick(nil))
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if err := src.WaitReady(ctx); err == nil || !strings.Contains(err.Error(), "connecting to") {
		t.Errorf("WaitReady: %v", err)
	}
	if reg.Len() != 0 {
		t.Errorf("tools before connecting: %v", reg.Names())
	}
	h.start(h.addr)
	ctx2, cancel2 := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel2()
	if err := src.WaitReady(ctx2); err != nil {
		t.Fatal(err)
	}
	if reg.Len() != 5 {
		t.Errorf("tools after connecting: %v", reg.Names())
	}
}

func TestStartRefusesBadSpecs(t *testing.T) {
	reg := tools.NewRegistry()
	for _, spec := range []ServerSpec{
		{Name: "x"},
		{Name: "bad name", URL: "http://127.0.0.1:1/mcp"},
		{Name: "x", Command: []string{"/nonexistent/mcp-server"}},
	} {
		if s, err := Start(reg, spec, Options{}); err == nil {
			s.Close()
			t.Errorf("Start(%+v) accepted", spec)
		}
	}
	if _, err := StartAll(reg, []ServerSpec{{Name: "a", URL: "http://127.0.0.1:1/mcp"}, {Name: "a", URL: "http://127.0.0.1:2/mcp"}}, quick(nil)); err == nil {
		t.Error("two servers of one name accepted")
	}
}
