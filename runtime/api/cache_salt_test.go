package api

import (
	"context"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pitstop-llm/pitstop/runtime"
	"github.com/pitstop-llm/pitstop/runtime/remote"
	"github.com/pitstop-llm/pitstop/tools"
)

// cachedTokens posts a chat call with key's tenant and cache_salt (raw
// JSON; empty: none) and returns its usage's cached prompt tokens.
func cachedTokens(t *testing.T, ts *testServer, key, salt, text string) int {
	t.Helper()
	q, _ := json.Marshal(text)
	body := `{"model":"pitstop-scripted-test","messages":[{"role":"user","content":` + string(q) + `}]`
	if salt != "" {
		body += `,"cache_salt":` + salt
	}
	status, out := ts.do("POST", "/v1/chat/completions", body+"}", bearer(key))
	if status != 200 {
		t.Fatalf("status %d: %v", status, out)
	}
	usage, _ := out["usage"].(map[string]any)
	details, _ := usage["prompt_tokens_details"].(map[string]any)
	n, ok := details["cached_tokens"].(float64)
	if !ok {
		t.Fatalf("no usage.prompt_tokens_details.cached_tokens in %v", out)
	}
	return int(n)
}

// The prefix cache is per tenant: tenant beta's prompt, token for token
// alpha's, finds nothing cached after alpha's call, while alpha's second
// call finds its own; a cache_salt narrows a tenant's cache (a salt's first
// call finds nothing) and never joins two tenants' (beta with alpha's salt
// finds nothing).
func TestTenantPrefixCacheIsolation(t *testing.T) {
	ts := twoTenants(t, twoTenantKeys)
	text := "Summarise the following report for the board. " + strings.Repeat("The quarterly figures show steady growth in every region. ", 12)
	steps := []struct {
		name, key, salt string
		hit             bool
	}{
		{"alpha first", "ka", "", false},
		{"beta, alpha's prompt", "kb", "", false},
		{"alpha again", "ka", "", true},
		{"beta again", "kb", "", true},
		{"alpha, new cache_salt", "ka", `"team-1"`, false},
		{"alpha, that cache_salt again", "ka", `"team-1"`, true},
		{"beta, alpha's cache_salt", "kb", `"team-1"`, false},
		{"alpha, no cache_salt", "ka", "", true},
	}
	for _, st := range steps {
		got := cachedTokens(t, ts, st.key, st.salt, text)
		if st.hit && got < 64 {
			t.Errorf("%s: %d cached prompt tokens, want its own earlier call's prefix (at least 64)", st.name, got)
		}
		if !st.hit && got != 0 {
			t.Errorf("%s: %d cached prompt tokens, want 0 (no call of its tenant and salt sent it)", st.name, got)
		}
	}
}

// cache_salt is a non-empty string of at most MaxCacheSaltBytes bytes; any
// other value is a 400 naming it.
func TestCacheSaltValidation(t *testing.T) {
	long := strings.Repeat("s", runtime.MaxCacheSaltBytes)
	for _, tc := range []struct {
		raw  string
		want string // the salt taken; "!" for a 400
	}{
		{`null`, ""},
		{`"a"`, "a"},
		{`"caf\u00e9"`, "café"},
		{`"` + long + `"`, long},
		{`"` + long + `s"`, "!"},
		{`""`, "!"},
		{`1`, "!"},
		{`true`, "!"},
		{`["a"]`, "!"},
		{`{"a":"b"}`, "!"},
	} {
		body := `{"model":"m","messages":[{"role":"user","content":"x"}],"cache_salt":` + tc.raw + `}`
		p, aerr := DecodeChatRequest([]byte(body))
		if tc.want == "!" {
			if aerr == nil || aerr.Status != 400 || aerr.Param == nil || *aerr.Param != "cache_salt" || !strings.Contains(aerr.Message, "cache_salt") {
				t.Errorf("cache_salt %.40s: got %+v, want a 400 naming cache_salt", tc.raw, aerr)
			}
			continue
		}
		if aerr != nil {
			t.Errorf("cache_salt %.40s: refused: %s", tc.raw, aerr.Message)
			continue
		}
		if p.Request.CacheSalt != tc.want {
			t.Errorf("cache_salt %.40s: took %q, want %q", tc.raw, p.Request.CacheSalt, tc.want)
		}
	}
}

// The tool-result cache is per tenant, for global tools too: tenant beta's
// invoke of an idempotent tool the operator registered runs it, though
// alpha's call of the same arguments is cached (beta's answer says
// cached: false), and each tenant's second call hits its own entry.
func TestTenantToolResultCacheIsolation(t *testing.T) {
	ts := twoTenants(t, twoTenantKeys)
	var runs atomic.Int32
	lookup, err := tools.New("lookup", "an operator's idempotent tool", json.RawMessage(`{"type":"object","properties":{"q":{"type":"string"}}}`),
		func(context.Context, json.RawMessage) (string, error) { runs.Add(1); return "from operator", nil }, tools.WithCache(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if err := ts.rt.Tools().Register(lookup); err != nil { // global: every tenant's
		t.Fatal(err)
	}
	for i, st := range []struct {
		key    string
		cached bool
	}{{"ka", false}, {"kb", false}, {"ka", true}, {"kb", true}, {"root", false}} {
		status, out := ts.do("POST", "/v1/tools/lookup/invoke", `{"arguments":{"q":"who called"}}`, bearer(st.key))
		if status != 200 || out["content"] != "from operator" {
			t.Fatalf("call %d (%s): %d %v", i, st.key, status, out)
		}
		if got, _ := out["cached"].(bool); got != st.cached {
			t.Errorf("call %d (%s): cached %v, want %v", i, st.key, got, st.cached)
		}
	}
	if got := runs.Load(); got != 3 {
		t.Errorf("the tool ran %d times, want 3 (once per tenant, and once for the admin's)", got)
	}
}

// Through a router, whose backend sees every tenant as one client (the
// router), the backend's prefix cache is still per tenant: the router sends
// each tenant's calls with a cache_salt of its own.
func TestRouterTenantPrefixCacheIsolation(t *testing.T) {
	backend := newTestServer(t, serverOpts{})
	ring := keyring(t, twoTenantKeys)
	r := newRemote(t, remote.Config{HealthInterval: 100 * time.Millisecond}, backend.http.URL+",kind=pitstop")
	router := newTestServer(t, serverOpts{rt: runtime.Config{Remote: r}, api: Config{Keys: ring}})
	text := "Translate the attached contract into French, clause by clause. " + strings.Repeat("The supplier shall deliver the goods within thirty days. ", 12)
	for _, st := range []struct {
		name, key, salt string
		hit             bool
	}{
		{"alpha first", "ka", "", false},
		{"beta, alpha's prompt", "kb", "", false},
		{"alpha again", "ka", "", true},
		{"beta, alpha's cache_salt", "kb", `"s"`, false},
		{"alpha, its new cache_salt", "ka", `"s"`, false},
		{"alpha, that cache_salt again", "ka", `"s"`, true},
	} {
		got := cachedTokens(t, router, st.key, st.salt, text)
		if st.hit != (got > 0) {
			t.Errorf("%s: %d cached prompt tokens at the backend, want a hit %v", st.name, got, st.hit)
		}
	}
}
