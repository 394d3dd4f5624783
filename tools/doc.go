// Package tools is pitstop's tool system: a registry of tools the runtime runs
// itself when a model emits a tool call, typed registration from Go functions
// (the JSON Schema of the parameters is generated from the argument struct),
// argument validation, an executor (per-tool timeout and concurrency limit,
// panic recovery, cancellation, output cap), a result cache for idempotent
// tools, webhook (remote HTTP) tools and a few built-in tools.
//
// The runtime's side of a tool call is:
//
//	res := executor.Run(ctx, tools.Call{ID: id, Name: name, Arguments: args})
//	// res.Content goes back to the model as the tool message; res.IsError
//	// says whether it is an error result. A bad call from the model (unknown
//	// tool, invalid arguments, failing or hanging handler) is never a Go
//	// error to the runtime: it is a Result the model can read and react to.
//
// Files: tool.go (Tool, options), registry.go (Registry, OpenAI
// definitions), func.go (typed registration), validate.go (schemas and
// argument validation), executor.go (Executor, Result, Observer),
// output.go (output cap), cache.go (result cache), webhook.go (remote
// tools and their signatures), dial_policy.go (which addresses outgoing
// requests may reach), egress_*.go (the client of outgoing requests, its
// redirect rule, the registration-time host check, failures that never
// name the target, webhook limits), builtin*.go (built-in tools; the calculator's
// evaluator is package calc).
package tools
