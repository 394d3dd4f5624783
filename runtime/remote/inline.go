package remote

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// inlineTransport carries a backend's requests over keep-alive connections
// of its own, writing each request and reading its reply on the caller's
// goroutine. net/http's Transport hands every request from the caller to
// the connection's writeLoop and readLoop goroutines and back: at 1,000
// calls/s those hand-offs (and the thread wake-ups they cost) were a fifth
// of the router's CPU (docs/results-router.md §4). The wire format stays
// net/http's own: (*http.Request).Write and http.ReadResponse, so a reply
// is an *http.Response like any other (chunked bodies, trailers, headers
// parsed by the standard library); only the pool and the cancellation are
// written here. A generation's request (post) is the exception, for its
// cost per call (session 12): its bytes are the ones Write made once for
// its backend (postTemplate), held to Write's bytes by a differential
// fuzz test; its reply is read by http.ReadResponse like any other (a
// hand-read reply head spared ~1 µs and 10 allocations of a call's ~120
// µs of CPU: not worth a second HTTP parser, docs/results-router.md §4,
// session 12). The request's
// context ends a request at once by closing its connection
// (context.AfterFunc), as net/http does.
//
// It speaks plain HTTP/1.1 to one host: https backends and backends behind
// a proxy keep net/http's Transport (transport=nethttp, the fallback),
// which does TLS, HTTP/2 and proxies.
type inlineTransport struct {
	addr    string // host:port
	dialer  net.Dialer
	maxIdle int
	// headerWait bounds the wait for a reply's headers (net/http's
	// ResponseHeaderTimeout of the router's transport).
	headerWait time.Duration
	// postReq is the request http.ReadResponse is given for a post's
	// reply (it reads only the method), shared read-only.
	postReq *http.Request

	mu     sync.Mutex
	idle   []*inlineConn // most recently used last
	closed bool
}

// idleFor is how long an idle connection is kept (net/http's
// IdleConnTimeout of http.DefaultTransport).
const idleFor = 90 * time.Second

type inlineConn struct {
	c      net.Conn
	br     *bufio.Reader
	bw     *bufio.Writer
	reused bool
	since  time.Time // idle since
	// close is c.Close as a func, made once per connection: each request
	// hands it to context.AfterFunc (a closure made per request would be
	// an allocation per call).
	close func()
}

func newInlineTransport(addr string, maxIdle int, headerWait time.Duration) *inlineTransport {
	return &inlineTransport{addr: addr, maxIdle: maxIdle, headerWait: headerWait, postReq: &http.Request{Method: http.MethodPost},
		dialer: net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}}
}

// RoundTrip sends req and reads its reply's headers. A reused connection
// that the backend had closed while it was idle (an error before any byte
// of the reply) is replaced by a new one and the request sent again, as
// net/http does for a request it can send again (GetBody).
func (t *inlineTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, _, err := t.roundTrip(req.Context(), req, nil)
	return resp, err
}

// post sends a generation's request (written from its backend's
// template, its body in memory: it can always be sent again) and reads
// its reply's head, as RoundTrip does for an *http.Request; the body it
// returns holds the reply's status and whether it is JSON.
func (t *inlineTransport) post(ctx context.Context, p *postRequest) (*inlineBody, error) {
	_, body, err := t.roundTrip(ctx, t.postReq, p)
	return body, err
}

// roundTrip is RoundTrip's, and post's with p (req is then the stand-in
// that http.ReadResponse reads the method of; the reply's status and
// type are also in the body).
func (t *inlineTransport) roundTrip(ctx context.Context, req *http.Request, p *postRequest) (*http.Response, *inlineBody, error) {
	for {
		if err := ctx.Err(); err != nil {
			closeBody(req)
			return nil, nil, err
		}
		pc, err := t.get(ctx)
		if err != nil {
			closeBody(req)
			return nil, nil, err
		}
		resp, body, err := t.exchange(ctx, pc, req, p)
		resend := p != nil || req.Body == nil || req.GetBody != nil
		if err == nil || !pc.reused || !errors.Is(err, errIdleClosed) || !resend {
			if errors.Is(err, errIdleClosed) {
				err = io.ErrUnexpectedEOF
			}
			return resp, body, err
		}
		if p == nil && req.Body != nil {
			body, gerr := req.GetBody()
			if gerr != nil {
				return nil, nil, gerr
			}
			r2 := *req
			r2.Body = body
			req = &r2
		}
	}
}

// errIdleClosed: the connection ended before any byte of the reply.
var errIdleClosed = errors.New("the backend closed the connection before replying")

func closeBody(req *http.Request) {
	if req.Body != nil {
		req.Body.Close()
	}
}

