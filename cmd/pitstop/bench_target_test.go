package main

import (
	"log/slog"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pitstop-llm/pitstop/runtime"
	"github.com/pitstop-llm/pitstop/runtime/api"
)

// TestBenchTarget replays a small workload against a pitstop server as
// real clients (bench --target): every call completes and the report has
// the simulator's fields.
func TestBenchTarget(t *testing.T) {
	rt, err := runtime.New(runtime.Config{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	srv, err := api.New(api.Config{Runtime: rt, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv.Handler())
	defer hs.Close()
	js := filepath.Join(t.TempDir(), "r.json")
	code, stdout, stderr := pitstop(t, "bench", "--target", hs.URL+"/v1", "--target-label", "direct", "--workload", "react",
		"--scale-tokens", "0.05", "--scale-time", "0.01", "--rates", "4", "--duration", "2", "--target-programs", "3", "--json", js)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, "direct rate 4: 3 programs") || !strings.Contains(stdout, "0 calls failed") {
		t.Errorf("stdout %q", stdout)
	}
	var rep struct {
		Executor string
		Runs     []struct {
			Policy               string
			Requests, Completed  int
			E2EMeanS             float64 `json:"e2e_mean_s"`
			ProgramTokenLatencyS float64 `json:"program_token_latency_s"`
		}
	}
	readJSON(t, js, &rep)
	if rep.Executor != "target" || len(rep.Runs) != 1 {
		t.Fatalf("report %+v", rep)
	}
	if r := rep.Runs[0]; r.Policy != "direct" || r.Requests == 0 || r.Completed != r.Requests || r.E2EMeanS <= 0 || r.ProgramTokenLatencyS <= 0 {
		t.Errorf("run %+v", r)
	}
}

func TestRouterFlagsBadInput(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"bench", "--target", "ftp://x"}, "--target: malformed URL"},
		{[]string{"bench", "--target-model", "m"}, "--target-model needs --target"},
		{[]string{"serve", "--backend", "http://a:1,kind=tgi"}, `unknown kind "tgi"`},
		{[]string{"serve", "--backend", "http://a:1", "--balancer", "nope"}, "unknown balancer"},
		{[]string{"serve", "--backend", "http://a:1", "--router-order", "lifo"}, "--router-order"},
		{[]string{"serve", "--backend", "http://a:1", "--pace", "2"}, "--pace describes a model"},
		{[]string{"serve", "--router-order", "fcfs"}, "needs --backend"},
		{[]string{"serve", "--backend-dns", "http://vllm:8000,weight=-1"}, "--backend-dns"},
	} {
		code, _, stderr := pitstop(t, c.args...)
		if code != 2 || !strings.Contains(stderr, c.want) || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and one line with %q", c.args, code, stderr, c.want)
		}
	}
}
