package tools

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
	"time"
)

func builtinExecutor(t *testing.T, cfg BuiltinConfig) *Executor {
	t.Helper()
	r := NewRegistry()
	if err := RegisterBuiltins(r, cfg); err != nil {
		t.Fatal(err)
	}
	ex, err := NewExecutor(r, ExecutorConfig{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ex.Close)
	return ex
}

func TestRegisterBuiltins(t *testing.T) {
	ex := builtinExecutor(t, BuiltinConfig{})
	if got := strings.Join(ex.Registry().Names(), ","); got != "calculator,current_time,unit_convert" {
		t.Fatalf("default built-ins = %s (http_get must be off)", got)
	}
	ex = builtinExecutor(t, BuiltinConfig{Disable: []string{"unit_convert"}, HTTPGet: &HTTPGetConfig{AllowedHosts: []string{"example.com"}}})
	if got := strings.Join(ex.Registry().Names(), ","); got != "calculator,current_time,http_get" {
		t.Fatalf("built-ins = %s", got)
	}
	if err := RegisterBuiltins(NewRegistry(), BuiltinConfig{HTTPGet: &HTTPGetConfig{}}); !errors.Is(err, ErrInvalidTool) {
		t.Fatalf("http_get without hosts: %v", err)
	}
}

func TestCalculatorTool(t *testing.T) {
	ex := builtinExecutor(t, BuiltinConfig{})
	cases := []struct {
		expr, want string
		isErr      bool
	}{
		{"0.1+0.2", "0.3", false},
		{"2^3^2", "512", false},
		{"-2^2", "-4", false},
		{"2^64", "18446744073709551616", false},
		{"max(1, sqrt(16), 3)", "4", false},
		{"1/0", `error: tool "calculator" failed: division by zero`, true},
		{"(1+2", `error: tool "calculator" failed: syntax error at position 5: expected ')' to close '(' at position 1, got end of expression`, true},
	}
	for _, c := range cases {
		args := fmt.Sprintf(`{"expression":%q}`, c.expr)
		r := ex.Run(context.Background(), Call{Name: "calculator", Arguments: args})
		if r.Content != c.want || r.IsError != c.isErr {
			t.Errorf("%s: %+v, want %q", c.expr, r, c.want)
		}
	}
	r := ex.Run(context.Background(), Call{Name: "calculator", Arguments: `{}`})
	if !r.IsError || r.Content != `error: invalid arguments for tool "calculator": at root: missing property 'expression'` {
		t.Fatalf("%q", r.Content)
	}
}

func TestCurrentTimeTool(t *testing.T) {
	fixed := time.Date(2025, 3, 9, 14, 30, 5, 0, time.UTC)
	ex := builtinExecutor(t, BuiltinConfig{Now: func() time.Time { return fixed }})
	cases := []struct{ args, want string }{
		{`{}`, "2025-03-09T14:30:05Z (Sunday, UTC)"},
		{`{"timezone":"Europe/Paris"}`, "2025-03-09T15:30:05+01:00 (Sunday, Europe/Paris)"},
		{`{"timezone":"America/New_York","format":"datetime"}`, "2025-03-09 10:30:05 (Sunday, America/New_York)"}, // DST began that day
		{`{"timezone":"Asia/Kolkata","format":"time"}`, "20:00:05 (Sunday, Asia/Kolkata)"},
		{`{"timezone":"Asia/Tokyo","format":"date"}`, "2025-03-09 (Sunday, Asia/Tokyo)"},
		{`{"format":"unix"}`, "1741530605"},
		{`{"timezone":"utc","format":"rfc1123"}`, "Sun, 09 Mar 2025 14:30:05 +0000 (Sunday, UTC)"},
	}
	for _, c := range cases {
		r := ex.Run(context.Background(), Call{Name: "current_time", Arguments: c.args})
		if r.IsError || r.Content != c.want {
			t.Errorf("%s: %q, want %q", c.args, r.Content, c.want)
		}
	}
	for args, want := range map[string]string{
		`{"timezone":"Mars/Olympus"}`:     `unknown time zone "Mars/Olympus"`,
		`{"timezone":"Local"}`:            `"Local" is not accepted`,
		`{"timezone":"../../etc/passwd"}`: `unknown time zone`,
		`{"format":"strftime"}`:           `at '/format': value must be one of`,
	} {
		r := ex.Run(context.Background(), Call{Name: "current_time", Arguments: args})
		if !r.IsError || !strings.Contains(r.Content, want) {
			t.Errorf("%s: %q, want error containing %q", args, r.Content, want)
		}
	}
}

func TestUnitConvertTool(t *testing.T) {
	ex := builtinExecutor(t, BuiltinConfig{})
	cases := []struct{ args, want string }{
		{`{"value":1,"from":"mi","to":"km"}`, "1 mi = 1.609344 km"},
		{`{"value":1,"from":"in","to":"cm"}`, "1 in = 2.54 cm"},
		{`{"value":6,"from":"feet","to":"m"}`, "6 ft = 1.8288 m"},
		{`{"value":0.1,"from":"km","to":"m"}`, "0.1 km = 100 m"},
		{`{"value":1,"from":"lb","to":"g"}`, "1 lb = 453.59237 g"},
		{`{"value":16,"from":"oz","to":"lb"}`, "16 oz = 1 lb"},
		{`{"value":100,"from":"C","to":"F"}`, "100 °C = 212 °F"},
		{`{"value":-40,"from":"°F","to":"celsius"}`, "-40 °F = -40 °C"},
		{`{"value":0,"from":"K","to":"C"}`, "0 K = -273.15 °C"},
		{`{"value":100,"from":"F","to":"C"}`, "100 °F = 37.7777777777778 °C"},
		{`{"value":90,"from":"min","to":"h"}`, "90 min = 1.5 h"},
		{`{"value":1,"from":"year","to":"days"}`, "1 yr = 365.25 d"},
		{`{"value":1500,"from":"ms","to":"s"}`, "1500 ms = 1.5 s"},
		{`{"value":1,"from":"kg","to":"µg"}`, "1 kg = 1000000000 µg"},
	}
	for _, c := range cases {
		r := ex.Run(context.Background(), Call{Name: "unit_convert", Arguments: c.args})
		if r.IsError || r.Content != c.want {
			t.Errorf("%s: %q, want %q", c.args, r.Content, c.want)
		}
	}
	for args, want := range map[string]string{
		`{"value":1,"from":"kg","to":"m"}`:      "cannot convert kg (mass) to m (length)",
		`{"value":1,"from":"furlong","to":"m"}`: `unknown unit "furlong"; known units: length: m, km`,
		`{"value":-500,"from":"C","to":"K"}`:    "below absolute zero",
		`{"value":"ten","from":"kg","to":"lb"}`: "at '/value': got string, want number",
		`{"value":1,"from":"kg"}`:               "missing property 'to'",
	} {
		r := ex.Run(context.Background(), Call{Name: "unit_convert", Arguments: args})
		if !r.IsError || !strings.Contains(r.Content, want) {
			t.Errorf("%s: %q, want error containing %q", args, r.Content, want)
		}
	}
}

func TestDialPolicy(t *testing.T) {
	var def DialPolicy
	refused := []string{"127.0.0.1", "127.1.2.3", "::1", "10.0.0.1", "172.16.5.4", "192.168.1.1", "169.254.169.254",
		"fe80::1", "fd00::1", "0.0.0.0", "::", "0.1.2.3", "224.0.0.1", "ff02::1", "255.255.255.255", "100.64.0.1",
		"::ffff:127.0.0.1", "::ffff:10.0.0.1", "64:ff9b::a00:1", "240.0.0.1"}
	for _, s := range refused {
		if err := def.Check(netip.MustParseAddr(s)); !errors.Is(err, ErrAddressRefused) {
			t.Errorf("default policy allowed %s", s)
		}
	}
	for _, s := range []string{"93.184.216.34", "8.8.8.8", "2606:4700::1111", "1.1.1.1"} {
		if err := def.Check(netip.MustParseAddr(s)); err != nil {
			t.Errorf("default policy refused public %s: %v", s, err)
		}
	}
	lo := DialPolicy{AllowLoopback: true}
	if lo.Check(netip.MustParseAddr("127.0.0.1")) != nil || lo.Check(netip.MustParseAddr("::1")) != nil {
		t.Error("AllowLoopback refused loopback")
	}
	if lo.Check(netip.MustParseAddr("10.0.0.1")) == nil {
		t.Error("AllowLoopback allowed a private address")
	}
	priv := DialPolicy{AllowPrivate: true}
	if priv.Check(netip.MustParseAddr("10.0.0.1")) != nil || priv.Check(netip.MustParseAddr("169.254.169.254")) != nil {
		t.Error("AllowPrivate refused a private address")
	}
	if priv.Check(netip.MustParseAddr("0.0.0.0")) == nil || priv.Check(netip.MustParseAddr("224.0.0.1")) == nil {
		t.Error("unspecified/multicast must always be refused")
	}
	// Control is what the dialer runs on the resolved address, before any
	// packet is sent; called directly here, no connection is attempted.
	for _, addr := range []string{"10.1.2.3:80", "169.254.169.254:80", "[::1]:443", "127.0.0.1:8080"} {
		if err := def.Control("tcp", addr, nil); !errors.Is(err, ErrAddressRefused) {
			t.Errorf("Control(%s) = %v", addr, err)
		}
	}
}

func TestHTTPGetRefusesLoopbackByDefault(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Error("the server must not be reached")
	}))
	defer srv.Close()
	port := srv.Listener.Addr().(*net.TCPAddr).Port
	ex := builtinExecutor(t, BuiltinConfig{HTTPGet: &HTTPGetConfig{AllowedHosts: []string{"127.0.0.1", "localhost", "::1"}}})
	for _, u := range []string{
		srv.URL,
		fmt.Sprintf("http://localhost:%d/", port), // a name resolving to loopback: refused at dial time
		fmt.Sprintf("http://[::1]:%d/", port),
	} {
		r := ex.Run(context.Background(), Call{Name: "http_get", Arguments: fmt.Sprintf(`{"url":%q}`, u)})
		if !r.IsError || !strings.Contains(r.Content, "loopback address") {
			t.Errorf("%s: %q", u, r.Content)
		}
	}
}

