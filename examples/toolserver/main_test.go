package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/pitstop-llm/pitstop/tools"
)

func newTestServer(t *testing.T, secret string) *httptest.Server {
	s := &server{secret: []byte(secret), maxSkew: time.Minute, now: time.Now, log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	srv := httptest.NewServer(s.routes())
	t.Cleanup(srv.Close)
	return srv
}

// TestEndToEnd runs the weather tool through pitstop's executor.
func TestEndToEnd(t *testing.T) {
	srv := newTestServer(t, "shared")
	tool, err := tools.NewWebhookTool(tools.WebhookSpec{
		Name: "weather", Description: "Current weather", URL: srv.URL + "/tools/weather",
		Parameters: json.RawMessage(WeatherSchema), Secret: []byte("shared"), Timeout: 5 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	bad, err := tools.NewWebhookTool(tools.WebhookSpec{
		Name: "weather_bad", URL: srv.URL + "/tools/weather", Parameters: json.RawMessage(WeatherSchema), Secret: []byte("wrong"),
	})
	if err != nil {
		t.Fatal(err)
	}
	r := tools.NewRegistry()
	r.MustRegister(tool)
	r.MustRegister(bad)
	ex, err := tools.NewExecutor(r, tools.ExecutorConfig{})
	if err != nil {
		t.Fatal(err)
	}
	defer ex.Close()
	res := ex.Run(context.Background(), tools.Call{ID: "c1", Name: "weather", Arguments: `{"city":"Paris"}`})
	if res.IsError || res.Content != weather("Paris", "") || !strings.HasPrefix(res.Content, "Paris: ") {
		t.Fatalf("%+v", res)
	}
	res = ex.Run(context.Background(), tools.Call{ID: "c2", Name: "weather_bad", Arguments: `{"city":"Paris"}`})
	if !res.IsError || !strings.Contains(res.Content, "HTTP 401: bad signature") {
		t.Fatalf("%+v", res)
	}
}

func TestRefusesStaleAndUnsigned(t *testing.T) {
	srv := newTestServer(t, "shared")
	post := func(body []byte, sig string) int {
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/tools/weather", bytes.NewReader(body))
		req.Header.Set(tools.SignatureHeader, sig)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	stale := []byte(`{"tool":"weather","call_id":"x","timestamp":1000,"arguments":{"city":"Oslo"}}`)
	if code := post(stale, tools.Sign([]byte("shared"), stale)); code != http.StatusUnauthorized {
		t.Errorf("stale: %d", code)
	}
	if code := post(stale, ""); code != http.StatusUnauthorized {
		t.Errorf("unsigned: %d", code)
	}
}

func TestWeatherDeterministic(t *testing.T) {
	after := func(s string) string { return strings.SplitN(s, ": ", 2)[1] }
	if weather("Oslo", "") != weather("Oslo", "") || after(weather("Oslo", "")) != after(weather(" oslo ", "")) {
		t.Fatal("not deterministic")
	}
	if !strings.Contains(weather("Oslo", "fahrenheit"), "°F") {
		t.Fatal("unit ignored")
	}
}