// exchange writes req (or p) on pc and reads the reply's head; the body
// is read by the caller (inlineBody), and the connection goes back to the
// pool at its end.
func (t *inlineTransport) exchange(ctx context.Context, pc *inlineConn, req *http.Request, p *postRequest) (*http.Response, *inlineBody, error) {
	stop := context.AfterFunc(ctx, pc.close)
	fail := func(err error) (*http.Response, *inlineBody, error) {
		stop()
		pc.c.Close()
		if ctx.Err() != nil {
			return nil, nil, ctx.Err()
		}
		return nil, nil, err
	}
	var err error
	if p != nil {
		err = p.write(pc.bw)
	} else {
		err = req.Write(pc.bw)
	}
	if err != nil {
		if isReset(err) {
			err = errIdleClosed // a reused connection the backend had closed
		}
		return fail(err)
	}
	if err := pc.bw.Flush(); err != nil {
		return fail(errIdleClosed) // nothing of the reply read: send again
	}
	if t.headerWait > 0 {
		_ = pc.c.SetReadDeadline(time.Now().Add(t.headerWait))
	}
	var resp *http.Response
	for {
		if _, err := pc.br.Peek(1); err != nil {
			if errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed) || isReset(err) {
				return fail(errIdleClosed)
			}
			return fail(err)
		}
		r, err := http.ReadResponse(pc.br, req)
		if err != nil {
			return fail(err)
		}
		// A 1xx reply (100 Continue, 103 Early Hints) is followed by the
		// real one.
		if r.StatusCode >= 100 && r.StatusCode < 200 && r.StatusCode != http.StatusSwitchingProtocols {
			continue
		}
		resp = r
		break
	}
	if t.headerWait > 0 {
		_ = pc.c.SetReadDeadline(time.Time{})
	}
	// A body that ends only with the connection (no length, not chunked)
	// leaves nothing to reuse.
	keep := !resp.Close && !req.Close && (resp.ContentLength >= 0 || len(resp.TransferEncoding) > 0)
	b := &inlineBody{t: t, pc: pc, r: resp.Body, stop: stop, ctx: ctx, keep: keep,
		status: resp.StatusCode, json: strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json")}
	resp.Body = b
	return resp, b, nil
}

// isReset reports a connection the peer reset.
func isReset(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && !op.Timeout()
}

// inlineBody is a reply's body, read and closed by one goroutine at a
// time (the router's are): at its end the connection goes back to the
// pool; closed before its end, the connection is closed (what was left of
// the reply would otherwise be read as the next one's).
type inlineBody struct {
	t    *inlineTransport
	pc   *inlineConn
	r    io.ReadCloser
	stop func() bool
	ctx  context.Context
	keep bool
	done bool
	// status and json are the reply's status and whether its
	// Content-Type is application/json (post's caller has no
	// *http.Response).
	status int
	json   bool
	// eof: a read returned io.EOF (the body was read to its end).
	eof bool
	// detached: the request's context no longer ends the body (detach);
	// live: the connection was not closed by it before (stop's result).
	detached, live bool
	// state: bodyReading, then bodyFinished (finish) or bodyAborted
	// (abort, from another goroutine), whichever comes first.
	state atomic.Int32
}

const (
	bodyReading int32 = iota
	bodyFinished
	bodyAborted
)

func (b *inlineBody) Read(p []byte) (int, error) {
	if b.done {
		b.eof = true
		return 0, io.EOF
	}
	n, err := b.r.Read(p)
	if err == io.EOF {
		b.eof = true
		b.finish(true)
	} else if err != nil {
		b.finish(false)
		if !b.detached && b.ctx.Err() != nil {
			err = b.ctx.Err()
		}
	}
	return n, err
}

func (b *inlineBody) Close() error {
	b.finish(false)
	return nil
}

// detach lets the body's rest be read whatever the request's context
// does from now on (its end no longer closes the connection); it is true
// unless the context had already closed it. By the body's reader, before
// it hands the body to another goroutine.
func (b *inlineBody) detach() bool {
	if !b.detached {
		b.detached, b.live = true, b.stop()
	}
	return b.live
}

// abort closes the connection under a read of the body (drainRest's
// deadline): the read fails and finishes the body. Any goroutine; after
// the body's finish it does nothing (the connection may be back in the
// pool, another request's).
func (b *inlineBody) abort() {
	if b.state.CompareAndSwap(bodyReading, bodyAborted) {
		b.pc.c.Close()
	}
}

// finish gives the connection back (ended: the body was read to its end)
// or closes it, once.
func (b *inlineBody) finish(ended bool) {
	if b.done {
		return
	}
	b.done = true
	// live false: the request's context closed the connection already;
	// the state not bodyReading: abort did.
	live := b.detach()
	if b.state.CompareAndSwap(bodyReading, bodyFinished) && live && ended && b.keep {
		b.t.put(b.pc)
		return
	}
	b.pc.c.Close()
}

// get takes the most recently used idle connection, or dials one.
func (t *inlineTransport) get(ctx context.Context) (*inlineConn, error) {
	now := time.Now()
	t.mu.Lock()
	for len(t.idle) > 0 {
		pc := t.idle[len(t.idle)-1]
		t.idle = t.idle[:len(t.idle)-1]
		if now.Sub(pc.since) < idleFor {
			t.mu.Unlock()
			pc.reused = true
			return pc, nil
		}
		pc.c.Close()
	}
	t.mu.Unlock()
	c, err := t.dialer.DialContext(ctx, "tcp", t.addr)
	if err != nil {
		return nil, err
	}
	pc := &inlineConn{c: c, br: bufio.NewReaderSize(c, 4<<10), bw: bufio.NewWriterSize(c, 4<<10)}
	pc.close = func() { pc.c.Close() }
	return pc, nil
}

// put keeps pc for the next request, unless the pool is full or closed.
func (t *inlineTransport) put(pc *inlineConn) {
	pc.since = time.Now()
	t.mu.Lock()
	if t.closed || len(t.idle) >= t.maxIdle {
		t.mu.Unlock()
		pc.c.Close()
		return
	}
	t.idle = append(t.idle, pc)
	t.mu.Unlock()
}

// close closes the idle connections; those in use are closed when their
// replies end.
func (t *inlineTransport) close() {
	t.mu.Lock()
	idle := t.idle
	t.idle, t.closed = nil, true
	t.mu.Unlock()
	for _, pc := range idle {
		pc.c.Close()
	}
}
