package mcp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pitstop-llm/pitstop/tools"
)

// ProtocolVersion is the MCP version a Source asks for. The SDK's newest
// (2026-07-28) is stateless and skips initialize; 2025-11-25 is the newest
// that begins with initialize, has keepalive pings and is what the servers
// in use speak (the SDK negotiates down from it when a server is older).
const ProtocolVersion = "2025-11-25"

// Defaults of Options.
const (
	DefaultMinBackoff     = 500 * time.Millisecond
	DefaultMaxBackoff     = 30 * time.Second
	DefaultKeepAlive      = 30 * time.Second
	DefaultConnectTimeout = 60 * time.Second
	// stableAfter is how long a connection must have lasted for the next
	// reconnection to start again from the smallest backoff (a server that
	// dies right after each start backs off further each time).
	stableAfter = 10 * time.Second
)

// Options tune a Source. The zero value is usable.
type Options struct {
	// Logger receives connection events and a stdio server's stderr (nil:
	// slog.Default()).
	Logger *slog.Logger
	// MinBackoff and MaxBackoff bound the wait between reconnection
	// attempts, which doubles after each failure (0: DefaultMinBackoff,
	// DefaultMaxBackoff).
	MinBackoff, MaxBackoff time.Duration
	// KeepAlive is the interval of pings to the server; a missed ping
	// counts as a failed connection (0: DefaultKeepAlive; negative: none).
	KeepAlive time.Duration
	// ConnectTimeout bounds one connection attempt: starting the process or
	// reaching the endpoint, initialize and the tool listing (0:
	// DefaultConnectTimeout).
	ConnectTimeout time.Duration
	// TerminateAfter is how long closing a stdio server's session waits
	// for the process to exit after its stdin is closed, before SIGTERM
	// (and as long again before SIGKILL) (0: the SDK's 5s).
	TerminateAfter time.Duration
	// Version is the version pitstop announces in initialize (empty:
	// "dev").
	Version string
}

// State is where a Source stands with its server.
type State string

// States of a Source.
const (
	// StateConnecting: the first connection is under way; no tools yet.
	StateConnecting State = "connecting"
	// StateConnected: the tools are registered and calls go to the server.
	StateConnected State = "connected"
	// StateReconnecting: the connection failed; the tools stay listed,
	// marked unavailable, their calls fail at once, and the Source retries
	// with backoff.
	StateReconnecting State = "reconnecting"
	// StateClosed: Close was called; the tools are removed.
	StateClosed State = "closed"
)

// Source is one MCP server as a source of tools in a registry. It is safe
// for concurrent use.
type Source struct {
	spec   ServerSpec
	reg    *tools.Registry
	opts   Options
	log    *slog.Logger
	client *sdk.Client
	relist chan struct{} // tools/list_changed received (capacity 1)
	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{}
	ready  chan struct{} // closed at the first successful connection
	stderr *stderrLog    // nil for an HTTP server

	mu        sync.Mutex
	state     State
	session   *sdk.ClientSession
	pid       int
	lastErr   error
	since     time.Time
	connects  int
	owned     map[string]ownedTool // pitstop name → tool
	skipped   []SkippedTool
	readyOnce sync.Once
}

