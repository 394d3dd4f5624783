package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pitstop-llm/pitstop/tools"
)

// UnavailablePrefix starts the description of a tool whose server is
// unreachable (GET /v1/tools and the prompt's tool list show it).
const UnavailablePrefix = "UNAVAILABLE"

// ownedTool is a tool a Source registered.
type ownedTool struct {
	mcpName string
	tool    *tools.Tool // as registered while the server is connected
}

// SkippedTool is a tool of the server that is not registered, and why.
type SkippedTool struct {
	MCPName string `json:"mcp_name"`
	Reason  string `json:"reason"`
}

// ToolError is the error of a call whose result the server marked isError:
// the tool ran and failed. Its text is the result's content.
type ToolError struct {
	Server, Tool, Text string
}

func (e *ToolError) Error() string {
	if e.Text == "" {
		return fmt.Sprintf("MCP tool %q of server %q reported an error without content", e.Tool, e.Server)
	}
	return e.Text
}

// syncTools lists the server's tools (every page) and makes the registry
// follow: new tools registered, changed ones replaced, vanished ones removed.
func (s *Source) syncTools(ctx context.Context, cs *sdk.ClientSession) error {
	var listed []*sdk.Tool
	seen := map[string]bool{}
	for t, err := range cs.Tools(ctx, nil) {
		if err != nil {
			return err
		}
		if t == nil || seen[t.Name] {
			continue
		}
		seen[t.Name] = true
		listed = append(listed, t)
	}
	names := make([]string, len(listed))
	for i, t := range listed {
		names[i] = t.Name
	}
	assigned := AssignNames(s.spec.Name, names)
	slices.SortFunc(listed, func(a, b *sdk.Tool) int { return strings.Compare(a.Name, b.Name) })

	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ctx.Err() != nil {
		return s.ctx.Err()
	}
	keep := map[string]bool{}
	var skipped []SkippedTool
	for _, mt := range listed {
		name, ok := assigned[mt.Name]
		if !ok {
			skipped = append(skipped, SkippedTool{MCPName: mt.Name, Reason: "no valid name could be made for it (empty, or its hashed name collides)"})
			continue
		}
		t, err := s.buildTool(name, mt)
		if err == nil {
			_, mine := s.owned[name]
			err = s.reg.RegisterIn("", t, tools.ScopeOptions{Replace: mine})
		}
		if err != nil {
			skipped = append(skipped, SkippedTool{MCPName: mt.Name, Reason: err.Error()})
			continue
		}
		s.owned[name] = ownedTool{mcpName: mt.Name, tool: t}
		keep[name] = true
	}
	for name := range s.owned {
		if !keep[name] {
			s.reg.RemoveIn("", name)
			delete(s.owned, name)
		}
	}
	for _, sk := range skipped {
		s.log.Warn("MCP tool not registered", "tool", sk.MCPName, "reason", sk.Reason)
	}
	s.skipped = skipped
	return nil
}

// buildTool makes the registry's tool for MCP tool mt.
func (s *Source) buildTool(name string, mt *sdk.Tool) (*tools.Tool, error) {
	var params json.RawMessage
	if mt.InputSchema != nil {
		b, err := json.Marshal(mt.InputSchema)
		if err != nil {
			return nil, fmt.Errorf("inputSchema: %w", err)
		}
		params = b
	}
	desc := mt.Description
	if desc == "" {
		desc = mt.Title
	}
	return tools.New(name, desc, params, s.handler(mt.Name), tools.WithTimeout(s.spec.Timeout))
}

// handler calls MCP tool mcpName on the live session. Arguments arrive
// validated by the executor, and ctx ends at the tool's timeout: the SDK
// then sends notifications/cancelled to the server.
func (s *Source) handler(mcpName string) tools.Handler {
	return func(ctx context.Context, args json.RawMessage) (string, error) {
		cs, err := s.current()
		if err != nil {
			return "", err
		}
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: mcpName, Arguments: args})
		if err != nil {
			if ctx.Err() != nil {
				return "", ctx.Err()
			}
			if werr := serverError(err); werr != nil {
				// The server answered with a protocol error: the connection
				// is fine.
				return "", fmt.Errorf("MCP server %q refused the call of %q: %s", s.spec.Name, mcpName, werr.Message)
			}
			go s.check(cs, err)
			return "", fmt.Errorf("MCP server %q: the call failed on the connection: %w", s.spec.Name, err)
		}
		text := RenderContent(res)
		if res.IsError {
			return "", &ToolError{Server: s.spec.Name, Tool: mcpName, Text: text}
		}
		return text, nil
	}
}

