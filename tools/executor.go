package tools

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"strings"
	"sync"
	"time"
)

// DefaultTimeout bounds a tool call when neither the tool nor the executor
// says otherwise.
const DefaultTimeout = 30 * time.Second

// Errors a Result.Err can wrap (besides a handler's own error and
// context.Canceled / context.DeadlineExceeded).
var (
	ErrUnknownTool = errors.New("unknown tool")
	ErrTimeout     = errors.New("tool timed out")
	ErrPanic       = errors.New("tool panicked")
)

// ArgumentsError says why a call's arguments were refused. It matches
// errors.Is(err, ErrInvalidArguments).
type ArgumentsError struct {
	Tool   string
	Detail string
}

func (e *ArgumentsError) Error() string {
	return fmt.Sprintf("invalid arguments for tool %q: %s", e.Tool, e.Detail)
}

// Is makes errors.Is(err, ErrInvalidArguments) true.
func (e *ArgumentsError) Is(target error) bool { return target == ErrInvalidArguments }

// Call is one tool call the model emitted.
type Call struct {
	ID        string // the model's tool_call id
	Name      string // the function name
	Arguments string // the arguments, a JSON object as text (may be empty)
	// Scope is the registry scope of the caller (a tenant): the call runs
	// a global tool or one of that scope's (see Registry).
	Scope string
}

// Result is the outcome of a call. Content is what goes back to the model as
// the tool message: valid UTF-8, within the tool's output cap; for an error
// result (IsError) it starts with "error: " and says what went wrong.
type Result struct {
	CallID  string
	Name    string
	Content string
	IsError bool
	// Truncated: the output was longer than the cap and was cut.
	Truncated bool
	// Cached: the content came from the result cache; the handler did not run.
	Cached bool
	// Started is when the handler began (after any wait for a concurrency
	// slot) or, when it never ran, when the call was received. Finished is
	// when the result was ready.
	Started, Finished time.Time
	// Waited is how long the call waited for a concurrency slot.
	Waited time.Duration
	// Err is the Go-side cause of an error result, for logs and metrics:
	// it wraps ErrUnknownTool, ErrInvalidArguments, ErrTimeout, ErrPanic,
	// context.Canceled, or is the handler's own error. Nil on success.
	Err error
}

// Duration is how long the call ran (Finished - Started).
func (r Result) Duration() time.Duration { return r.Finished.Sub(r.Started) }

// Observer is told about every finished call, e.g. to feed metrics or the
// tool-duration predictor. It must be safe for concurrent use and quick.
// For a call of an unknown tool, name is the name the model used; for a
// scoped tool it is StatsKey(scope, name), so that two scopes' tools of one
// name keep apart statistics.
type Observer interface {
	ToolFinished(name string, d time.Duration, isError, cached bool)
}

// ObserverFunc adapts a function to Observer.
type ObserverFunc func(name string, d time.Duration, isError, cached bool)

// ToolFinished calls f.
func (f ObserverFunc) ToolFinished(name string, d time.Duration, isError, cached bool) {
	f(name, d, isError, cached)
}

// ExecutorConfig configures an Executor. The zero value is usable.
type ExecutorConfig struct {
	// DefaultTimeout applies to tools without their own (0: DefaultTimeout).
	DefaultTimeout time.Duration
	// MaxOutputBytes applies to tools without their own cap (0:
	// DefaultMaxOutputBytes).
	MaxOutputBytes int
	// CacheMaxBytes bounds the result cache of idempotent tools, counted in
	// bytes of cached results (0: DefaultCacheMaxBytes; negative: no cache).
	CacheMaxBytes int64
	// CacheTTL applies to idempotent tools without their own TTL (0:
	// DefaultCacheTTL).
	CacheTTL time.Duration
	// Observer, if set, is told about every finished call.
	Observer Observer
	// Logger receives panics of handlers with their stack (nil:
	// slog.Default()).
	Logger *slog.Logger
}

// Executor runs tool calls against a Registry. It is safe for concurrent
// use.
type Executor struct {
	reg   *Registry
	cfg   ExecutorConfig
	cache *resultCache
}

