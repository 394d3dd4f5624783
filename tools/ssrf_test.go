package tools

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/pitstop-llm/pitstop/internal/testutil"
)

// ssrfForm is one way of writing a webhook or fetch target that reaches,
// or would reach, an address a server with API keys refuses.
type ssrfForm struct {
	name string
	host string // as in the URL (IPv6 in brackets)
	// reaches: "v4" or "v6", the loopback test server the form would reach
	// if let through; "" for an address no test may connect to, whose
	// refusal must come from Control, before connect (refusedAddr).
	reaches     string
	refusedAddr string
	fakeName    bool // a name only the test's DNS knows
}

var ssrfForms = []ssrfForm{
	{name: "dotted", host: "127.0.0.1", reaches: "v4"},
	{name: "hosts file name", host: "localhost", reaches: "v4"},
	{name: "hosts file name upper case", host: "LOCALHOST", reaches: "v4"},
	{name: "decimal", host: "2130706433", reaches: "v4"},
	{name: "hex", host: "0x7f000001", reaches: "v4"},
	{name: "octal", host: "0177.0.0.1", reaches: "v4"},
	{name: "short", host: "127.1", reaches: "v4"},
	{name: "mixed hex", host: "0x7f.0.0.1", reaches: "v4"},
	{name: "IPv6 loopback", host: "[::1]", reaches: "v6"},
	{name: "IPv4-mapped dotted", host: "[::ffff:127.0.0.1]", reaches: "v4"},
	{name: "IPv4-mapped hex", host: "[::ffff:7f00:1]", reaches: "v4"},
	{name: "metadata", host: "169.254.169.254", refusedAddr: "169.254.169.254"},
	{name: "metadata mapped", host: "[::ffff:169.254.169.254]", refusedAddr: "169.254.169.254"},
	{name: "metadata decimal", host: "2852039166", refusedAddr: "169.254.169.254"},
	{name: "private 10/8", host: "10.0.0.1", refusedAddr: "10.0.0.1"},
	{name: "private 192.168/16", host: "192.168.1.1", refusedAddr: "192.168.1.1"},
	{name: "unique local IPv6", host: "[fd00::1]", refusedAddr: "fd00::1"},
	{name: "name to metadata", host: "metadata.test", refusedAddr: "169.254.169.254", fakeName: true},
	{name: "name to private", host: "intranet.test", refusedAddr: "10.0.0.1", fakeName: true},
	{name: "name to loopback v4 and v6", host: "loop.test", reaches: "v4", fakeName: true},
	{name: "name to mapped loopback", host: "mapped.test", reaches: "v4", fakeName: true},
}

// ssrfDNS is the test's DNS: the names above, and the hex forms read as
// glibc reads them (the Go resolver asks DNS for them; a hostile DNS
// server may answer anything).
func ssrfDNS(t *testing.T) *fakeDNS {
	a := netip.MustParseAddr
	return &fakeDNS{t: t, answers: map[string][]netip.Addr{
		"metadata.test": {a("169.254.169.254")},
		"intranet.test": {a("10.0.0.1")},
		"loop.test":     {a("127.0.0.1"), a("::1")},
		"mapped.test":   {a("::ffff:127.0.0.1")},
		"0x7f000001":    {a("127.0.0.1")},
		"0x7f.0.0.1":    {a("127.0.0.1")},
	}}
}

// ssrfTargets are the loopback servers the forms would reach, counting
// every request that gets there.
type ssrfTargets struct {
	port map[string]string // "v4", "v6" → port
	hits atomic.Int32
}

func newSSRFTargets(t *testing.T) *ssrfTargets {
	st := &ssrfTargets{port: map[string]string{}}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { st.hits.Add(1) })
	st.port["v4"] = port(testutil.ServerOn(t, "127.0.0.1", h))
	st.port["v6"] = port(testutil.ServerOn(t, "::1", h))
	return st
}

