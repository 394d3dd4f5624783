package remote

import (
	"fmt"
	"net/http"
	"net/url"
	"time"
)

// The router's limits on a backend's connections, whichever transport.
const (
	// maxIdlePerBackend is the idle keep-alive connections kept per
	// backend: as many as calls in flight at 1,000 calls/s.
	maxIdlePerBackend = 1024
	// headerWait bounds the wait for a reply's headers (a backend that
	// queues a call answers only when it starts it).
	headerWait = 10 * time.Minute
)

// clientFor is the HTTP client of a new backend: the router's shared one
// (net/http's Transport, or Config.Transport), or one over an
// inlineTransport of the backend's own (returned too, to be closed with
// the backend). A backend gets the inline transport unless Config.Transport
// is set, it says transport=nethttp, or it is https or behind a proxy
// ($HTTP_PROXY), which net/http's Transport handles and the inline one
// does not.
func (r *Router) clientFor(s Spec) (*http.Client, *inlineTransport, error) {
	if r.cfg.Transport != nil || s.Transport == TransportNetHTTP {
		return r.client, nil, nil
	}
	u, err := url.Parse(s.URL)
	if err != nil {
		return nil, nil, fmt.Errorf("backend %s: %v", s.Name(), err)
	}
	proxy, _ := http.ProxyFromEnvironment(&http.Request{URL: u})
	if u.Scheme != "http" || proxy != nil {
		if s.Transport == TransportInline {
			return nil, nil, fmt.Errorf("backend %s: transport=inline speaks plain HTTP to the backend itself (not https, not through a proxy): use transport=nethttp", s.Name())
		}
		return r.client, nil, nil
	}
	host := u.Host
	if u.Port() == "" {
		host += ":80"
	}
	t := newInlineTransport(host, maxIdlePerBackend, headerWait)
	return &http.Client{Transport: t}, t, nil
}
