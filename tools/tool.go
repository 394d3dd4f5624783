package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"time"
)

// Handler runs a tool. args are the call's arguments, already validated
// against the tool's parameters schema (never empty: a call without
// arguments is given "{}"). The returned string is the result the model sees.
// A handler must honour ctx: it is cancelled when the call's timeout expires
// or the caller gives up.
type Handler func(ctx context.Context, args json.RawMessage) (string, error)

// Tool describes one tool. Fill it directly, or build it with New or Func.
// A Tool must not be modified after it has been registered: the registry
// keeps its own copy.
type Tool struct {
	// Name is the name the model calls the tool by: 1 to 64 characters from
	// [a-zA-Z0-9_-] (OpenAI's rule).
	Name string
	// Description tells the model what the tool does and when to use it.
	Description string
	// Parameters is the JSON Schema (draft 2020-12 unless it says otherwise
	// with $schema) of the arguments object. Empty means a tool without
	// arguments: {"type":"object","properties":{}}.
	Parameters json.RawMessage
	// Idempotent marks a tool whose result depends only on its arguments:
	// successful results are cached for CacheTTL (executor default when 0).
	Idempotent bool
	// CacheTTL is how long a cached result of an idempotent tool stays valid.
	CacheTTL time.Duration
	// Timeout bounds one run of the handler (executor default when 0).
	Timeout time.Duration
	// MaxConcurrency bounds how many calls of this tool run at once across
	// all executors sharing the registry (0: unlimited).
	MaxConcurrency int
	// MaxOutputBytes caps the result the model sees; longer output is cut on
	// a UTF-8 boundary and a truncation note is appended (executor default
	// when 0).
	MaxOutputBytes int
	// Handler runs the tool.
	Handler Handler
}

// Option adjusts a Tool built by New or Func.
type Option func(*Tool)

// WithTimeout sets the tool's per-call timeout.
func WithTimeout(d time.Duration) Option { return func(t *Tool) { t.Timeout = d } }

// WithMaxConcurrency bounds how many calls of the tool run at once.
func WithMaxConcurrency(n int) Option { return func(t *Tool) { t.MaxConcurrency = n } }

// WithMaxOutputBytes caps the tool's output.
func WithMaxOutputBytes(n int) Option { return func(t *Tool) { t.MaxOutputBytes = n } }

// WithCache marks the tool idempotent and caches its successful results for
// ttl (0: the executor's default TTL).
func WithCache(ttl time.Duration) Option {
	return func(t *Tool) { t.Idempotent = true; t.CacheTTL = ttl }
}

// New builds a tool from a raw JSON Schema and a handler and checks it (see
// Tool.Validate).
func New(name, description string, parameters json.RawMessage, h Handler, opts ...Option) (*Tool, error) {
	t := &Tool{Name: name, Description: description, Parameters: parameters, Handler: h}
	for _, o := range opts {
		o(t)
	}
	if err := t.Validate(); err != nil {
		return nil, err
	}
	return t, nil
}

// Errors a registration can fail with (wrapped, with details).
var (
	ErrInvalidName   = errors.New("invalid tool name")
	ErrInvalidSchema = errors.New("invalid parameters schema")
	ErrInvalidTool   = errors.New("invalid tool")
	ErrDuplicate     = errors.New("tool already registered")
	// ErrLimit: the scope holds as many tools as it may.
	ErrLimit = errors.New("tool limit reached")
)

var nameRE = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// ValidName reports whether name follows OpenAI's rule for function names:
// ^[a-zA-Z0-9_-]{1,64}$.
func ValidName(name string) bool { return nameRE.MatchString(name) }

// emptyParameters is the schema of a tool without arguments.
var emptyParameters = json.RawMessage(`{"type":"object","properties":{}}`)

// Validate checks the tool as Register does: the name, the handler, the
// limits, and that Parameters is a valid JSON Schema of an object.
func (t *Tool) Validate() error {
	_, err := t.compile()
	return err
}

// parameters returns the tool's schema, or the empty-object schema.
func (t *Tool) parameters() json.RawMessage {
	if len(bytes.TrimSpace(t.Parameters)) == 0 {
		return emptyParameters
	}
	return t.Parameters
}

// compile checks the tool and compiles its schema.
func (t *Tool) compile() (*argsSchema, error) {
	if t == nil {
		return nil, fmt.Errorf("%w: nil tool", ErrInvalidTool)
	}
	if !ValidName(t.Name) {
		return nil, fmt.Errorf("%w %q: must match ^[a-zA-Z0-9_-]{1,64}$", ErrInvalidName, t.Name)
	}
	if t.Handler == nil {
		return nil, fmt.Errorf("%w %q: nil handler", ErrInvalidTool, t.Name)
	}
	switch {
	case t.Timeout < 0:
		return nil, fmt.Errorf("%w %q: negative timeout %v", ErrInvalidTool, t.Name, t.Timeout)
	case t.CacheTTL < 0:
		return nil, fmt.Errorf("%w %q: negative cache TTL %v", ErrInvalidTool, t.Name, t.CacheTTL)
	case t.MaxConcurrency < 0:
		return nil, fmt.Errorf("%w %q: negative max concurrency %d", ErrInvalidTool, t.Name, t.MaxConcurrency)
	case t.MaxOutputBytes < 0:
		return nil, fmt.Errorf("%w %q: negative max output bytes %d", ErrInvalidTool, t.Name, t.MaxOutputBytes)
	}
	s, err := compileSchema(t.Name, t.parameters())
	if err != nil {
		return nil, fmt.Errorf("tool %q: %w", t.Name, err)
	}
	return s, nil
}

// clone returns a copy of t that shares nothing mutable with it.
func (t *Tool) clone() *Tool {
	c := *t
	c.Parameters = append(json.RawMessage(nil), t.parameters()...)
	return &c
}