// Codes of errors the SDK makes on the client's side (its jsonrpc2
// extensions), not answers of the server.
const (
	codeClientClosing = -32003
	codeServerClosing = -32004
	codeRejected      = -32005 // the transport could not deliver the request
)

// serverError returns the JSON-RPC error the server answered with, or nil
// when err is the connection's (transport failures, closing).
func serverError(err error) *jsonrpc.Error {
	var werr *jsonrpc.Error
	if !errors.As(err, &werr) {
		return nil
	}
	switch werr.Code {
	case codeClientClosing, codeServerClosing, codeRejected:
		return nil
	}
	return werr
}

// checkTimeout bounds the ping that tells a broken connection from a
// request the transport refused alone.
const checkTimeout = 5 * time.Second

// check pings the server after a call failed on the connection, and ends
// the session when the ping fails too (the supervisor reconnects).
func (s *Source) check(cs *sdk.ClientSession, callErr error) {
	ctx, cancel := context.WithTimeout(s.ctx, checkTimeout)
	defer cancel()
	if err := cs.Ping(ctx, nil); err != nil && s.ctx.Err() == nil {
		s.fault(cs, fmt.Errorf("%w; then a ping failed: %v", callErr, err))
	}
}

// markUnavailable records why the server is unreachable and re-registers
// its tools with descriptions that say so (their handlers fail at once
// until the server is back).
func (s *Source) markUnavailable(cause error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state == StateClosed || s.ctx.Err() != nil {
		return
	}
	s.session, s.pid, s.lastErr, s.since = nil, 0, cause, time.Now()
	s.state = StateReconnecting
	for name, o := range s.owned {
		t := *o.tool
		t.Description = fmt.Sprintf("%s (MCP server %q is reconnecting: %s). %s", UnavailablePrefix, s.spec.Name, firstLine(cause), o.tool.Description)
		if err := s.reg.RegisterIn("", &t, tools.ScopeOptions{Replace: true}); err != nil {
			s.log.Error("marking MCP tool unavailable", "tool", name, "err", err)
		}
	}
}

// firstLine is the first line of err's text, at most 200 bytes.
func firstLine(err error) string {
	if err == nil {
		return "unknown cause"
	}
	msg, _, _ := strings.Cut(err.Error(), "\n")
	if len(msg) > 200 {
		msg = strings.ToValidUTF8(msg[:200], "") + "…"
	}
	return msg
}

// ToolStatus is one registered tool of a Source.
type ToolStatus struct {
	Name    string `json:"name"`     // pitstop's name
	MCPName string `json:"mcp_name"` // the server's name
}

// Status is a Source's state, for operators and tests.
type Status struct {
	Name      string        `json:"name"`
	Transport string        `json:"transport"` // "stdio" or "http"
	Target    string        `json:"target"`    // command line or URL
	State     State         `json:"state"`
	Since     time.Time     `json:"since"`
	LastError string        `json:"last_error,omitempty"`
	Connects  int           `json:"connects"`      // successful connections so far
	PID       int           `json:"pid,omitempty"` // a connected stdio server's process
	Tools     []ToolStatus  `json:"tools"`
	Skipped   []SkippedTool `json:"skipped,omitempty"`
}

// Status returns the Source's state.
func (s *Source) Status() Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := Status{Name: s.spec.Name, Transport: "http", Target: s.spec.Target(), State: s.state, Since: s.since,
		Connects: s.connects, PID: s.pid, Tools: []ToolStatus{}, Skipped: slices.Clone(s.skipped)}
	if s.spec.Stdio() {
		st.Transport = "stdio"
	}
	if s.lastErr != nil {
		st.LastError = s.lastErr.Error()
	}
	for name, o := range s.owned {
		st.Tools = append(st.Tools, ToolStatus{Name: name, MCPName: o.mcpName})
	}
	slices.SortFunc(st.Tools, func(a, b ToolStatus) int { return strings.Compare(a.Name, b.Name) })
	return st
}

// Owns reports whether name is one of the tools this Source registered.
func (s *Source) Owns(name string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.owned[name]
	return ok
}
