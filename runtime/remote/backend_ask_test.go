package remote

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// The health check and the slot actions carry the backend's API key, and
// a refusal comes back naming what was asked and the server's message.
func TestBackendAskKeyAndErrors(t *testing.T) {
	t.Setenv("PITSTOP_TEST_BACKEND_KEY", "k1")
	refuse := true
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if got := r.Header.Get("Authorization"); got != "Bearer k1" {
			t.Errorf("%s %s: Authorization %q, want the backend's key", r.Method, r.URL, got)
		}
		if refuse {
			w.WriteHeader(http.StatusServiceUnavailable)
			w.Write([]byte(`{"error":{"message":"busy"}}`))
			return
		}
		w.Write([]byte(`{"data":[{"id":"m1"}]}`))
	}))
	defer srv.Close()
	b, err := newBackend(Spec{URL: srv.URL, Kind: KindLlamaCpp, APIKeyEnv: "PITSTOP_TEST_BACKEND_KEY"}, srv.Client())
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := b.check(ctx, time.Second); err == nil || err.Error() != "GET /v1/models: HTTP 503: busy" {
		t.Errorf("refused health check: %v", err)
	}
	if err := b.slotAction(ctx, 2, "save", "f.bin"); err == nil || err.Error() != "slot 2 save: HTTP 503: busy" {
		t.Errorf("refused slot action: %v", err)
	}
	refuse = false
	if err := b.check(ctx, time.Second); err != nil {
		t.Errorf("health check: %v", err)
	}
	if err := b.slotAction(ctx, 2, "restore", "f.bin"); err != nil {
		t.Errorf("slot action: %v", err)
	}
	if got := b.info().Models; len(got) != 1 || got[0] != "m1" {
		t.Errorf("models %v after the check, want [m1]", got)
	}
}
