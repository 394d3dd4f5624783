package api

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	openai "github.com/sashabaranov/go-openai"

	"github.com/pitstop-llm/pitstop/tools"
)

func TestAuth(t *testing.T) {
	ts := newTestServer(t, serverOpts{api: Config{APIKeys: []string{"key-one", " key-two "}}})
	req := openai.ChatCompletionRequest{Model: "pitstop-scripted-test", Messages: []openai.ChatCompletionMessage{userMsg("hi")}}
	for _, key := range []string{"", "wrong", "key-on", "key-one-and-more"} {
		_, err := ts.clientWithKey(key, nil).CreateChatCompletion(context.Background(), req)
		var ae *openai.APIError
		if !errors.As(err, &ae) || ae.HTTPStatusCode != http.StatusUnauthorized {
			t.Errorf("key %q: %v", key, err)
		}
	}
	for _, key := range []string{"key-one", "key-two"} {
		if _, err := ts.clientWithKey(key, nil).CreateChatCompletion(context.Background(), req); err != nil {
			t.Errorf("key %q refused: %v", key, err)
		}
	}
	for _, path := range []string{"/v1/models", "/v1/programs", "/v1/tools", "/metrics"} {
		status, body := ts.do("GET", path, "", nil)
		wantError(t, status, body, http.StatusUnauthorized, "")
		// The scheme is case-insensitive (RFC 9110 §11.1).
		for _, scheme := range []string{"Bearer", "bearer", "BEARER"} {
			status, _ = ts.do("GET", path, "", map[string]string{"Authorization": scheme + " key-two"})
			want := 200
			if path == "/metrics" {
				want = http.StatusForbidden // names every tenant: admin keys only
			}
			if status != want {
				t.Errorf("%s with key (%s): %d, want %d", path, scheme, status, want)
			}
		}
	}
	status, body := ts.do("POST", "/v1/tools/calculator/invoke", `{"arguments":{"expression":"1"}}`, map[string]string{"Authorization": "Basic a2V5LW9uZQ=="})
	wantError(t, status, body, http.StatusUnauthorized, "")
	if status, _ := ts.do("GET", "/healthz", "", nil); status != 200 {
		t.Errorf("healthz needs no key, got %d", status)
	}
}

func TestAPIKeySources(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "keys")
	if err := os.WriteFile(file, []byte("# keys\nfile-key\n\n  other  \n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv(EnvAPIKeys, "env-a, env-b,")
	ring, err := LoadAPIKeys([]string{"flag-key"}, []string{"root-key"}, file)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"flag-key", "env-a", "env-b", "file-key", "other"} {
		key, ok := ring.lookup(k)
		if !ok || key.Admin || key.Tenant != plainTenant(k) {
			t.Errorf("key %s: %+v %v", k, key, ok)
		}
	}
	if key, ok := ring.lookup("root-key"); !ok || !key.Admin || key.Tenant != AdminTenant {
		t.Errorf("admin key: %+v %v", key, ok)
	}
	if _, ok := ring.lookup("env"); ok || ring.Len() != 6 {
		t.Errorf("unknown key accepted, or %d keys", ring.Len())
	}
	if _, err := LoadAPIKeys(nil, nil, filepath.Join(dir, "missing")); err == nil {
		t.Error("missing keys file accepted")
	}
}

// A webhook registered at run time is called with a signature the tool
// server verifies (tools.VerifySignature, as examples/toolserver does); a
// server with another secret refuses the call.
func TestWebhookSignature(t *testing.T) {
	const secret = "s3cret"
	var calls atomic.Int32
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if !tools.VerifySignature([]byte(secret), body, r.Header.Get(tools.SignatureHeader)) {
			http.Error(w, "bad signature", http.StatusUnauthorized)
			return
		}
		calls.Add(1)
		var req struct {
			Arguments struct {
				City string `json:"city"`
			} `json:"arguments"`
		}
		_ = json.Unmarshal(body, &req)
		_ = json.NewEncoder(w).Encode(map[string]string{"content": "sunny in " + req.Arguments.City})
	}))
	defer hook.Close()
	ts := newTestServer(t, serverOpts{api: Config{AllowToolRegistration: true}})
	reg := func(name, sec string) {
		status, body := ts.do("POST", "/v1/tools", `{"name":"`+name+`","url":"`+hook.URL+`","secret":"`+sec+`","expected_duration_s":0.05,"parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}`, nil)
		if status != http.StatusCreated {
			t.Fatalf("register %s: %d %v", name, status, body)
		}
	}
	reg("weather", secret)
	reg("weather_bad_secret", "not-the-secret")
	if status, body := ts.do("POST", "/v1/tools", `{"name":"weather","url":"`+hook.URL+`"}`, nil); status != http.StatusConflict {
		t.Errorf("duplicate registration: %d %v", status, body)
	}
	ask := func(tool string) string {
		resp, err := ts.client(nil).CreateChatCompletion(context.Background(), openai.ChatCompletionRequest{
			Model: "pitstop-scripted-test", Tools: []openai.Tool{decl(tool)},
			Messages: []openai.ChatCompletionMessage{userMsg(`/call ` + tool + ` {"city": "Lyon"}`)}})
		if err != nil {
			t.Fatal(err)
		}
		return resp.Choices[0].Message.Content
	}
	if got := ask("weather"); got != "The result is sunny in Lyon." {
		t.Errorf("signed call: %q", got)
	}
	if got := ask("weather_bad_secret"); !strings.Contains(got, "401") {
		t.Errorf("badly signed call: %q", got)
	}
	if calls.Load() != 1 {
		t.Errorf("tool server accepted %d calls, want 1", calls.Load())
	}
}
