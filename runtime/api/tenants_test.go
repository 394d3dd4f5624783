package api

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/pitstop-llm/pitstop/runtime"
)

// hookServer is a webhook tool server that answers with its own name and
// counts the calls it got.
type hookServer struct {
	*httptest.Server
	calls atomic.Int32
	args  atomic.Value // last arguments seen
}

func newHook(t *testing.T, name string) *hookServer {
	h := &hookServer{}
	h.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Arguments json.RawMessage `json:"arguments"`
		}
		body, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(body, &req)
		h.calls.Add(1)
		h.args.Store(string(req.Arguments))
		_ = json.NewEncoder(w).Encode(map[string]string{"content": "from " + name})
	}))
	t.Cleanup(h.Close)
	return h
}

func bearer(key string) map[string]string { return map[string]string{"Authorization": "Bearer " + key} }

func withHeaders(a, b map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out[k] = v
	}
	return out
}

// twoTenants serves tenants "alpha" (key ka) and "beta" (key kb) and an
// admin (key root).
func twoTenants(t *testing.T, keysFile string) *testServer {
	t.Helper()
	return newTestServer(t, serverOpts{api: Config{Keys: keyring(t, keysFile), AllowToolRegistration: true}})
}

// keyring is the keyring of a keys file's text.
func keyring(t *testing.T, keysFile string) *Keyring {
	t.Helper()
	keys, overrides, err := ParseKeysFile([]byte(keysFile))
	if err != nil {
		t.Fatal(err)
	}
	ring, err := NewKeyring(keys, overrides)
	if err != nil {
		t.Fatal(err)
	}
	return ring
}

const twoTenantKeys = "ka tenant=alpha\nkb tenant=beta\nroot admin\n"

