package tools

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/pitstop-llm/pitstop/internal/testutil"
)

// countingServer answers 200 and counts the requests that reached it.
func countingServer(t *testing.T, ip string) (*httptest.Server, *atomic.Int32) {
	var hits atomic.Int32
	return testutil.ServerOn(t, ip, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		io.WriteString(w, "reached")
	})), &hits
}

func port(srv *httptest.Server) string {
	return fmt.Sprint(srv.Listener.Addr().(*net.TCPAddr).Port)
}

func TestEgressClientUsesNoProxy(t *testing.T) {
	tr, ok := NewEgressClient(DialPolicy{}).Transport.(*http.Transport)
	if !ok || tr.Proxy != nil {
		t.Fatal("the egress transport must not take a proxy from the environment")
	}
}

// The redirect rule: at most MaxEgressRedirects hops, http(s) only, no
// method change, each hop's host checked, and a refused address refused
// whether it comes as a literal (CheckHost) or as a name (Control).
func TestEgressRedirects(t *testing.T) {
	refused, refusedHits := countingServer(t, "127.0.0.1")
	type seen struct {
		method, body, apiKey, signature, referer string
	}
	var last atomic.Pointer[seen]
	echo := func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		last.Store(&seen{r.Method, string(body), r.Header.Get("X-Api-Key"), r.Header.Get(SignatureHeader), r.Header.Get("Referer")})
		io.WriteString(w, "echo")
	}
	other := testutil.ServerOn(t, "127.0.0.3", http.HandlerFunc(echo))
	mux := http.NewServeMux()
	mux.HandleFunc("/echo", echo)
	redirect := func(path string, code int, to string) {
		mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, to, code) })
	}
	redirect("/307", http.StatusTemporaryRedirect, "/echo")
	redirect("/308", http.StatusPermanentRedirect, "/echo")
	redirect("/302", http.StatusFound, "/echo")
	redirect("/to-literal", http.StatusTemporaryRedirect, "http://127.0.0.1:"+port(refused)+"/")
	redirect("/to-name", http.StatusTemporaryRedirect, "http://localhost:"+port(refused)+"/")
	redirect("/to-decimal", http.StatusTemporaryRedirect, "http://2130706433:"+port(refused)+"/")
	redirect("/to-mapped", http.StatusTemporaryRedirect, "http://[::ffff:127.0.0.1]:"+port(refused)+"/")
	redirect("/to-ftp", http.StatusTemporaryRedirect, "ftp://127.0.0.2/")
	redirect("/cross", http.StatusTemporaryRedirect, "http://127.0.0.3:"+port(other)+"/echo?from=cross")
	redirect("/loop", http.StatusTemporaryRedirect, "/loop")
	allowed := testutil.ServerOn(t, "127.0.0.2", mux)

	client := NewEgressClient(DialPolicy{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.2/31")}})
	post := func(path string) (string, error) {
		last.Store(nil)
		req, _ := http.NewRequest(http.MethodPost, allowed.URL+path+"?key=k", bytes.NewReader([]byte(`{"a":1}`)))
		req.Header.Set("X-Api-Key", "tool-server-key")
		req.Header.Set(SignatureHeader, "sha256=00")
		resp, err := client.Do(req)
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b), nil
	}

	for _, path := range []string{"/307", "/308"} {
		got, err := post(path)
		s := last.Load()
		if err != nil || got != "echo" || s == nil || *s != (seen{"POST", `{"a":1}`, "tool-server-key", "sha256=00", ""}) {
			t.Errorf("%s: %q %v, server saw %+v", path, got, err, s)
		}
	}
	// Another host gets the body and the signature, not the caller's
	// headers meant for the first host.
	if got, err := post("/cross"); err != nil || got != "echo" || *last.Load() != (seen{"POST", `{"a":1}`, "", "sha256=00", ""}) {
		t.Errorf("/cross: %q %v, server saw %+v", got, err, last.Load())
	}
	for path, want := range map[string]EgressFailure{
		"/302":        EgressRedirectRefused, // POST would become a GET without body
		"/to-ftp":     EgressRedirectRefused,
		"/loop":       EgressRedirectRefused,
		"/to-literal": EgressRefused,
		"/to-name":    EgressRefused,
		"/to-decimal": EgressRefused,
		"/to-mapped":  EgressRefused,
	} {
		_, err := post(path)
		if err == nil || classifyEgress(err) != want {
			t.Errorf("%s: %v, want a %v failure", path, err, want)
		}
	}
	var rr *RedirectRefusedError
	if _, err := post("/loop"); !errors.As(err, &rr) || !strings.Contains(rr.Reason.Error(), fmt.Sprintf("more than %d redirects", MaxEgressRedirects)) {
		t.Errorf("/loop: %v", err)
	}
	if _, err := post("/302"); !errors.As(err, &rr) || !strings.Contains(rr.Reason.Error(), "302 redirect would resend the POST as a GET") {
		t.Errorf("/302: %v", err)
	}
	// A GET may follow a 302.
	resp, err := client.Get(allowed.URL + "/302")
	if err != nil || resp.StatusCode != 200 {
		t.Errorf("GET /302: %v %v", resp, err)
	} else {
		resp.Body.Close()
	}
	if n := refusedHits.Load(); n != 0 {
		t.Fatalf("the refused server was reached %d times", n)
	}
}
