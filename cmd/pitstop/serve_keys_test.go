package main

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// SIGHUP reloads the keys file without dropping calls: a call in flight
// with a key that the new file removes still finishes; afterwards that key
// gets 401 and the new key is served. A file that does not parse keeps the
// old keys (logged).
func TestServeReloadsKeysOnSIGHUP(t *testing.T) {
	file := filepath.Join(t.TempDir(), "keys")
	write := func(s string) {
		if err := os.WriteFile(file, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("old-key tenant=team\n")
	p := startServe(t, "--model", "scripted-test", "--pace", "1", "--api-keys-file", file)
	get := func(key string) int {
		req, _ := http.NewRequest("GET", p.url("/v1/models"), nil)
		req.Header.Set("Authorization", "bearer "+key) // lowercase scheme: accepted
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if get("old-key") != 200 || get("new-key") != 401 {
		t.Fatal("before the reload")
	}
	// A streamed call that lasts a while (paced at the GPU's speed).
	body := `{"model":"pitstop-scripted-test","stream":true,"messages":[{"role":"user","content":"/long 150"}]}`
	req, _ := http.NewRequest("POST", p.url("/v1/chat/completions"), strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer old-key")
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("stream: %v %v", err, resp)
	}
	defer resp.Body.Close()

	write("new-key tenant=team\n")
	p.signal(syscall.SIGHUP)
	deadline := time.Now().Add(10 * time.Second)
	for get("new-key") != 200 {
		if time.Now().After(deadline) {
			t.Fatalf("new key not accepted after SIGHUP; log:\n%s", p.logs.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if get("old-key") != 401 {
		t.Error("removed key still accepted")
	}
	out, err := io.ReadAll(resp.Body)
	if err != nil || !strings.Contains(string(out), `"finish_reason":"stop"`) || !strings.HasSuffix(strings.TrimSpace(string(out)), "data: [DONE]") {
		t.Errorf("the call in flight did not finish: %v %q", err, tail(string(out)))
	}

	write("broken tenant=no/slash\n")
	p.signal(syscall.SIGHUP)
	time.Sleep(300 * time.Millisecond)
	if get("new-key") != 200 || !strings.Contains(p.logs.String(), "reloading API keys failed") {
		t.Errorf("a bad file replaced the keys; log:\n%s", p.logs.String())
	}
}

func tail(s string) string {
	if len(s) > 300 {
		return "…" + s[len(s)-300:]
	}
	return s
}
