package main

import (
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
)

// serveProxy serves on ln a bare net/http reverse proxy to backend: no
// decode, no pick, no re-encode, the request and the reply's bytes passed
// through by net/http's server and Transport. Run as its own process in
// place of the router (scripts/router_overhead.sh's "proxy"), it is the
// floor of any router built on net/http on this machine, and what a
// router's overhead above it is its own.
func serveProxy(ln net.Listener, backend string) error {
	u, err := url.Parse(backend)
	if err != nil {
		return err
	}
	p := httputil.NewSingleHostReverseProxy(u)
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = 1024
	p.Transport = tr
	return (&http.Server{Handler: p}).Serve(ln)
}
