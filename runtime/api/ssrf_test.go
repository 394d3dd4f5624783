package api

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/pitstop-llm/pitstop/internal/testutil"
	"github.com/pitstop-llm/pitstop/tools"
)

// ssrfServer starts h on ip (127.0.0.2 reaches the loopback interface on
// Linux too) and returns its port.
func ssrfServer(t *testing.T, ip string, h http.Handler) string {
	t.Helper()
	return fmt.Sprint(testutil.ServerOn(t, ip, h).Listener.Addr().(*net.TCPAddr).Port)
}

// Where a row must be refused.
const (
	atRegistration = "registration" // POST /v1/tools answers 400
	atCall         = "call"         // registered; the invoke is an error result
	atEither       = "either"       // a literal the policy refuses: at registration when the server gives webhooks its egress, else at the call
	allowed        = "allowed"      // reaches the allowed server
)

// TestSSRFWebhookTable registers webhook tools through the API of a server
// with API keys and the policy such a server uses (only public addresses,
// plus --webhook-allow 127.0.0.2/32), one per way of writing a refused
// target, and invokes each: none reaches the loopback servers the test
// started, and no error a caller reads holds the host, the address, the
// port or the URL. The metadata and private rows are refused before any
// packet is sent (Control runs before connect); no test connects anywhere
// but loopback.
func TestSSRFWebhookTable(t *testing.T) {
	var refusedHits, allowedHits atomic.Int32
	refused := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { refusedHits.Add(1) })
	v4 := ssrfServer(t, "127.0.0.1", refused)
	v6 := ssrfServer(t, "::1", refused)
	mux := http.NewServeMux()
	mux.HandleFunc("/ok", func(w http.ResponseWriter, r *http.Request) {
		allowedHits.Add(1)
		json.NewEncoder(w).Encode(map[string]string{"content": "reached the allowed server"})
	})
	mux.HandleFunc("/to-literal", func(w http.ResponseWriter, r *http.Request) {
		allowedHits.Add(1)
		http.Redirect(w, r, "http://127.0.0.1:"+v4+"/hook?key=secret", http.StatusTemporaryRedirect)
	})
	mux.HandleFunc("/to-name", func(w http.ResponseWriter, r *http.Request) {
		allowedHits.Add(1)
		http.Redirect(w, r, "http://localhost:"+v4+"/hook?key=secret", http.StatusPermanentRedirect)
	})
	mux.HandleFunc("/big", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		io.WriteString(w, strings.Repeat("x", tools.DefaultWebhookMaxResponseBytes+1))
	})
	ok := ssrfServer(t, "127.0.0.2", mux)

	allow, err := tools.ParseAllowList("127.0.0.2/32")
	if err != nil {
		t.Fatal(err)
	}
	ts := newTestServer(t, serverOpts{api: Config{APIKeys: []string{"key"}, AllowToolRegistration: true,
		WebhookPolicy: &tools.DialPolicy{Allow: allow}}})
	auth := map[string]string{"Authorization": "Bearer key"}

	const hook = "/hook?key=secret"
	rows := []struct {
		name, url, where string
	}{
		{"dotted", "http://127.0.0.1:" + v4 + hook, atEither},
		{"hosts_file_name", "http://localhost:" + v4 + hook, atCall},
		{"decimal", "http://2130706433:" + v4 + hook, atRegistration},
		{"hex", "http://0x7f000001:" + v4 + hook, atRegistration},
		{"octal", "http://0177.0.0.1:" + v4 + hook, atRegistration},
		{"short", "http://127.1:" + v4 + hook, atRegistration},
		{"ipv6_loopback", "http://[::1]:" + v6 + hook, atEither},
		{"ipv4_mapped", "http://[::ffff:127.0.0.1]:" + v4 + hook, atEither},
		{"ipv4_mapped_hex", "http://[::ffff:7f00:1]:" + v4 + hook, atEither},
		{"metadata", "http://169.254.169.254" + hook, atEither},
		{"metadata_decimal", "http://2852039166" + hook, atRegistration},
		{"private_a", "http://10.0.0.1" + hook, atEither},
		{"private_c", "http://192.168.1.1" + hook, atEither},
		{"redirect_to_literal", "http://127.0.0.2:" + ok + "/to-literal", atCall},
		{"redirect_to_name", "http://127.0.0.2:" + ok + "/to-name", atCall},
		{"allow_list", "http://127.0.0.2:" + ok + "/ok", allowed},
	}
	hidden := []string{"127.0.0.", "::1", "ffff", "localhost", "169.254", "2852039166", "10.0.0.1", "192.168", "2130706433",
		"0x7f", "0177", "127.1", v4, v6, ok, "key=secret", "/hook", "/to-", "http:"}
	for _, row := range rows {
		status, reg := ts.do("POST", "/v1/tools", fmt.Sprintf(`{"name":%q,"url":%q,"timeout_s":5}`, row.name, row.url), auth)
		if status != http.StatusCreated {
			wantError(t, status, reg, http.StatusBadRequest, "")
			msg := reg["error"].(map[string]any)["message"].(string)
			t.Logf("%-20s registration refused: %s", row.name, msg)
			if row.where == atCall || row.where == allowed {
				t.Errorf("%s: registration refused: %s", row.name, msg)
			}
			if !strings.Contains(msg, "the webhook URL's host is") {
				t.Errorf("%s: registration message %q", row.name, msg)
			}
			noTarget(t, row.name+" registration", msg, hidden)
			continue
		}
		if row.where == atRegistration {
			t.Errorf("%s: registered (%v)", row.name, reg)
			continue
		}
		status, out := ts.do("POST", "/v1/tools/"+row.name+"/invoke", `{"arguments":{}}`, auth)
		if status != http.StatusOK {
			t.Errorf("%s: invoke status %d %v", row.name, status, out)
			continue
		}
		content, _ := out["content"].(string)
		t.Logf("%-20s invoked: %s", row.name, content)
		if row.where == allowed {
			if out["is_error"] != false || content != "reached the allowed server" {
				t.Errorf("%s: %v", row.name, out)
			}
			continue
		}
		refusal := `webhook of tool "` + row.name + `" refused by the egress policy`
		if strings.HasPrefix(row.name, "redirect") && !strings.Contains(content, refusal) {
			// A server whose webhook client does not follow redirects
			// answers with the redirect itself.
			refusal = `webhook of tool "` + row.name + `" returned HTTP 30`
		}
		if out["is_error"] != true || !strings.Contains(content, refusal) {
			t.Errorf("%s: %v, want %q", row.name, out, refusal)
		}
		noTarget(t, row.name, content, hidden)
	}
	if n := refusedHits.Load(); n != 0 {
		t.Errorf("%d requests reached the refused servers", n)
	}
	if n := allowedHits.Load(); n != 3 {
		t.Errorf("the allowed server got %d requests, want 3 (allow list, two redirects)", n)
	}

	// The server's maxima: a timeout above the maximum is refused at
	// registration, naming it; a response over the size cap is an error
	// result naming the tool and the cap.
	over := tools.WebhookLimits{}.Effective().MaxTimeout.Seconds() + 1
	status, reg := ts.do("POST", "/v1/tools", fmt.Sprintf(`{"name":"slow","url":"http://127.0.0.2:%s/ok","timeout_s":%v}`, ok, over), auth)
	wantError(t, status, reg, http.StatusBadRequest, "")
	if msg, _ := reg["error"].(map[string]any)["message"].(string); !strings.Contains(msg, "maximum") {
		t.Errorf("timeout above the maximum: %q", msg)
	}
	if status, reg := ts.do("POST", "/v1/tools", `{"name":"big","url":"http://127.0.0.2:`+ok+`/big"}`, auth); status != http.StatusCreated {
		t.Fatalf("register big: %d %v", status, reg)
	}
	_, out := ts.do("POST", "/v1/tools/big/invoke", `{"arguments":{}}`, auth)
	want := fmt.Sprintf(`webhook of tool "big" response larger than %d bytes`, tools.DefaultWebhookMaxResponseBytes)
	if content, _ := out["content"].(string); out["is_error"] != true || !strings.Contains(content, want) {
		t.Errorf("big: %v, want %q", out, want)
	}
}

// noTarget fails when text holds any form of a webhook's target.
func noTarget(t *testing.T, what, text string, forms []string) {
	t.Helper()
	for _, f := range forms {
		if strings.Contains(strings.ToLower(text), strings.ToLower(f)) {
			t.Errorf("%s names the target (%q): %q", what, f, text)
		}
	}
}
