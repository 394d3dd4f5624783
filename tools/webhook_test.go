package tools

import (
	"context"
	"encoding/json"
	"errors"
	"io"
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
		{"remote", "500", `error: tool "remote" failed: webhook returned HTTP 500: internal trouble`},
		{"remote", "slow", `error: tool "remote" timed out after 300ms`},
		{"wrong_secret", "json", "webhook returned HTTP 401: bad signature"},
		{"unsigned", "json", "webhook returned HTTP 401: bad signature"},
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
	if !r.IsError || !strings.Contains(r.Content, `error: tool "down" failed: webhook unreachable`) {
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
