// Package mcp connects pitstop's tool system to the Model Context Protocol,
// both ways.
//
// As a client, a Source connects to one MCP server (a command pitstop starts
// and supervises, speaking over its stdin/stdout, or a streamable-HTTP
// endpoint), lists its tools and registers each in a tools.Registry as a
// server-side tool (named by ToolName: "SERVER__tool"), so that the
// executor runs it like any registered tool: arguments validated against the
// tool's inputSchema, per-tool timeout (cancellation reaches the server as
// notifications/cancelled), duration statistics, metrics, parallel calls.
// A notifications/tools/list_changed re-lists. When the process dies or the
// endpoint fails, calls in flight get error results, the tools stay listed
// but marked unavailable (their description says so and calls fail fast),
// and the Source reconnects with backoff.
//
// As a server, Handler serves the tools of a registry over streamable HTTP
// to MCP clients, one MCP server per registry scope (tenant), each call run
// through a caller-supplied Invoke (the runtime's, so that limits, program
// bookkeeping and metrics apply).
//
// Nothing of the protocol is written here: transports, sessions,
// initialization, pagination, cancellation and the HTTP handler are the
// official Go SDK's (github.com/modelcontextprotocol/go-sdk). What is
// written by hand is pitstop's side: naming, rendering content for the
// model, supervision and the registry bookkeeping.
//
// Files: spec.go (ServerSpec, ParseSpec), naming.go (ToolName, AssignNames),
// content.go (RenderContent), source.go (Source: connect, supervise,
// reconnect), source_tools.go (listing, registration, the tool handler),
// sources.go (Sources, a set of them), stderr.go (a command's stderr to the
// log), serve.go (Handler: the registry served over MCP).
package mcp
