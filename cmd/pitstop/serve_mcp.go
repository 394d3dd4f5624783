package main

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/spf13/pflag"

	"github.com/pitstop-llm/pitstop/runtime/api"
	"github.com/pitstop-llm/pitstop/tools"
	"github.com/pitstop-llm/pitstop/tools/mcp"
)

// mcpFlags are serve's MCP flags: servers whose tools pitstop runs, and
// /mcp, where pitstop's tools are served to MCP clients.
type mcpFlags struct {
	servers        []string
	headers        []string
	timeout        time.Duration
	connectTimeout time.Duration
	serve          bool
	serveProxied   bool
}

func addMCPFlags(fl *pflag.FlagSet, f *mcpFlags) {
	fl.StringArrayVar(&f.servers, "mcp", nil, `MCP server whose tools run server-side, as NAME=COMMAND [ARGS...] (stdio: pitstop starts the command and starts it again if it exits; quote the whole value) or NAME=URL (streamable HTTP); its tools are named NAME__tool (repeatable)`)
	fl.StringArrayVar(&f.headers, "mcp-header", nil, `header for an HTTP MCP server, as NAME=Header-Name: value, where ${ENV_VAR} in the value is read from the environment (repeatable)`)
	fl.DurationVar(&f.timeout, "mcp-timeout", 0, "timeout of one call of an MCP server's tool (0: --tool-timeout)")
	fl.DurationVar(&f.connectTimeout, "mcp-connect-timeout", 30*time.Second, "how long start-up waits for the MCP servers' first connections (a server not connected by then keeps being retried)")
	fl.BoolVar(&f.serve, "mcp-serve", true, "serve pitstop's tools over MCP at /mcp (streamable HTTP, behind the API keys)")
	fl.BoolVar(&f.serveProxied, "mcp-serve-proxied", false, "serve the tools of --mcp servers at /mcp too")
}

// mcpSpecs parses --mcp and --mcp-header into server specs.
func (f mcpFlags) specs(lookup func(string) (string, bool)) ([]mcp.ServerSpec, error) {
	if f.timeout < 0 || f.connectTimeout < 0 {
		return nil, fmt.Errorf("--mcp-timeout and --mcp-connect-timeout must not be negative")
	}
	specs := make([]mcp.ServerSpec, 0, len(f.servers))
	byName := map[string]int{}
	for _, v := range f.servers {
		s, err := mcp.ParseSpec(v)
		if err != nil {
			return nil, fmt.Errorf("--mcp: %w", err)
		}
		if _, dup := byName[s.Name]; dup {
			return nil, fmt.Errorf("--mcp: server name %q given twice", s.Name)
		}
		s.Timeout = f.timeout
		byName[s.Name] = len(specs)
		specs = append(specs, s)
	}
	for _, v := range f.headers {
		server, key, value, err := mcp.ParseHeader(v, lookup)
		if err != nil {
			return nil, fmt.Errorf("--mcp-header: %w", err)
		}
		i, ok := byName[server]
		switch {
		case !ok:
			return nil, fmt.Errorf("--mcp-header: no --mcp server named %q", server)
		case specs[i].Stdio():
			return nil, fmt.Errorf("--mcp-header: server %q is a command, not a URL; headers apply to HTTP servers", server)
		}
		if specs[i].Header == nil {
			specs[i].Header = http.Header{}
		}
		specs[i].Header.Add(key, value)
	}
	return specs, nil
}

// startMCP starts the --mcp servers in reg, waits up to --mcp-connect-timeout
// for their first connections (logging those still connecting, which keep
// being retried) and configures /mcp in acfg. The returned function stops
// the servers.
func startMCP(f mcpFlags, reg *tools.Registry, acfg *api.Config, log *slog.Logger) (func(), error) {
	specs, err := f.specs(nil)
	if err != nil {
		return nil, usageError{err.Error()}
	}
	set, err := mcp.StartAll(reg, specs, mcp.Options{Logger: log, TerminateAfter: 2 * time.Second})
	if err != nil {
		return nil, usageError{err.Error()}
	}
	acfg.MCP = api.MCPConfig{Disabled: !f.serve, Sources: set, ServeProxied: f.serveProxied}
	if len(specs) > 0 {
		ctx, cancel := context.WithTimeout(context.Background(), f.connectTimeout)
		if err := set.WaitReady(ctx); err != nil {
			log.Warn("MCP servers not connected yet; retrying in the background", "err", err)
		}
		cancel()
		for _, st := range set.Status() {
			log.Info("MCP server", "name", st.Name, "transport", st.Transport, "state", st.State, "tools", len(st.Tools), "skipped", len(st.Skipped))
		}
	}
	return func() { _ = set.Close() }, nil
}