func (st *ssrfTargets) url(f ssrfForm) (string, string) {
	p := "80"
	if f.reaches != "" {
		p = st.port[f.reaches]
	}
	return "http://" + f.host + ":" + p + "/hook?key=secret", p
}

// checkRefusal checks the error of a request to f: refused by the policy
// (for an address no test may reach, by Control and for that address), or
// a numeric host the resolver would not look up at all.
func checkRefusal(t *testing.T, f ssrfForm, err error) {
	t.Helper()
	var dns *net.DNSError
	var ae *AddressRefusedError
	switch {
	case err == nil:
		t.Errorf("%s: request succeeded", f.name)
	case classifyEgress(err) == EgressRefused:
		if f.refusedAddr != "" && (!errors.As(err, &ae) || ae.Addr != netip.MustParseAddr(f.refusedAddr)) {
			t.Errorf("%s: refused for %v, want a refusal of %s", f.name, err, f.refusedAddr)
		}
	case numericHost(strings.Trim(f.host, "[]")) && errors.As(err, &dns) && dns.IsNotFound:
		// Go's resolver does not look up a numeric name: never dialled.
	default:
		t.Errorf("%s: %v, want a refusal by the egress policy", f.name, err)
	}
}

// TestSSRFAddressForms sends a request to each form through the egress
// client at dial time, skipping the registration check: every form is
// refused or not resolved, no request reaches the loopback servers, and
// the addresses no test may reach are refused by Control before any
// packet. With the Go resolver the test's DNS answers; a child process
// runs the forms the C library resolves by itself (numbers, the hosts
// file) with GODEBUG=netdns=cgo, where 2130706433 and friends do become
// 127.0.0.1.
func TestSSRFAddressForms(t *testing.T) {
	st := newSSRFTargets(t)
	system := os.Getenv("PITSTOP_SSRF_RESOLVER") == "system"
	var opts []EgressOption
	dns := ssrfDNS(t)
	if !system {
		opts = append(opts, WithEgressResolver(dns.resolver()))
	}
	client := NewEgressClient(DialPolicy{}, opts...)
	for _, f := range ssrfForms {
		if system && f.fakeName {
			continue
		}
		u, _ := st.url(f)
		resp, err := client.Post(u, "application/json", strings.NewReader(`{}`))
		if err == nil {
			resp.Body.Close()
		}
		checkRefusal(t, f, err)
		t.Logf("%-28s %-26s %v (DNS asked: %v)", f.name, f.host, err, dns.askedFor(strings.Trim(f.host, "[]")))
	}
	if n := st.hits.Load(); n != 0 {
		t.Fatalf("%d requests reached the loopback servers", n)
	}
	if system || !cgoResolver || runtime.GOOS != "linux" {
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestSSRFAddressForms$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), "PITSTOP_SSRF_RESOLVER=system", "GODEBUG=netdns=cgo")
	out, err := cmd.CombinedOutput()
	t.Logf("with the C library's resolver:\n%s", out)
	if err != nil {
		t.Fatalf("with the C library's resolver: %v", err)
	}
}

// capturedLog is a slog logger whose output a test reads.
func capturedLog() (*slog.Logger, *testutil.LockedBuffer) {
	var b testutil.LockedBuffer
	return slog.New(slog.NewTextHandler(&b, nil)), &b
}

// noAddress fails when text holds any of the forms of a target's address.
func noAddress(t *testing.T, what, text string, forms ...string) {
	t.Helper()
	for _, f := range forms {
		if f != "" && strings.Contains(strings.ToLower(text), strings.ToLower(f)) {
			t.Errorf("%s names the target (%q): %q", what, f, text)
		}
	}
}