func TestHTTPGetAllowlist(t *testing.T) {
	ex := builtinExecutor(t, BuiltinConfig{HTTPGet: &HTTPGetConfig{AllowedHosts: []string{"*.example.com", "127.0.0.1"}}})
	for args, want := range map[string]string{
		`{"url":"http://evil.test/"}`:             `host "evil.test" is not in the allowed list`,
		`{"url":"http://example.com/"}`:           `host "example.com" is not in the allowed list`,
		`{"url":"ftp://127.0.0.1/"}`:              `only http and https`,
		`{"url":"file:///etc/passwd"}`:            `only http and https`,
		`{"url":"http://10.0.0.1/"}`:              `not in the allowed list`,
		`{"url":"http://169.254.169.254/latest"}`: `not in the allowed list`,
	} {
		r := ex.Run(context.Background(), Call{Name: "http_get", Arguments: args})
		if !r.IsError || !strings.Contains(r.Content, want) {
			t.Errorf("%s: %q, want %q", args, r.Content, want)
		}
	}
	if !hostAllowed([]string{"*.example.com"}, "api.example.com.") || hostAllowed([]string{"*.example.com"}, "badexample.com") {
		t.Error("wildcard matching")
	}
}

func TestHTTPGetWithLoopbackAllowed(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/hello", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprint(w, "hello from the test server")
	})
	mux.HandleFunc("/big", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, strings.Repeat("x", 5000))
	})
	mux.HandleFunc("/missing", func(w http.ResponseWriter, r *http.Request) { http.Error(w, "no such page", http.StatusNotFound) })
	mux.HandleFunc("/image", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "image/png")
		w.Write([]byte{0x89, 'P', 'N', 'G'})
	})
	mux.HandleFunc("/redirect-out", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://elsewhere.test/", http.StatusFound)
	})
	mux.HandleFunc("/redirect-in", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/hello", http.StatusFound)
	})
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(2 * time.Second):
		}
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	ex := builtinExecutor(t, BuiltinConfig{HTTPGet: &HTTPGetConfig{
		AllowedHosts: []string{"127.0.0.1"},
		Policy:       DialPolicy{AllowLoopback: true},
		MaxBytes:     1000,
		Timeout:      200 * time.Millisecond,
	}})
	get := func(path string) Result {
		return ex.Run(context.Background(), Call{Name: "http_get", Arguments: fmt.Sprintf(`{"url":%q}`, srv.URL+path)})
	}
	if r := get("/hello"); r.IsError || r.Content != "hello from the test server" {
		t.Errorf("/hello: %+v", r)
	}
	if r := get("/redirect-in"); r.IsError || r.Content != "hello from the test server" {
		t.Errorf("/redirect-in: %+v", r)
	}
	if r := get("/big"); r.IsError || !strings.HasPrefix(r.Content, strings.Repeat("x", 1000)+"\n…[truncated: response larger than 1000 bytes]") {
		t.Errorf("/big: %q", r.Content)
	}
	for path, want := range map[string]string{
		"/missing":      "HTTP 404: no such page",
		"/image":        `content type "image/png": not text`,
		"/redirect-out": `redirect refused: host "elsewhere.test" is not in the allowed list`,
		"/slow":         "timed out after 200ms",
	} {
		if r := get(path); !r.IsError || !strings.Contains(r.Content, want) {
			t.Errorf("%s: %q, want %q", path, r.Content, want)
		}
	}
}
