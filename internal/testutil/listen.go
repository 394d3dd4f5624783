package testutil

import (
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
)

// ServerOn starts h on ip, a loopback address (127.0.0.2 and 127.0.0.3
// reach the loopback interface on Linux too), closed with t. It skips t
// when the address cannot be listened on.
func ServerOn(t testing.TB, ip string, h http.Handler) *httptest.Server {
	t.Helper()
	ln, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
	if err != nil {
		t.Skipf("cannot listen on %s: %v", ip, err)
	}
	srv := httptest.NewUnstartedServer(h)
	srv.Listener = ln
	srv.Start()
	t.Cleanup(srv.Close)
	return srv
}
