package api

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/pitstop-llm/pitstop/runtime"
	"github.com/pitstop-llm/pitstop/tools"
	"github.com/pitstop-llm/pitstop/tools/mcp"
)

// MCPConfig says how pitstop's tools are served over MCP at /mcp, and which
// MCP servers pitstop takes tools from (GET /v1/mcp/servers).
type MCPConfig struct {
	// Disabled leaves /mcp out.
	Disabled bool
	// Sources are the MCP servers whose tools pitstop proxies (nil: none).
	Sources *mcp.Sources
	// ServeProxied serves the proxied tools at /mcp too; by default /mcp
	// serves pitstop's own tools (built-ins, Go tools, webhooks).
	ServeProxied bool
	// Version is the version pitstop announces to MCP clients.
	Version string
}

// mountMCP adds /mcp (streamable HTTP, behind the API keys like every
// route: a caller sees the server's tools and its tenant's own) and GET
// /v1/mcp/servers.
func (s *Server) mountMCP(e *echo.Echo) error {
	e.GET("/v1/mcp/servers", s.listMCPServers)
	if s.cfg.MCP.Disabled {
		return nil
	}
	var include func(string) bool
	if src := s.cfg.MCP.Sources; src != nil && !s.cfg.MCP.ServeProxied {
		include = func(name string) bool { return !src.Owns(name) }
	}
	h, err := mcp.NewHandler(mcp.ServeConfig{Registry: s.rt.Tools(), Invoke: s.invokeMCP, Include: include,
		Version: s.cfg.MCP.Version, Logger: s.log})
	if err != nil {
		return err
	}
	e.Match([]string{http.MethodGet, http.MethodPost, http.MethodDelete}, "/mcp", func(c echo.Context) error {
		// The program headers book calls to a program, as on
		// /v1/tools/{name}/invoke; a bad one is refused before MCP sees it.
		if _, _, _, aerr := programHeaders(c); aerr != nil {
			return aerr
		}
		h.ServeScope(who(c).tenant, c.Response(), c.Request())
		return nil
	})
	return nil
}

// invokeMCP runs a tools/call of /mcp through the runtime (tenant limits,
// program bookkeeping, duration statistics, metrics). Arguments the schema
// refuses are an error result with the executor's text.
func (s *Server) invokeMCP(ctx context.Context, call mcp.ServeCall) (tools.Result, error) {
	req := runtime.InvokeRequest{Tenant: call.Scope, Tool: call.Tool, Arguments: call.Arguments}
	if call.Header != nil {
		req.Program = strings.TrimSpace(call.Header.Get(HeaderProgram))
		req.Thread = strings.TrimSpace(call.Header.Get(HeaderThread))
	}
	res, err := s.rt.Invoke(ctx, req)
	if err != nil && res.IsError {
		return res, nil
	}
	if err != nil {
		return res, errors.New(runtime.AsError(err).Msg)
	}
	return res, nil
}

// listMCPServers lists the MCP servers pitstop takes tools from and their
// state (command lines and URLs are the operator's: admin keys only when
// keys are configured).
func (s *Server) listMCPServers(c echo.Context) error {
	if !who(c).admin {
		return newError(http.StatusForbidden, typePermission, "", "admin_only",
			"/v1/mcp/servers shows the server's configuration: it is served to admin keys only.")
	}
	return c.JSON(http.StatusOK, map[string]any{"object": "list", "data": s.cfg.MCP.Sources.Status()})
}
