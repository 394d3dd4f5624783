package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestSignAndVerify(t *testing.T) {
	secret := []byte("s3cret")
	body := []byte(`{"tool":"x"}`)
	sig := Sign(secret, body)
	if !strings.HasPrefix(sig, "sha256=") || len(sig) != len("sha256=")+64 {
		t.Fatalf("Sign = %q", sig)
	}
	if !VerifySignature(secret, body, sig) {
		t.Fatal("valid signature refused")
	}
	for _, bad := range []string{"", "sha256=", "sha256=zz", sig[7:], "sha1=" + sig[7:], sig[:len(sig)-1] + "0"} {
		if bad == sig {
			continue
		}
		if VerifySignature(secret, body, bad) {
			t.Errorf("bad signature %q accepted", bad)
		}
	}
	if VerifySignature([]byte("other"), body, sig) || VerifySignature(secret, []byte(`{"tool":"y"}`), sig) {
		t.Fatal("signature accepted with wrong secret or body")
	}
	if VerifySignature(nil, body, Sign(nil, body)) {
		t.Fatal("empty secret must never verify")
	}
}

// webhookServer is a tool author's server: it checks the signature and
// answers per the request's arguments.
func webhookServer(t *testing.T, secret []byte) *httptest.Server {
	t.Helper()
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if r.Method != http.MethodPost || r.Header.Get("Content-Type") != "application/json" {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		if !VerifySignature(secret, body, r.Header.Get(SignatureHeader)) {
			http.Error(w, "bad signature", http.StatusUnauthorized)
			return
		}
		var req struct {
			Tool      string `json:"tool"`
			CallID    string `json:"call_id"`
			Timestamp int64  `json:"timestamp"`
			Arguments struct {
				Mode string `json:"mode"`
			} `json:"arguments"`
		}
		if err := json.Unmarshal(body, &req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		if ts, _ := strconv.ParseInt(r.Header.Get(TimestampHeader), 10, 64); ts != req.Timestamp || time.Since(time.Unix(ts, 0)) > time.Minute {
			http.Error(w, "bad timestamp", http.StatusUnauthorized)
			return
		}
		switch req.Arguments.Mode {
		case "json":
			w.Header().Set("Content-Type", "application/json")
			json.NewEncoder(w).Encode(map[string]string{"content": "tool=" + req.Tool + " call=" + req.CallID})
		case "text":
			w.Header().Set("Content-Type", "text/plain")
			io.WriteString(w, "plain answer")
		case "error":
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"error":"city not found"}`)
		case "500":
			http.Error(w, "internal trouble", http.StatusInternalServerError)
		case "slow":
			select {
			case <-r.Context().Done():
			case <-time.After(3 * time.Second):
			}
		}
	}))
}

const modeSchema = `{"type":"object","properties":{"mode":{"type":"string"}},"required":["mode"]}`

func webhookExecutor(t *testing.T, specs ...WebhookSpec) *Executor {
	t.Helper()
	var list []*Tool
	for _, s := range specs {
		tool, err := NewWebhookTool(s)
		if err != nil {
			t.Fatal(err)
		}
		list = append(list, tool)
	}
	return newTestExecutor(t, ExecutorConfig{}, list...)
}

func TestWebhookTool(t *testing.T) {
	secret := []byte("top-secret")
	srv := webhookServer(t, secret)
	defer srv.Close()
	ex := webhookExecutor(t,
		WebhookSpec{Name: "remote", Description: "remote tool", URL: srv.URL, Parameters: json.RawMessage(modeSchema), Secret: secret, Timeout: 300 * time.Millisecond},
		WebhookSpec{Name: "wrong_secret", URL: srv.URL, Parameters: json.RawMessage(modeSchema), Secret: []byte("nope")},
		WebhookSpec{Name: "unsigned", URL: srv.URL, Parameters: json.RawMessage(modeSchema)},
	)
	run := func(name, mode string) Result {
		return ex.Run(context.Background(), Call{ID: "call_7", Name: name, Arguments: `{"mode":"` + mode + `"}`})
	}
	if r := run("remote", "json"); r.IsError || r.Content != "tool=remote call=call_7" {
		t.Errorf("json: %+v", r)
	}
	if r := run("remote", "text"); r.IsError || r.Content != "plain answer" {
		t.Errorf("text: %+v", r)
	}
	for _, c := range []struct{ name, mode, want string }{
		{"remote", "error", `error: tool "remote" failed: city not found`},
		{"remote", "500", `error: tool "remote" failed: webhook of tool "remote" returned HTTP 500: internal trouble`},
		{"remote", "slow", `error: tool "remote" timed out after 300ms`},
		{"wrong_secret", "json", `webhook of tool "wrong_secret" returned HTTP 401: bad signature`},
		{"unsigned", "json", `webhook of tool "unsigned" returned HTTP 401: bad signature`},
	} {
		if r := run(c.name, c.mode); !r.IsError || !strings.Contains(r.Content, c.want) {
			t.Errorf("%s/%s: %q, want %q", c.name, c.mode, r.Content, c.want)
		}
	}
	if r := run("remote", "slow"); !errors.Is(r.Err, ErrTimeout) {
		t.Errorf("slow: Err = %v", r.Err)
	}
}

func TestWebhookServerDown(t *testing.T) {
	// A loopback port with nothing listening: take one, then close it.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + ln.Addr().String() + "/tool?key=hidden"
	ln.Close()
	ex := webhookExecutor(t, WebhookSpec{Name: "down", URL: url, Secret: []byte("k"), Timeout: 2 * time.Second})
	r := ex.Run(context.Background(), Call{Name: "down"})
	if !r.IsError || !strings.Contains(r.Content, `error: tool "down" failed: webhook of tool "down" unreachable`) {
		t.Fatalf("%+v", r)
	}
	if strings.Contains(r.Content, "hidden") {
		t.Fatalf("URL leaked to the model: %q", r.Content)
	}
}

func TestNewWebhookToolErrors(t *testing.T) {
	for _, spec := range []WebhookSpec{
		{Name: "x", URL: "ftp://host/"},
		{Name: "x", URL: "/relative"},
		{Name: "x", URL: "http://%zz"},
		{Name: "bad name", URL: "http://127.0.0.1/"},
		{Name: "x", URL: "http://127.0.0.1/", Parameters: json.RawMessage(`{"type":"array"}`)},
	} {
		if _, err := NewWebhookTool(spec); err == nil {
			t.Errorf("%+v: no error", spec)
		}
	}
}

// The server's maxima: a registration above them is refused, a response
// over the size cap is an error result naming the tool and the cap, and no
// call outlives the maximum timeout even when the executor's default is
// longer.
func TestWebhookLimits(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/size/{n}", func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(r.PathValue("n"))
		w.Header().Set("Content-Type", "text/plain")
		io.WriteString(w, strings.Repeat("x", n))
	})
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body) // so that the server notices the client leave
		select {
		case <-r.Context().Done():
		case <-time.After(3 * time.Second):
		}
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	log, logged := capturedLog()
	eg, err := NewWebhookEgress(OpenDialPolicy(), WebhookLimits{MaxTimeout: 150 * time.Millisecond, MaxResponseBytes: 100}, log)
	if err != nil {
		t.Fatal(err)
	}
	for _, spec := range []WebhookSpec{
		{Name: "long", URL: srv.URL, Egress: eg, Timeout: time.Second},
		{Name: "big", URL: srv.URL, Egress: eg, MaxResponseBytes: 101},
	} {
		if _, err := NewWebhookTool(spec); !errors.Is(err, ErrOverLimit) || !errors.Is(err, ErrInvalidTool) {
			t.Errorf("%s: %v, want an over-limit error", spec.Name, err)
		}
	}
	if _, err := NewWebhookTool(WebhookSpec{Name: "long", URL: srv.URL, Egress: eg, Timeout: time.Second}); err == nil || !strings.Contains(err.Error(), "timeout 1s is above this server's maximum of 150ms") {
		t.Errorf("timeout error %v", err)
	}
	tool := func(name, path string, maxBytes int64) *Tool {
		tl, err := NewWebhookTool(WebhookSpec{Name: name, URL: srv.URL + path, Egress: eg, MaxResponseBytes: maxBytes})
		if err != nil {
			t.Fatal(err)
		}
		return tl
	}
	ex := newTestExecutor(t, ExecutorConfig{DefaultTimeout: 10 * time.Second},
		tool("fits", "/size/100", 0), tool("over", "/size/101", 0), tool("own_cap", "/size/60", 50), tool("slow", "/slow", 0))
	run := func(name string) Result { return ex.Run(context.Background(), Call{Name: name}) }
	if r := run("fits"); r.IsError || r.Content != strings.Repeat("x", 100) {
		t.Errorf("fits: %+v", r)
	}
	for name, want := range map[string]string{
		"over":    `error: tool "over" failed: webhook of tool "over" response larger than 100 bytes`,
		"own_cap": `webhook of tool "own_cap" response larger than 50 bytes`,
		"slow":    `webhook of tool "slow" timed out after the server's maximum of 150ms`,
	} {
		if r := run(name); !r.IsError || !strings.Contains(r.Content, want) || r.Truncated {
			t.Errorf("%s: %+v, want %q", name, r, want)
		}
	}
	if !strings.Contains(logged.String(), "failure=too_large") || !strings.Contains(logged.String(), "failure=timed_out") {
		t.Errorf("log:\n%s", logged)
	}
	if _, err := NewWebhookEgress(DialPolicy{}, WebhookLimits{MaxTimeout: -1}, nil); err == nil {
		t.Error("negative limit accepted")
	}
	// A WebhookEgress built by hand gets the defaults it leaves out.
	if _, err := NewWebhookTool(WebhookSpec{Name: "x", URL: srv.URL, Egress: &WebhookEgress{Limits: WebhookLimits{MaxResponseBytes: -1}}}); !errors.Is(err, ErrInvalidTool) {
		t.Errorf("negative hand-built limit: %v", err)
	}
	byHand, err := NewWebhookTool(WebhookSpec{Name: "by_hand", URL: srv.URL + "/size/3", Egress: &WebhookEgress{Policy: OpenDialPolicy()}})
	if err != nil {
		t.Fatal(err)
	}
	if r := newTestExecutor(t, ExecutorConfig{}, byHand).Run(context.Background(), Call{Name: "by_hand"}); r.IsError || r.Content != "xxx" {
		t.Errorf("hand-built egress: %+v", r)
	}
}

func TestWebhookLimitsTimeoutFromSeconds(t *testing.T) {
	l := WebhookLimits{MaxTimeout: 300 * time.Second}
	for s, want := range map[float64]time.Duration{0: 0, 1.5: 1500 * time.Millisecond, 300: 300 * time.Second} {
		if got, err := l.TimeoutFromSeconds(s); err != nil || got != want {
			t.Errorf("%v: %v %v, want %v", s, got, err, want)
		}
	}
	for _, s := range []float64{300.001, 1e300, math.Inf(1)} {
		if _, err := l.TimeoutFromSeconds(s); !errors.Is(err, ErrOverLimit) || !strings.Contains(err.Error(), "above this server's maximum of 300s") {
			t.Errorf("%v: %v", s, err)
		}
	}
	for _, s := range []float64{-1, math.NaN(), math.Inf(-1)} {
		if _, err := l.TimeoutFromSeconds(s); err == nil || errors.Is(err, ErrOverLimit) {
			t.Errorf("%v: %v, want a bad-value error", s, err)
		}
	}
	if got, err := (WebhookLimits{}).TimeoutFromSeconds(DefaultWebhookMaxTimeout.Seconds() + 1); !errors.Is(err, ErrOverLimit) {
		t.Errorf("default maximum not applied: %v %v", got, err)
	}
}

// Every failure a webhook call can have reads as the tool and the kind of
// failure: never the host, the address, the port or the URL, which the
// server log gets.
func TestWebhookErrorsHideTheTarget(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/status", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusBadGateway) })
	mux.HandleFunc("/see-other", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://127.0.0.1:9/hidden?key=secret", http.StatusSeeOther)
	})
	mux.HandleFunc("/unfollowed", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Location", "http://127.0.0.1:9/hidden")
		w.WriteHeader(http.StatusTemporaryRedirect)
		io.WriteString(w, `<a href="http://127.0.0.1:9/hidden">moved</a>`)
	})
	mux.HandleFunc("/again", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/again", http.StatusTemporaryRedirect)
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://localhost:" + fmt.Sprint(ln.Addr().(*net.TCPAddr).Port) + "/down?key=secret"
	ln.Close()
	srvPort := fmt.Sprint(srv.Listener.Addr().(*net.TCPAddr).Port)
	local := strings.Replace(srv.URL, "127.0.0.1", "localhost", 1)

	log, logged := capturedLog()
	open, err := NewWebhookEgress(OpenDialPolicy(), WebhookLimits{}, log)
	if err != nil {
		t.Fatal(err)
	}
	strict, err := NewWebhookEgress(DialPolicy{}, WebhookLimits{}, log)
	if err != nil {
		t.Fatal(err)
	}
	// A client that answers redirects as they come (the API server's
	// client before it used NewEgressClient).
	noRedirects := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	cases := []struct {
		spec WebhookSpec
		want string
	}{
		{WebhookSpec{Name: "refused", URL: local + "/status?key=secret", Egress: strict}, `webhook of tool "refused" refused by the egress policy`},
		{WebhookSpec{Name: "down", URL: closed, Egress: open}, `webhook of tool "down" unreachable`},
		{WebhookSpec{Name: "bad_gateway", URL: local + "/status?key=secret", Egress: open}, `webhook of tool "bad_gateway" returned HTTP 502`},
		{WebhookSpec{Name: "see_other", URL: local + "/see-other", Egress: open}, `webhook of tool "see_other" answered with a redirect that was not followed`},
		{WebhookSpec{Name: "again", URL: local + "/again", Egress: open}, `webhook of tool "again" answered with a redirect that was not followed`},
		{WebhookSpec{Name: "unfollowed", URL: local + "/unfollowed", Egress: open, Client: noRedirects}, `webhook of tool "unfollowed" returned HTTP 307`},
	}
	var list []*Tool
	for _, c := range cases {
		tl, err := NewWebhookTool(c.spec)
		if err != nil {
			t.Fatal(err)
		}
		list = append(list, tl)
	}
	ex := newTestExecutor(t, ExecutorConfig{}, list...)
	for _, c := range cases {
		r := ex.Run(context.Background(), Call{ID: "call_9", Name: c.spec.Name})
		var we *WebhookError
		if !r.IsError || !strings.HasSuffix(r.Content, c.want) || !errors.As(r.Err, &we) || we.Tool != c.spec.Name {
			t.Errorf("%s: %+v, want %q", c.spec.Name, r, c.want)
		}
		noAddress(t, c.spec.Name, r.Content, "127.0.0.1", "localhost", srvPort, "key=secret", "secret", "/status", "/down", "hidden", ":9")
		noAddress(t, c.spec.Name+" Err", r.Err.Error(), "127.0.0.1", "localhost", srvPort, "secret")
	}
	for _, want := range []string{
		"tool=refused call_id=call_9 target=" + local + "/status failure=refused",
		"127.0.0.1:" + srvPort + ": address refused: 127.0.0.1 is a loopback address",
		"tool=down", "failure=unreachable", "connection refused",
		"tool=bad_gateway", "status=502",
		"failure=redirect_refused", "a 303 redirect would resend the POST as a GET",
		"more than 5 redirects",
	} {
		if !strings.Contains(logged.String(), want) {
			t.Errorf("the log lacks %q:\n%s", want, logged)
		}
	}
	if strings.Contains(logged.String(), "key=secret") {
		t.Errorf("the log holds a URL's query:\n%s", logged)
	}
}

// A 307 or 308 from the tool server is followed with the method, the body
// and the signature.
func TestWebhookFollowsBodyKeepingRedirects(t *testing.T) {
	secret := []byte("k")
	srv := webhookServer(t, secret)
	defer srv.Close()
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, srv.URL+"/v2", http.StatusPermanentRedirect)
	}))
	defer front.Close()
	ex := webhookExecutor(t, WebhookSpec{Name: "moved", URL: front.URL, Parameters: json.RawMessage(modeSchema), Secret: secret})
	if r := ex.Run(context.Background(), Call{ID: "c", Name: "moved", Arguments: `{"mode":"json"}`}); r.IsError || r.Content != "tool=moved call=c" {
		t.Fatalf("%+v", r)
	}
}