// Start validates spec and starts connecting to the server in the
// background, registering its tools in the global scope of reg once
// connected. It returns at once; WaitReady waits for the first connection.
// Close stops the Source.
func Start(reg *tools.Registry, spec ServerSpec, opts Options) (*Source, error) {
	if reg == nil {
		return nil, errors.New("mcp: nil registry")
	}
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	if spec.Stdio() {
		if _, err := exec.LookPath(spec.Command[0]); err != nil {
			return nil, fmt.Errorf("MCP server %q: command %q: %w", spec.Name, spec.Command[0], err)
		}
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.MinBackoff <= 0 {
		opts.MinBackoff = DefaultMinBackoff
	}
	if opts.MaxBackoff <= 0 {
		opts.MaxBackoff = DefaultMaxBackoff
	}
	opts.MaxBackoff = max(opts.MaxBackoff, opts.MinBackoff)
	if opts.KeepAlive == 0 {
		opts.KeepAlive = DefaultKeepAlive
	}
	if opts.ConnectTimeout <= 0 {
		opts.ConnectTimeout = DefaultConnectTimeout
	}
	if opts.Version == "" {
		opts.Version = "dev"
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &Source{
		spec: spec, reg: reg, opts: opts, log: opts.Logger.With("mcp_server", spec.Name),
		relist: make(chan struct{}, 1), ctx: ctx, cancel: cancel,
		done: make(chan struct{}), ready: make(chan struct{}),
		state: StateConnecting, since: time.Now(), owned: map[string]ownedTool{},
	}
	if spec.Stdio() {
		s.stderr = newStderrLog(s.log)
	}
	copts := &sdk.ClientOptions{
		// The SDK calls this on the session's reading goroutine: only signal
		// the supervisor, which re-lists.
		ToolListChangedHandler: func(context.Context, *sdk.ToolListChangedRequest) {
			select {
			case s.relist <- struct{}{}:
			default:
			}
		},
		Capabilities: &sdk.ClientCapabilities{}, // no roots, sampling or elicitation
	}
	if opts.KeepAlive > 0 {
		copts.KeepAlive = opts.KeepAlive
	}
	s.client = sdk.NewClient(&sdk.Implementation{Name: "pitstop", Version: opts.Version}, copts)
	go s.run()
	return s, nil
}

// Name is the server's name (the prefix of its tools).
func (s *Source) Name() string { return s.spec.Name }

// WaitReady waits until the first connection has registered the server's
// tools, or ctx ends (then it returns ctx's error with the last connection
// error, if any). The Source keeps trying after WaitReady gives up.
func (s *Source) WaitReady(ctx context.Context) error {
	select {
	case <-s.ready:
		return nil
	case <-s.done:
		return fmt.Errorf("MCP server %q: closed", s.spec.Name)
	case <-ctx.Done():
		s.mu.Lock()
		last := s.lastErr
		s.mu.Unlock()
		if last != nil {
			return fmt.Errorf("MCP server %q not connected: %w (last attempt: %v)", s.spec.Name, ctx.Err(), last)
		}
		return fmt.Errorf("MCP server %q not connected: %w", s.spec.Name, ctx.Err())
	}
}

// Close stops the Source: it ends the session (a stdio server's stdin is
// closed, then it is terminated if it does not exit) and removes the
// server's tools from the registry. Calls in flight get error results.
func (s *Source) Close() error {
	s.cancel()
	<-s.done
	s.mu.Lock()
	defer s.mu.Unlock()
	for name := range s.owned {
		s.reg.RemoveIn("", name)
	}
	clear(s.owned)
	s.state, s.since = StateClosed, time.Now()
	return nil
}

// run is the supervisor: it connects, serves the session until it ends,
// marks the tools unavailable and reconnects with backoff, until Close.
func (s *Source) run() {
	defer close(s.done)
	failures := 0
	for {
		cs, err := s.connect()
		if err == nil {
			began := time.Now()
			err = s.serve(cs)
			_ = cs.Close() // reaps a stdio server's process
			if s.ctx.Err() != nil {
				return
			}
			if time.Since(began) >= stableAfter {
				failures = 0
			}
		}
		if s.ctx.Err() != nil {
			return
		}
		s.markUnavailable(err)
		delay := s.backoff(failures)
		failures++
		s.log.Warn("MCP server unavailable; reconnecting", "err", err, "retry_in", delay.Round(time.Millisecond))
		select {
		case <-s.ctx.Done():
			return
		case <-time.After(delay):
		}
	}
}

// backoff is the wait before reconnection attempt n (0-based): MinBackoff
// doubled n times, at most MaxBackoff, less up to a fifth at random so that
// many pitstops do not retry in step.
func (s *Source) backoff(n int) time.Duration {
	d := s.opts.MaxBackoff
	if n < 30 {
		d = min(d, s.opts.MinBackoff<<n)
	}
	return d - time.Duration(rand.Int64N(int64(d)/5+1))
}

// connect starts a session, lists the tools and registers them.
func (s *Source) connect() (*sdk.ClientSession, error) {
	ctx, cancel := context.WithTimeout(s.ctx, s.opts.ConnectTimeout)
	defer cancel()
	transport, cmd := s.transport()
	cs, err := s.client.Connect(ctx, transport, &sdk.ClientSessionOptions{ProtocolVersion: ProtocolVersion})
	if err != nil {
		return nil, fmt.Errorf("connecting to %s: %w%s", s.spec.Target(), err, s.stderr.tail())
	}
	if err := s.syncTools(ctx, cs); err != nil {
		_ = cs.Close()
		return nil, fmt.Errorf("listing tools: %w%s", err, s.stderr.tail())
	}
	s.mu.Lock()
	s.session, s.state, s.lastErr, s.since = cs, StateConnected, nil, time.Now()
	s.connects++
	s.pid = 0
	if cmd != nil && cmd.Process != nil {
		s.pid = cmd.Process.Pid
	}
	n := len(s.owned)
	s.mu.Unlock()
	s.readyOnce.Do(func() { close(s.ready) })
	s.log.Info("MCP server connected", "target", s.spec.Target(), "tools", n)
	return cs, nil
}

// transport makes a new transport for one connection attempt (and, for a
// stdio server, the command it starts).
func (s *Source) transport() (sdk.Transport, *exec.Cmd) {
	if s.spec.Stdio() {
		cmd := exec.Command(s.spec.Command[0], s.spec.Command[1:]...)
		cmd.Env = append(os.Environ(), s.spec.Env...)
		cmd.Dir = s.spec.Dir
		cmd.Stderr = s.stderr
		return &sdk.CommandTransport{Command: cmd, TerminateDuration: s.opts.TerminateAfter}, cmd
	}
	client := s.spec.HTTPClient
	if client == nil {
		client = &http.Client{}
	}
	if len(s.spec.Header) > 0 {
		c := *client
		c.Transport = headerTransport{base: client.Transport, header: s.spec.Header}
		client = &c
	}
	return &sdk.StreamableClientTransport{Endpoint: s.spec.URL, HTTPClient: client}, nil
}

// serve waits for the session to end (the server exits, the connection
// fails, a call saw a transport error, a ping went unanswered) and re-lists
// the tools on tools/list_changed. It returns why the session ended.
func (s *Source) serve(cs *sdk.ClientSession) error {
	ended := make(chan error, 1)
	go func() { ended <- cs.Wait() }()
	for {
		select {
		case <-s.ctx.Done():
			return s.ctx.Err()
		case err := <-ended:
			if err == nil {
				err = errors.New("the server closed the connection")
			}
			return fmt.Errorf("connection lost: %w%s", err, s.stderr.tail())
		case <-s.relist:
			ctx, cancel := context.WithTimeout(s.ctx, s.opts.ConnectTimeout)
			err := s.syncTools(ctx, cs)
			cancel()
			if err != nil {
				return fmt.Errorf("re-listing tools after tools/list_changed: %w", err)
			}
		}
	}
}

// fault ends the session after a call saw a transport error, so that the
// supervisor reconnects (a no-op if cs is no longer the session).
func (s *Source) fault(cs *sdk.ClientSession, err error) {
	s.mu.Lock()
	current := s.session == cs
	s.mu.Unlock()
	if current {
		s.log.Warn("MCP call failed on the connection; reconnecting", "err", err)
		_ = cs.Close()
	}
}

// current returns the live session, or the reason there is none.
func (s *Source) current() (*sdk.ClientSession, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state == StateConnected && s.session != nil {
		return s.session, nil
	}
	return nil, s.unavailableLocked()
}

func (s *Source) unavailableLocked() error {
	switch {
	case s.state == StateClosed:
		return fmt.Errorf("MCP server %q is closed", s.spec.Name)
	case s.lastErr != nil:
		return fmt.Errorf("MCP server %q is unavailable since %s, reconnecting: %v", s.spec.Name, s.since.UTC().Format(time.RFC3339), s.lastErr)
	}
	return fmt.Errorf("MCP server %q is unavailable, connecting", s.spec.Name)
}

// headerTransport adds fixed headers to each request.
type headerTransport struct {
	base   http.RoundTripper
	header http.Header
}

func (h headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, vs := range h.header {
		r.Header[k] = append([]string(nil), vs...)
	}
	base := h.base
	if base == nil {
		base = http.DefaultTransport
	}
	return base.RoundTrip(r)
}
