package main

import (
	"bufio"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The real serve binary with two tenants' keys and a short program TTL:
// /metrics (the admin's) counts the tenants whose program statistics the
// policy keeps (pitstop_policy_classes): both while both call, one once a
// tenant has been idle past the TTL while the other keeps calling, and both
// again when the idle one comes back. The in-process form of this test,
// with the policy's classes by name, is runtime/api's
// TestServeDropsIdleTenantsStatisticsEndToEnd.
func TestServeMetricsCountPolicyClassesAcrossIdleTenant(t *testing.T) {
	file := filepath.Join(t.TempDir(), "keys")
	if err := os.WriteFile(file, []byte("ka tenant=alpha\nkb tenant=beta\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	p := startServe(t, "--model", "scripted-test", "--pace", "0.05", "--api-keys-file", file,
		"--admin-key", "root", "--program-ttl", "300ms")
	call := func(key string) {
		t.Helper()
		body := `{"model":"pitstop-scripted-test","messages":[{"role":"user","content":"hi"}]}`
		req, _ := http.NewRequest("POST", p.url("/v1/chat/completions"), strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+key)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("tenant key %s: status %d; log:\n%s", key, resp.StatusCode, p.logs.String())
		}
	}
	classes := func() int {
		t.Helper()
		req, _ := http.NewRequest("GET", p.url("/metrics"), nil)
		req.Header.Set("Authorization", "Bearer root")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			if v, ok := strings.CutPrefix(sc.Text(), "pitstop_policy_classes "); ok {
				n, err := strconv.ParseFloat(v, 64)
				if err != nil {
					t.Fatalf("pitstop_policy_classes %q", v)
				}
				return int(n)
			}
		}
		t.Fatal("no pitstop_policy_classes in /metrics")
		return 0
	}
	// waitFor calls beta (which stays busy) until the gauge reads want.
	waitFor := func(want int, what string) {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for {
			call("kb")
			if classes() == want {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: pitstop_policy_classes %d, want %d", what, classes(), want)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	call("ka")
	waitFor(2, "both tenants called")
	waitFor(1, "alpha idle past the program TTL while beta calls")
	call("ka")
	waitFor(2, "alpha back")
}