// NewExecutor returns an executor of the tools in reg. Close it when done to
// free the result cache.
func NewExecutor(reg *Registry, cfg ExecutorConfig) (*Executor, error) {
	if reg == nil {
		return nil, errors.New("tools: nil registry")
	}
	if cfg.DefaultTimeout < 0 || cfg.MaxOutputBytes < 0 || cfg.CacheTTL < 0 {
		return nil, errors.New("tools: negative timeout, output cap or cache TTL")
	}
	if cfg.DefaultTimeout == 0 {
		cfg.DefaultTimeout = DefaultTimeout
	}
	if cfg.MaxOutputBytes == 0 {
		cfg.MaxOutputBytes = DefaultMaxOutputBytes
	}
	if cfg.CacheTTL == 0 {
		cfg.CacheTTL = DefaultCacheTTL
	}
	if cfg.CacheMaxBytes == 0 {
		cfg.CacheMaxBytes = DefaultCacheMaxBytes
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	e := &Executor{reg: reg, cfg: cfg}
	if cfg.CacheMaxBytes > 0 {
		c, err := newResultCache(cfg.CacheMaxBytes)
		if err != nil {
			return nil, err
		}
		e.cache = c
	}
	return e, nil
}

// Close frees the result cache. Call it once every Run has returned; calls
// after Close run without the cache.
func (e *Executor) Close() {
	e.cache.close()
}

// Registry returns the executor's registry.
func (e *Executor) Registry() *Registry { return e.reg }

type callIDKey struct{}

// CallIDFromContext returns the id of the tool call a handler is running
// for (empty when unknown).
func CallIDFromContext(ctx context.Context) string {
	id, _ := ctx.Value(callIDKey{}).(string)
	return id
}

// ContextWithCallID returns ctx carrying a tool call id, as the executor
// gives handlers; useful to test a handler directly.
func ContextWithCallID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, callIDKey{}, id)
}

// outcome is what a handler goroutine reports.
type outcome struct {
	out      string
	err      error
	panicked bool
	panicVal any
}

// Run runs one tool call: it looks the tool up, validates the arguments,
// serves an idempotent tool from the cache, waits for a concurrency slot
// (giving up when ctx ends), runs the handler under the tool's timeout with
// panic recovery, and caps and sanitizes the output. It never panics and
// always returns a Result: failures are error results the model can read.
func (e *Executor) Run(ctx context.Context, call Call) Result {
	res := Result{CallID: call.ID, Name: strings.ToValidUTF8(call.Name, "\uFFFD"), Started: time.Now()}
	ent := e.reg.entry(call.Scope, call.Name)
	if ent == nil {
		names := e.reg.NamesIn(call.Scope)
		list := "no tools are registered"
		if len(names) > 0 {
			list = "registered tools: " + strings.Join(names, ", ")
		}
		return e.fail(res, nil, fmt.Errorf("%w %q", ErrUnknownTool, call.Name),
			fmt.Sprintf("unknown tool %q; %s", call.Name, list))
	}
	raw, val, err := ent.schema.validate(call.Arguments)
	if err != nil {
		ae := &ArgumentsError{Tool: call.Name, Detail: err.Error()}
		return e.fail(res, ent, ae, ae.Error())
	}

	var key string
	cacheable := ent.tool.Idempotent && e.cache != nil
	if cacheable {
		key, cacheable = cacheKey(call.Scope, ent, val)
	}
	if cacheable {
		if content, ok := e.cache.get(key); ok {
			res.Content, res.Cached = content, true
			return e.finish(res, ent)
		}
	}

	if err := ctx.Err(); err != nil {
		return e.fail(res, ent, err, fmt.Sprintf("tool %q not run: %v", call.Name, err))
	}
	if ent.sem != nil {
		select {
		case ent.sem <- struct{}{}:
		case <-ctx.Done():
			return e.fail(res, ent, ctx.Err(), fmt.Sprintf("tool %q not run, gave up waiting for a free slot: %v", call.Name, ctx.Err()))
		}
		now := time.Now()
		res.Waited = now.Sub(res.Started)
		res.Started = now
	}

	timeout := ent.tool.Timeout
	if timeout == 0 {
		timeout = e.cfg.DefaultTimeout
	}
	hctx, cancel := context.WithTimeout(ContextWithCallID(ctx, call.ID), timeout)
	defer cancel()
	done := make(chan outcome, 1)
	go func() {
		// The concurrency slot is held until the handler really returns,
		// even past its timeout: the limit bounds running handlers.
		if ent.sem != nil {
			defer func() { <-ent.sem }()
		}
		returned := false
		defer func() {
			if p := recover(); p != nil {
				e.cfg.Logger.Error("tool handler panicked", "tool", call.Name, "call_id", call.ID,
					"panic", fmt.Sprint(p), "stack", string(debug.Stack()))
				done <- outcome{panicked: true, panicVal: p}
			} else if !returned { // runtime.Goexit
				done <- outcome{err: errors.New("handler exited without returning")}
			}
		}()
		out, err := ent.tool.Handler(hctx, raw)
		returned = true
		done <- outcome{out: out, err: err}
	}()

	var o outcome
	select {
	case o = <-done:
	case <-hctx.Done():
		select {
		case o = <-done: // finished just in time
		default:
			return e.failCtx(res, ent, ctx, timeout)
		}
	}
	switch {
	case o.panicked:
		return e.fail(res, ent, fmt.Errorf("%w: %v", ErrPanic, o.panicVal),
			fmt.Sprintf("tool %q panicked: %v", call.Name, o.panicVal))
	case o.err != nil:
		if hctx.Err() != nil {
			// The handler gave up because of the timeout or the caller.
			return e.failCtx(res, ent, ctx, timeout)
		}
		var ae *ArgumentsError
		if errors.As(o.err, &ae) {
			return e.fail(res, ent, o.err, ae.Error())
		}
		return e.fail(res, ent, o.err, fmt.Sprintf("tool %q failed: %v", call.Name, o.err))
	}
	res.Content = o.out
	res = e.finish(res, ent)
	if cacheable {
		ttl := ent.tool.CacheTTL
		if ttl == 0 {
			ttl = e.cfg.CacheTTL
		}
		e.cache.set(key, res.Content, ttl)
	}
	return res
}

