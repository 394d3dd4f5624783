package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// fakeServer is an MCP server made with the SDK, for tests: add, echo.v2
// (a name with a dot), fail (an isError result), picture (text and an
// image), sleep (waits, and reports when its call is cancelled).
type fakeServer struct {
	srv       *sdk.Server
	calls     atomic.Int64
	cancelled chan string
	// announce, if set, is told when a sleep call starts.
	announce func(string)
}

func newFakeServer(pageSize int) *fakeServer {
	fs := &fakeServer{cancelled: make(chan string, 16)}
	fs.srv = sdk.NewServer(&sdk.Implementation{Name: "fake", Version: "1"}, &sdk.ServerOptions{PageSize: pageSize})
	text := func(s string) *sdk.CallToolResult {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: s}}}
	}
	fs.add("add", "Adds two numbers", `{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"}},"required":["a","b"],"additionalProperties":false}`,
		func(_ context.Context, args map[string]any) (*sdk.CallToolResult, error) {
			a, _ := args["a"].(float64)
			b, _ := args["b"].(float64)
			return text(fmt.Sprintf("The sum of %g and %g is %g.", a, b, a+b)), nil
		})
	fs.add("echo.v2", "Echoes back the input", `{"type":"object","properties":{"message":{"type":"string"}},"required":["message"]}`,
		func(_ context.Context, args map[string]any) (*sdk.CallToolResult, error) {
			return text(fmt.Sprintf("Echo: %v", args["message"])), nil
		})
	fs.add("fail", "Always fails", `{"type":"object","properties":{}}`,
		func(context.Context, map[string]any) (*sdk.CallToolResult, error) {
			r := text("boom: the disk is full")
			r.IsError = true
			return r, nil
		})
	fs.add("picture", "Returns a picture", `{"type":"object"}`,
		func(context.Context, map[string]any) (*sdk.CallToolResult, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "A tiny picture:"},
				&sdk.ImageContent{MIMEType: "image/png", Data: []byte("not really a png")}}}, nil
		})
	fs.add("sleep", "Waits ms milliseconds", `{"type":"object","properties":{"ms":{"type":"integer","minimum":0}},"required":["ms"]}`,
		func(ctx context.Context, args map[string]any) (*sdk.CallToolResult, error) {
			ms, _ := args["ms"].(float64)
			if fs.announce != nil {
				fs.announce("sleep started")
			}
			select {
			case <-time.After(time.Duration(ms) * time.Millisecond):
				return text("slept"), nil
			case <-ctx.Done():
				fs.cancelled <- "sleep"
				return nil, ctx.Err()
			}
		})
	return fs
}

func (fs *fakeServer) add(name, desc, schema string, h func(context.Context, map[string]any) (*sdk.CallToolResult, error)) {
	fs.srv.AddTool(&sdk.Tool{Name: name, Description: desc, InputSchema: json.RawMessage(schema)},
		func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			fs.calls.Add(1)
			var args map[string]any
			if len(req.Params.Arguments) > 0 {
				if err := json.Unmarshal(req.Params.Arguments, &args); err != nil {
					return nil, err
				}
			}
			return h(ctx, args)
		})
}

// httpFake serves a fakeServer over streamable HTTP on a loopback port that
// can be stopped and started again at the same address.
type httpFake struct {
	t    *testing.T
	fs   *fakeServer
	addr string
	srv  *http.Server
	// header is the header of the last request seen.
	header atomic.Pointer[http.Header]
}

func startHTTPFake(t *testing.T, fs *fakeServer) *httpFake {
	t.Helper()
	h := &httpFake{t: t, fs: fs}
	h.start("127.0.0.1:0")
	t.Cleanup(h.stop)
	return h
}

func (h *httpFake) url() string { return "http://" + h.addr + "/mcp" }

func (h *httpFake) start(addr string) {
	h.t.Helper()
	var ln net.Listener
	var err error
	for range 50 { // the port of a stopped server can take a moment to free
		if ln, err = net.Listen("tcp", addr); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		h.t.Fatal(err)
	}
	h.addr = ln.Addr().String()
	mcpHandler := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return h.fs.srv }, nil)
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hd := r.Header.Clone()
		h.header.Store(&hd)
		mcpHandler.ServeHTTP(w, r)
	})}
	h.srv = srv
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			fmt.Fprintln(os.Stderr, "fake MCP server:", err)
		}
	}()
}

// stop closes the listener and every connection at once.
func (h *httpFake) stop() { _ = h.srv.Close() }

// stdioServerEnv makes the test binary an MCP server over stdio (TestMain).
const stdioServerEnv = "PITSTOP_MCP_TEST_STDIO_SERVER"

func TestMain(m *testing.M) {
	if os.Getenv(stdioServerEnv) == "1" {
		fs := newFakeServer(0)
		fs.announce = func(s string) { fmt.Fprintln(os.Stderr, s) }
		if err := fs.srv.Run(context.Background(), &sdk.StdioTransport{}); err != nil {
			fmt.Fprintln(os.Stderr, "stdio test server:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}
