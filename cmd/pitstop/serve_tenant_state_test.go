package main

import (
	"bufio"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pitstop-llm/pitstop/predictor"
	"github.com/pitstop-llm/pitstop/runtime"
)

// The real binary keeps each tenant's length state under
// --predictor-state-dir: saved at exit in directories that name no tenant,
// restored when the tenant calls after a restart, and evicted beyond
// --predictor-tenant-states; /metrics counts them without naming one.
func TestServeKeepsTenantLengthStates(t *testing.T) {
	if err := predictor.InitORT(); err != nil {
		t.Skipf("no ONNX Runtime (%v): export PITSTOP_ORT_LIB=$(scripts/fetch_ort.sh)", err)
	}
	dir := t.TempDir()
	keys := filepath.Join(dir, "keys")
	if err := os.WriteFile(keys, []byte("ka tenant=alpha\nkb tenant=beta\nroot admin\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	state := filepath.Join(dir, "state")
	args := []string{"--model", "scripted-test", "--api-keys-file", keys, "--predictor-state-dir", state, "--predictor-learn=false"}
	chat := func(p *serveProc, key, say string) { t.Helper(); serveChat(t, p, key, say) }

	p := startServe(t, args...)
	for range 3 {
		chat(p, "ka", "/long 30")
		chat(p, "kb", "/say ok")
	}
	if got := serveMetric(t, p, "pitstop_predictor_tenant_states"); got != 2 {
		t.Fatalf("tenant states held: %g, want 2", got)
	}
	p.signal(syscall.SIGTERM)
	if code := p.wait(20 * time.Second); code != 0 {
		t.Fatalf("exit %d; log:\n%s", code, p.logs.String())
	}
	entries, err := os.ReadDir(filepath.Join(state, runtime.TenantStatesDir))
	if err != nil {
		t.Fatal(err)
	}
	saved := 0
	for _, e := range entries {
		if strings.Contains(e.Name(), "alpha") || strings.Contains(e.Name(), "beta") {
			t.Fatalf("%s names a tenant", e.Name())
		}
		if _, err := os.Stat(filepath.Join(state, runtime.TenantStatesDir, e.Name(), predictor.ModeLedStateFile)); e.IsDir() && err == nil {
			saved++
		}
	}
	if saved != 2 {
		t.Fatalf("%d tenants' states saved at exit, want 2 (%v)", saved, entries)
	}

	p = startServe(t, append(args, "--predictor-tenant-states", "1")...)
	chat(p, "ka", "/say ok")
	chat(p, "kb", "/say ok") // evicts alpha's
	// alpha's evicted state still counts as held while its save runs in
	// the background (or while its call lets go of it): wait for the
	// gauge to come down to the cap before reading the rest.
	for deadline := time.Now().Add(10 * time.Second); serveMetric(t, p, "pitstop_predictor_tenant_states") != 1 && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
	}
	for name, want := range map[string]float64{
		`pitstop_predictor_tenant_states_started_total{from="disk"}`: 2,
		`pitstop_predictor_tenant_states_started_total{from="cold"}`: 0,
		"pitstop_predictor_tenant_states_evicted_total":              1,
		"pitstop_predictor_tenant_states":                            1,
	} {
		if got := serveMetric(t, p, name); got != want {
			t.Errorf("%s = %g, want %g", name, got, want)
		}
	}
}

// serveChat makes one non-streamed call to the scripted model as key,
// saying say, and fails the test unless it is answered 200.
func serveChat(t *testing.T, p *serveProc, key, say string) {
	t.Helper()
	body := `{"model":"pitstop-scripted-test","messages":[{"role":"user","content":"` + say + `"}]}`
	req, _ := http.NewRequest("POST", p.url("/v1/chat/completions"), strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("chat as %s: %d; log:\n%s", key, resp.StatusCode, p.logs.String())
	}
}

// serveMetric is the value of the sample named name (with its labels as
// /metrics writes them) read with the admin key root; -1 when absent.
func serveMetric(t *testing.T, p *serveProc, name string) float64 {
	t.Helper()
	req, _ := http.NewRequest("GET", p.url("/metrics"), nil)
	req.Header.Set("Authorization", "Bearer root")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), name+" "); ok {
			v, err := strconv.ParseFloat(rest, 64)
			if err != nil {
				t.Fatalf("%s: %v", sc.Text(), err)
			}
			return v
		}
	}
	return -1
}