// failCtx is the error result of a handler whose context ended: the
// caller gave up (parent ended) or the tool's timeout expired.
func (e *Executor) failCtx(res Result, ent *entry, parent context.Context, timeout time.Duration) Result {
	if err := parent.Err(); err != nil {
		return e.fail(res, ent, err, fmt.Sprintf("tool %q canceled: %v", res.Name, err))
	}
	return e.fail(res, ent, fmt.Errorf("%w after %v: %w", ErrTimeout, timeout, context.DeadlineExceeded),
		fmt.Sprintf("tool %q timed out after %v", res.Name, timeout))
}

// fail makes an error result: err for the Go side, msg for the model.
func (e *Executor) fail(res Result, ent *entry, err error, msg string) Result {
	res.IsError = true
	res.Err = err
	res.Content = "error: " + msg
	return e.finish(res, ent)
}

// finish caps and sanitizes the content, stamps the end and tells the
// observer.
func (e *Executor) finish(res Result, ent *entry) Result {
	limit := e.cfg.MaxOutputBytes
	if ent != nil && ent.tool.MaxOutputBytes > 0 {
		limit = ent.tool.MaxOutputBytes
	}
	res.Content, res.Truncated = capOutput(res.Content, limit)
	res.Finished = time.Now()
	if e.cfg.Observer != nil {
		name := res.Name
		if ent != nil {
			name = StatsKey(ent.scope, res.Name)
		}
		e.cfg.Observer.ToolFinished(name, res.Duration(), res.IsError, res.Cached)
	}
	return res
}

// StatsKey names a tool in statistics and metrics: its name for a global
// tool, "scope/name" for a scoped one (tool names hold no "/", so the two
// never collide).
func StatsKey(scope, name string) string {
	if scope == "" {
		return name
	}
	return scope + "/" + name
}

// RunAll runs the tool calls of one model turn in parallel (each tool's
// concurrency limit still holds) and returns their results in call order.
func (e *Executor) RunAll(ctx context.Context, calls []Call) []Result {
	results := make([]Result, len(calls))
	if len(calls) == 1 {
		results[0] = e.Run(ctx, calls[0])
		return results
	}
	var wg sync.WaitGroup
	for i, c := range calls {
		wg.Go(func() { results[i] = e.Run(ctx, c) })
	}
	wg.Wait()
	return results
}