// TestSSRFWebhookForms registers a webhook tool at each form under a
// server's egress (strict policy): a literal address is refused at
// registration, a name at call time; either way the error a caller or a
// model reads names neither the host, the address, the port nor the URL,
// while the server log has the target.
func TestSSRFWebhookForms(t *testing.T) {
	st := newSSRFTargets(t)
	dns := ssrfDNS(t)
	log, logged := capturedLog()
	eg, err := NewWebhookEgress(DialPolicy{}, WebhookLimits{}, log, WithEgressResolver(dns.resolver()))
	if err != nil {
		t.Fatal(err)
	}
	var atCall []*Tool
	for _, f := range ssrfForms {
		u, p := st.url(f)
		hidden := []string{strings.Trim(f.host, "[]"), p, "key=secret", "/hook", "127.0.0.1", "::1", "169.254", "10.0.0.1", "192.168", "fd00"}
		name := "ssrf_" + strings.NewReplacer(" ", "_", "/", "_", ".", "_").Replace(f.name)
		tool, err := NewWebhookTool(WebhookSpec{Name: name, URL: u, Egress: eg})
		if err != nil {
			if !errors.Is(err, ErrAddressRefused) || !errors.Is(err, ErrInvalidTool) {
				t.Errorf("%s: registration error %v", f.name, err)
			}
			noAddress(t, f.name+" registration error", err.Error(), hidden...)
			t.Logf("%-28s registration refused: %v", f.name, err)
			continue
		}
		if f.reaches == "" && !f.fakeName {
			t.Errorf("%s: a literal refused address was registered", f.name)
		}
		atCall = append(atCall, tool)
	}
	ex := newTestExecutor(t, ExecutorConfig{}, atCall...)
	for _, tool := range atCall {
		r := ex.Run(context.Background(), Call{ID: "c1", Name: tool.Name})
		want := `webhook of tool "` + tool.Name + `" refused by the egress policy`
		if !r.IsError || !strings.Contains(r.Content, want) {
			t.Errorf("%s: %q, want %q", tool.Name, r.Content, want)
		}
		noAddress(t, tool.Name, r.Content, "127.0.0.1", "::1", "169.254", "10.0.0.1", "test", "localhost", st.port["v4"], st.port["v6"], "key=secret", "/hook")
		if !errors.Is(r.Err, ErrAddressRefused) {
			t.Errorf("%s: Err %v does not wrap ErrAddressRefused", tool.Name, r.Err)
		}
	}
	if len(atCall) < 4 {
		t.Errorf("only %d forms reached the call-time check", len(atCall))
	}
	if n := st.hits.Load(); n != 0 {
		t.Fatalf("%d requests reached the loopback servers", n)
	}
	for _, want := range []string{"target=http://metadata.test:80/hook", "169.254.169.254 is a link-local address", "failure=refused", "webhook tool refused at registration"} {
		if !strings.Contains(logged.String(), want) {
			t.Errorf("the log lacks %q:\n%s", want, logged)
		}
	}
	if strings.Contains(logged.String(), "key=secret") {
		t.Errorf("the log holds the URL's query:\n%s", logged)
	}
}

// http_get obeys the same rule; its errors name the kind of address, not
// the address a name resolved to.
func TestSSRFHTTPGet(t *testing.T) {
	st := newSSRFTargets(t)
	ex := builtinExecutor(t, BuiltinConfig{HTTPGet: &HTTPGetConfig{AllowedHosts: []string{"localhost", "2130706433", "127.0.0.1"}}})
	for _, host := range []string{"localhost", "2130706433", "127.0.0.1"} {
		r := ex.Run(context.Background(), Call{Name: "http_get", Arguments: `{"url":"http://` + host + `:` + st.port["v4"] + `/"}`})
		if !r.IsError || !strings.Contains(r.Content, "fetch refused: the host is") {
			t.Errorf("%s: %q", host, r.Content)
		}
		if host == "localhost" {
			noAddress(t, host, r.Content, "127.0.0.1", st.port["v4"])
		}
	}
	if n := st.hits.Load(); n != 0 {
		t.Fatalf("%d requests reached the loopback server", n)
	}
}
