package tools

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"slices"
	"time"
)

// MaxEgressRedirects is how many redirects an outgoing tool request
// follows before it gives up.
const MaxEgressRedirects = 5

// DefaultEgressDialTimeout bounds one connection attempt of an egress
// client (the call's own timeout still bounds the whole request).
const DefaultEgressDialTimeout = 10 * time.Second

// ErrRedirectRefused is wrapped by the error of a redirect an egress client
// does not follow.
var ErrRedirectRefused = errors.New("redirect refused")

// RedirectRefusedError is a redirect an egress client did not follow.
// Target (scheme, host and path of the Location) is for the server log.
type RedirectRefusedError struct {
	Target string
	Reason error
}

func (e *RedirectRefusedError) Error() string {
	return fmt.Sprintf("%v: to %s: %v", ErrRedirectRefused, e.Target, e.Reason)
}

func (e *RedirectRefusedError) Unwrap() []error { return []error{ErrRedirectRefused, e.Reason} }

// EgressOption adjusts a client built by NewEgressClient.
type EgressOption func(*egressConfig)

type egressConfig struct {
	dialTimeout   time.Duration
	resolver      *net.Resolver
	redirectCheck func(*http.Request) error
}

// WithEgressDialTimeout bounds one connection attempt (default
// DefaultEgressDialTimeout).
func WithEgressDialTimeout(d time.Duration) EgressOption {
	return func(c *egressConfig) { c.dialTimeout = d }
}

// WithEgressResolver resolves host names with r instead of the system's
// resolver (tests give one that answers from memory; the dial-time check
// applies to whatever it answers).
func WithEgressResolver(r *net.Resolver) EgressOption {
	return func(c *egressConfig) { c.resolver = r }
}

// WithEgressRedirectCheck adds a check of each redirect's request, after
// the client's own (http_get refuses hosts outside its allow list).
func WithEgressRedirectCheck(check func(*http.Request) error) EgressOption {
	return func(c *egressConfig) { c.redirectCheck = check }
}

// NewEgressClient returns the HTTP client of outgoing tool requests
// (webhook tools, http_get). Every connection it opens passes p.Control on
// the resolved address before connecting, so a name that resolves or is
// re-bound to a refused address is refused with no packet sent. It uses no
// proxy, even one named in the environment: the proxy's address is what
// would be dialled and checked, not the target's.
//
// Redirects are followed, at most MaxEgressRedirects of them, because
// http_get fetches web pages that redirect as a matter of course (http to
// https, a moved page) and refusing them would make it useless; one rule
// for both tools keeps them alike. Following is safe because every hop
// opens its connection through the same Control, so a redirect to a
// refused address fails as a direct request would. The rule refuses a hop
// that
//   - leaves http and https;
//   - names a host CheckHost refuses (a refused IP, a numeric host), so the
//     refusal is clear before any dial;
//   - changes the method: a 301, 302 or 303 answer to a POST would resend
//     it as a GET without its body, which no webhook expects (307 and 308
//     keep the method and the body);
//   - fails the caller's own check (WithEgressRedirectCheck).
//
// A hop to another host carries only the content headers and pitstop's
// signature headers: headers the caller set for the first host (a tool
// server's API key) are not handed to a host it redirects to. No hop
// carries a Referer (it could hold the first URL's query).
func NewEgressClient(p DialPolicy, opts ...EgressOption) *http.Client {
	cfg := egressConfig{dialTimeout: DefaultEgressDialTimeout}
	for _, o := range opts {
		o(&cfg)
	}
	dialer := &net.Dialer{Timeout: cfg.dialTimeout, Resolver: cfg.resolver, Control: p.Control}
	return &http.Client{
		Transport: &http.Transport{
			Proxy:               nil,
			DialContext:         dialer.DialContext,
			ForceAttemptHTTP2:   true,
			TLSHandshakeTimeout: cfg.dialTimeout,
			MaxIdleConns:        64,
			MaxIdleConnsPerHost: 16,
			IdleConnTimeout:     30 * time.Second,
		},
		CheckRedirect: redirectRule(p, cfg.redirectCheck),
	}
}

// Headers a hop to another host keeps.
var crossHostHeaders = []string{"Content-Type", "Content-Length", "Accept", "Accept-Encoding", "User-Agent", SignatureHeader, TimestampHeader}

// redirectRule is the CheckRedirect of an egress client (see
// NewEgressClient).
func redirectRule(p DialPolicy, extra func(*http.Request) error) func(*http.Request, []*http.Request) error {
	return func(req *http.Request, via []*http.Request) error {
		refuse := func(reason error) error {
			return &RedirectRefusedError{Target: logURL(req.URL), Reason: reason}
		}
		first := via[0]
		switch {
		case len(via) > MaxEgressRedirects:
			return refuse(fmt.Errorf("more than %d redirects", MaxEgressRedirects))
		case req.URL.Scheme != "http" && req.URL.Scheme != "https":
			return refuse(fmt.Errorf("only http and https redirects are followed, not %q", req.URL.Scheme))
		case req.Method != first.Method:
			status := 0
			if req.Response != nil {
				status = req.Response.StatusCode
			}
			return refuse(fmt.Errorf("a %d redirect would resend the %s as a %s without its body", status, first.Method, req.Method))
		}
		if err := p.CheckHost(req.URL.Hostname()); err != nil {
			return refuse(err)
		}
		if extra != nil {
			if err := extra(req); err != nil {
				return refuse(err)
			}
		}
		req.Header.Del("Referer")
		if req.URL.Host != first.URL.Host {
			for k := range req.Header {
				if !slices.Contains(crossHostHeaders, k) {
					req.Header.Del(k)
				}
			}
		}
		return nil
	}
}

// logURL is u for the server log: scheme, host and path, without the user
// information and the query, which may hold credentials.
func logURL(u *url.URL) string {
	if u == nil {
		return ""
	}
	return (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path}).String()
}
