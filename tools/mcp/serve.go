package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pitstop-llm/pitstop/tools"
)

// DefaultSessionTimeout closes an MCP client's session at /mcp after this
// long without a request.
const DefaultSessionTimeout = 30 * time.Minute

// ServeCall is one tools/call received by a Handler.
type ServeCall struct {
	Scope     string // the caller's registry scope (tenant)
	Tool      string
	Arguments string      // the JSON object the client sent ("" when none)
	Header    http.Header // the HTTP request's header
}

// ServeConfig configures a Handler.
type ServeConfig struct {
	// Registry holds the tools to serve: a scope's callers see its
	// ListIn(scope).
	Registry *tools.Registry
	// Invoke runs a call (the runtime's Invoke, so that limits, program
	// bookkeeping and metrics apply). A Go error becomes an error result
	// whose text is the error's.
	Invoke func(ctx context.Context, call ServeCall) (tools.Result, error)
	// Include, if set, keeps only the tools it accepts (e.g. to leave out
	// the tools pitstop proxies from MCP servers).
	Include func(name string) bool
	// Version is the version pitstop announces (empty: "dev").
	Version string
	// SessionTimeout closes idle sessions (0: DefaultSessionTimeout).
	SessionTimeout time.Duration
	Logger         *slog.Logger
}

// Handler serves a registry's tools over MCP (streamable HTTP, the SDK's
// handler): one MCP server and one session table per scope, so a session
// opened by one tenant's key cannot be used with another's. Each request
// first brings its scope's tool list up to date with the registry (sessions
// get notifications/tools/list_changed when it changed).
type Handler struct {
	cfg    ServeConfig
	mu     sync.Mutex
	scopes map[string]*scopeServer
}

// scopeServer is the MCP server of one scope.
type scopeServer struct {
	scope  string
	mu     sync.Mutex
	server *sdk.Server
	http   *sdk.StreamableHTTPHandler
	served map[string]string // tool name → description and schema it was served with
}

// NewHandler returns a Handler.
func NewHandler(cfg ServeConfig) (*Handler, error) {
	if cfg.Registry == nil || cfg.Invoke == nil {
		return nil, errors.New("mcp: serving needs a registry and an invoke function")
	}
	if cfg.Version == "" {
		cfg.Version = "dev"
	}
	if cfg.SessionTimeout <= 0 {
		cfg.SessionTimeout = DefaultSessionTimeout
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	// The SDK logs every session's start and end at Info: keep its warnings.
	cfg.Logger = slog.New(minLevel{Handler: cfg.Logger.Handler(), min: slog.LevelWarn})
	return &Handler{cfg: cfg, scopes: map[string]*scopeServer{}}, nil
}

// ServeScope serves one MCP request of a caller of scope (its
// authentication already checked).
func (h *Handler) ServeScope(scope string, w http.ResponseWriter, r *http.Request) {
	ss := h.scope(scope)
	ss.sync(h)
	ss.http.ServeHTTP(w, r)
}

func (h *Handler) scope(scope string) *scopeServer {
	h.mu.Lock()
	defer h.mu.Unlock()
	ss := h.scopes[scope]
	if ss == nil {
		ss = &scopeServer{scope: scope, served: map[string]string{}}
		ss.server = sdk.NewServer(&sdk.Implementation{Name: "pitstop", Version: h.cfg.Version}, &sdk.ServerOptions{
			Logger: h.cfg.Logger,
			// Advertise tools (with list_changed) even while none is served.
			Capabilities: &sdk.ServerCapabilities{Tools: &sdk.ToolCapabilities{ListChanged: true}},
		})
		ss.http = sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return ss.server },
			&sdk.StreamableHTTPOptions{SessionTimeout: h.cfg.SessionTimeout, Logger: h.cfg.Logger})
		h.scopes[scope] = ss
	}
	return ss
}

// sync makes the scope's MCP server offer the registry's current tools.
func (ss *scopeServer) sync(h *Handler) {
	want := map[string]*tools.Tool{}
	for _, t := range h.cfg.Registry.ListIn(ss.scope) {
		if h.cfg.Include == nil || h.cfg.Include(t.Name) {
			want[t.Name] = t
		}
	}
	ss.mu.Lock()
	defer ss.mu.Unlock()
	var gone []string
	for name := range ss.served {
		if want[name] == nil {
			gone = append(gone, name)
			delete(ss.served, name)
		}
	}
	if len(gone) > 0 {
		ss.server.RemoveTools(gone...)
	}
	for name, t := range want {
		def := t.Definition().Function
		fp := def.Description + "\x00" + string(def.Parameters)
		if ss.served[name] == fp {
			continue
		}
		if err := ss.add(h, def.Name, def.Description, def.Parameters); err != nil {
			h.cfg.Logger.Error("serving tool over MCP", "tool", name, "err", err)
			continue
		}
		ss.served[name] = fp
	}
}

// add adds (or replaces) one tool of the scope's server.
func (ss *scopeServer) add(h *Handler, name, desc string, params json.RawMessage) (err error) {
	var schema map[string]any
	if err := json.Unmarshal(params, &schema); err != nil {
		return fmt.Errorf("parameters schema: %w", err)
	}
	if _, ok := schema["type"]; !ok {
		schema["type"] = "object" // MCP wants it said; the registry allows it implied
	}
	defer func() {
		if p := recover(); p != nil { // AddTool panics on a schema it refuses
			err = fmt.Errorf("refused by the MCP SDK: %v", p)
		}
	}()
	scope := ss.scope
	ss.server.AddTool(&sdk.Tool{Name: name, Description: desc, InputSchema: schema},
		func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			call := ServeCall{Scope: scope, Tool: name}
			if req.Params != nil {
				call.Arguments = string(req.Params.Arguments)
			}
			if req.Extra != nil {
				call.Header = req.Extra.Header
			}
			res, err := h.cfg.Invoke(ctx, call)
			if err != nil {
				return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: err.Error()}}}, nil
			}
			return &sdk.CallToolResult{IsError: res.IsError, Content: []sdk.Content{&sdk.TextContent{Text: res.Content}}}, nil
		})
	return nil
}

// minLevel drops records below min.
type minLevel struct {
	slog.Handler
	min slog.Level
}

func (m minLevel) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= m.min && m.Handler.Enabled(ctx, l)
}

func (m minLevel) WithAttrs(a []slog.Attr) slog.Handler {
	return minLevel{Handler: m.Handler.WithAttrs(a), min: m.min}
}

func (m minLevel) WithGroup(name string) slog.Handler {
	return minLevel{Handler: m.Handler.WithGroup(name), min: m.min}
}