// Webhook tools belong to the tenant that registered them: the other tenant
// neither lists, invokes, replaces nor deletes them, and its model calls
// of the same name reach its own tool; the same name in two tenants is two
// tools.
func TestTenantToolIsolation(t *testing.T) {
	ts := twoTenants(t, twoTenantKeys)
	hookA, hookB := newHook(t, "alpha"), newHook(t, "beta")
	register := func(key string, hook *hookServer, want int) {
		t.Helper()
		body := `{"name":"get_weather","url":"` + hook.URL + `","parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}`
		if status, out := ts.do("POST", "/v1/tools", body, bearer(key)); status != want {
			t.Fatalf("register as %s: %d %v", key, status, out)
		}
	}
	register("ka", hookA, http.StatusCreated)

	// Beta does not see alpha's tool, cannot invoke or delete it.
	listed := func(key string) []string {
		_, out := ts.do("GET", "/v1/tools", "", bearer(key))
		var names []string
		for _, d := range out["data"].([]any) {
			m := d.(map[string]any)
			names = append(names, m["function"].(map[string]any)["name"].(string)+"@"+asString(m["tenant"]))
		}
		return names
	}
	if got := strings.Join(listed("kb"), ","); strings.Contains(got, "get_weather") {
		t.Errorf("beta lists alpha's tool: %s", got)
	}
	if got := strings.Join(listed("ka"), ","); !strings.Contains(got, "get_weather@alpha") || !strings.Contains(got, "calculator@") {
		t.Errorf("alpha's list: %s", got)
	}
	status, out := ts.do("POST", "/v1/tools/get_weather/invoke", `{"arguments":{"city":"Oslo"}}`, bearer("kb"))
	wantError(t, status, out, http.StatusNotFound, "name")
	if hookA.calls.Load() != 0 {
		t.Fatal("beta's invoke reached alpha's webhook")
	}
	status, out = ts.do("DELETE", "/v1/tools/get_weather", "", bearer("kb"))
	wantError(t, status, out, http.StatusNotFound, "name")
	status, out = ts.do("DELETE", "/v1/tools/calculator", "", bearer("kb"))
	wantError(t, status, out, http.StatusConflict, "name")
	register("kb", hookB, http.StatusCreated) // the same name: beta's own tool
	register("ka", hookB, http.StatusConflict)
	status, out = ts.do("POST", "/v1/tools", `{"name":"calculator","url":"`+hookB.URL+`"}`, bearer("kb"))
	wantError(t, status, out, http.StatusConflict, "name")

	// Each tenant's model calls reach its own webhook with its own arguments.
	ask := func(key, city string) string {
		t.Helper()
		resp, err := ts.clientWithKey(key, nil).CreateChatCompletion(context.Background(), openai.ChatCompletionRequest{
			Model: "pitstop-scripted-test", Tools: []openai.Tool{weatherDecl()},
			Messages: []openai.ChatCompletionMessage{userMsg(`/call get_weather {"city": "` + city + `"}`)}})
		if err != nil {
			t.Fatal(err)
		}
		return resp.Choices[0].Message.Content
	}
	if got := ask("ka", "Lyon"); got != "The result is from alpha." {
		t.Errorf("alpha's call: %q", got)
	}
	if got := ask("kb", "Oslo"); got != "The result is from beta." {
		t.Errorf("beta's call: %q", got)
	}
	if hookA.calls.Load() != 1 || hookB.calls.Load() != 1 || !strings.Contains(hookA.args.Load().(string), "Lyon") {
		t.Errorf("webhook calls: alpha %d (%v), beta %d", hookA.calls.Load(), hookA.args.Load(), hookB.calls.Load())
	}

	// PUT replaces the caller's own tool; DELETE removes it, not the other's.
	status, out = ts.do("PUT", "/v1/tools/get_weather", `{"url":"`+hookB.URL+`","description":"replaced"}`, bearer("ka"))
	if status != http.StatusOK || out["function"].(map[string]any)["description"] != "replaced" {
		t.Errorf("replace: %d %v", status, out)
	}
	if status, out := ts.do("DELETE", "/v1/tools/get_weather", "", bearer("ka")); status != 200 || out["deleted"] != true {
		t.Errorf("delete: %d %v", status, out)
	}
	if got := strings.Join(listed("ka"), ","); strings.Contains(got, "get_weather") {
		t.Errorf("deleted tool still listed: %s", got)
	}
	if got := strings.Join(listed("kb"), ","); !strings.Contains(got, "get_weather@beta") {
		t.Errorf("beta's tool went with alpha's delete: %s", got)
	}
	// The admin sees every tenant's tools.
	if got := strings.Join(listed("root"), ","); !strings.Contains(got, "get_weather@beta") {
		t.Errorf("admin's list: %s", got)
	}
}

func asString(v any) string {
	s, _ := v.(string)
	return s
}

// Programs are namespaced per tenant: one tenant cannot list or read
// another's, and using another tenant's program id makes a program of its
// own; the admin sees both.
func TestTenantProgramIsolation(t *testing.T) {
	ts := twoTenants(t, twoTenantKeys)
	call := func(key, program string) {
		t.Helper()
		c := ts.clientWithKey(key, map[string]string{HeaderProgram: program})
		if _, err := c.CreateChatCompletion(context.Background(), openai.ChatCompletionRequest{
			Model: "pitstop-scripted-test", Messages: []openai.ChatCompletionMessage{userMsg("hello")}}); err != nil {
			t.Fatal(err)
		}
	}
	call("ka", "shared-id")
	call("ka", "shared-id")
	call("kb", "shared-id") // beta's own program, not alpha's third call

	ids := func(key string) map[string]float64 {
		t.Helper()
		status, out := ts.do("GET", "/v1/programs", "", bearer(key))
		if status != 200 {
			t.Fatalf("programs: %d %v", status, out)
		}
		got := map[string]float64{}
		for _, d := range out["data"].([]any) {
			m := d.(map[string]any)
			got[asString(m["tenant"])+"/"+m["id"].(string)] = m["calls"].(float64)
		}
		return got
	}
	if got := ids("ka"); len(got) != 1 || got["alpha/shared-id"] != 2 {
		t.Errorf("alpha's programs: %v", got)
	}
	if got := ids("kb"); len(got) != 1 || got["beta/shared-id"] != 1 {
		t.Errorf("beta's programs: %v", got)
	}
	if got := ids("root"); got["alpha/shared-id"] != 2 || got["beta/shared-id"] != 1 {
		t.Errorf("admin's programs: %v", got)
	}
	status, out := ts.do("GET", "/v1/programs/shared-id", "", bearer("kb"))
	if status != 200 || out["calls"].(float64) != 1 || out["tenant"] != "beta" {
		t.Errorf("beta reads its own program: %d %v", status, out)
	}
	status, out = ts.do("GET", "/v1/programs/only-alpha", "", bearer("kb"))
	wantError(t, status, out, http.StatusNotFound, "id")
	call("ka", "only-alpha")
	status, out = ts.do("GET", "/v1/programs/only-alpha", "", bearer("kb"))
	wantError(t, status, out, http.StatusNotFound, "id")
	if status, out := ts.do("GET", "/v1/programs/only-alpha?tenant=alpha", "", bearer("root")); status != 200 || out["calls"].(float64) != 1 {
		t.Errorf("admin reads alpha's program: %d %v", status, out)
	}
	// A tenant's ?tenant= is ignored: it reads its own namespace only.
	status, out = ts.do("GET", "/v1/programs/only-alpha?tenant=alpha", "", bearer("kb"))
	wantError(t, status, out, http.StatusNotFound, "id")
}

