package main

import (
	"os"
	"path/filepath"
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
	call := func(key string) { t.Helper(); serveChat(t, p, key, "hi") }
	classes := func() int {
		t.Helper()
		n := serveMetric(t, p, "pitstop_policy_classes")
		if n < 0 {
			t.Fatal("no pitstop_policy_classes in /metrics")
		}
		return int(n)
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