// Per-tenant limits answer 429 with Retry-After and OpenAI's error body,
// through go-openai as a client sees them; the other tenant is not held to
// them.
func TestTenantLimits(t *testing.T) {
	ts := twoTenants(t, "ka tenant=alpha max-concurrent=1 max-tools=1\nkb tenant=beta tokens-per-s=20\n")

	// One tool at most: the second registration is refused, replacing is not.
	hook := newHook(t, "x")
	reg := func(name string) (int, map[string]any) {
		return ts.do("POST", "/v1/tools", `{"name":"`+name+`","url":"`+hook.URL+`"}`, bearer("ka"))
	}
	if status, out := reg("one"); status != http.StatusCreated {
		t.Fatalf("first tool: %d %v", status, out)
	}
	status, out := reg("two")
	wantError(t, status, out, http.StatusTooManyRequests, "")

	// One call in flight at most: a second one gets 429 while a webhook holds
	// the first.
	release, entered := make(chan struct{}), make(chan struct{}, 1)
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		entered <- struct{}{}
		<-release
		_, _ = io.WriteString(w, "done")
	}))
	defer slow.Close()
	if status, out := ts.do("PUT", "/v1/tools/one", `{"url":"`+slow.URL+`"}`, bearer("ka")); status != 200 {
		t.Fatalf("replace: %d %v", status, out)
	}
	first := make(chan error, 1)
	go func() {
		_, err := ts.clientWithKey("ka", nil).CreateChatCompletion(context.Background(), openai.ChatCompletionRequest{
			Model: "pitstop-scripted-test", Tools: []openai.Tool{{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{Name: "one"}}},
			Messages: []openai.ChatCompletionMessage{userMsg(`/call one {}`)}})
		first <- err
	}()
	select { // the first call holds its slot: its tool is running
	case <-entered:
	case err := <-first:
		t.Fatalf("first call ended before its tool ran: %v", err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, err := ts.clientWithKey("ka", nil).CreateChatCompletion(context.Background(), openai.ChatCompletionRequest{
			Model: "pitstop-scripted-test", Messages: []openai.ChatCompletionMessage{userMsg("hi")}})
		var ae *openai.APIError
		if errors.As(err, &ae) && ae.HTTPStatusCode == http.StatusTooManyRequests {
			if ae.Type != "rate_limit_error" || !strings.Contains(ae.Message, "1 concurrent") {
				t.Errorf("429 body: %+v", ae)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no 429 while a call was in flight (last: %v)", err)
		}
		time.Sleep(5 * time.Millisecond)
	}
	req, _ := http.NewRequest("POST", ts.http.URL+"/v1/chat/completions", strings.NewReader(`{"model":"pitstop-scripted-test","messages":[{"role":"user","content":"hi"}]}`))
	req.Header.Set("Authorization", "Bearer ka")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") == "" {
		t.Errorf("second call: %d, Retry-After %q", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	// Beta is not held to alpha's concurrency limit.
	if _, err := ts.clientWithKey("kb", nil).CreateChatCompletion(context.Background(), openai.ChatCompletionRequest{
		Model: "pitstop-scripted-test", Messages: []openai.ChatCompletionMessage{userMsg("hi")}}); err != nil {
		t.Errorf("beta while alpha is at its limit: %v", err)
	}
	close(release)
	if err := <-first; err != nil {
		t.Fatalf("first call: %v", err)
	}

	// Beta's token rate (20/s, a bucket of 200): a long answer overdraws it,
	// the next call is refused with the time to refill.
	if _, err := ts.clientWithKey("kb", nil).CreateChatCompletion(context.Background(), openai.ChatCompletionRequest{
		Model: "pitstop-scripted-test", Messages: []openai.ChatCompletionMessage{userMsg("/long 400")}}); err != nil {
		t.Fatal(err)
	}
	req, _ = http.NewRequest("POST", ts.http.URL+"/v1/chat/completions", strings.NewReader(`{"model":"pitstop-scripted-test","messages":[{"role":"user","content":"hi"}]}`))
	req.Header.Set("Authorization", "Bearer kb")
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") == "" || !strings.Contains(string(body), "tokens per second") {
		t.Errorf("over the token rate: %d, Retry-After %q, %s", resp.StatusCode, resp.Header.Get("Retry-After"), body)
	}
}

// Reloading the keys takes effect for the next requests: a removed key is
// refused, a new one accepted with its tenant's limits.
func TestReloadKeys(t *testing.T) {
	ts := twoTenants(t, twoTenantKeys)
	ok := func(key string) int {
		status, _ := ts.do("GET", "/v1/models", "", bearer(key))
		return status
	}
	if ok("ka") != 200 || ok("kc") != 401 {
		t.Fatal("before reload")
	}
	if err := ts.srv.ReloadKeys(keyring(t, "kc tenant=alpha max-concurrent=0\nroot admin\n")); err != nil {
		t.Fatal(err)
	}
	if ok("ka") != 401 || ok("kc") != 200 {
		t.Errorf("after reload: ka %d, kc %d", ok("ka"), ok("kc"))
	}
}

// The keys file: tenants, admin, limits; bad lines name the line and never
// quote a whole key.
func TestParseKeysFile(t *testing.T) {
	keys, over, err := ParseKeysFile([]byte("# comment\nk1 tenant=team-a max-concurrent=4\nk2 tenant=team-a tokens-per-s=100\n\nk3\nk4 admin\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) != 4 || keys[0].Tenant != "team-a" || keys[1].Tenant != "team-a" || keys[2].Tenant != plainTenant("k3") ||
		keys[3].Tenant != AdminTenant || !keys[3].Admin || keys[2].Admin {
		t.Errorf("keys %+v", keys)
	}
	ring, _ := NewKeyring(keys, over)
	l := ring.Limits(runtime.TenantLimits{MaxTools: 7, MaxConcurrent: 9})
	if got := l["team-a"]; got.MaxConcurrent != 4 || got.TokensPerSecond != 100 || got.MaxTools != 7 {
		t.Errorf("team-a limits %+v", got)
	}
	for _, bad := range []string{
		"k1 tenant=a b",
		"k1 tenant=has/slash",
		"k1 max-concurrent=-1",
		"k1 tokens-per-s=NaN",
		"k1 tenant=a max-tools=1\nk2 tenant=a max-tools=2",
		"supersecretkeyvalue123456789 supersecretkeyvalue123456789-more",
	} {
		_, _, err := ParseKeysFile([]byte(bad))
		if err == nil {
			t.Errorf("%q accepted", bad)
			continue
		}
		if !strings.Contains(err.Error(), "line ") || strings.Contains(err.Error(), "supersecretkeyvalue123456789-more") {
			t.Errorf("%q: error %q", bad, err)
		}
	}
	if _, err := NewKeyring([]Key{{Secret: "a", Tenant: "x"}, {Secret: "a", Tenant: "y"}}, nil); err == nil {
		t.Error("a key given twice accepted")
	}
}
