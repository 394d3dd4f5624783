package api

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/pitstop-llm/pitstop/runtime"
)

// TestServeDropsIdleTenantsStatisticsEndToEnd runs serve's stack (API keys
// of two tenants, the OpenAI API on a loopback port, the runtime that
// runtime.New builds with a short program TTL, the default policy): tenant
// alpha runs tool-using programs and goes idle while beta keeps calling.
// Past the TTL the policy has dropped alpha's program statistics and kept
// beta's; alpha's calls after it comes back are served and its statistics
// start again; beta never sees an error and its statistics are never
// dropped. /metrics (admin key) counts the tenants kept without naming them.
func TestServeDropsIdleTenantsStatisticsEndToEnd(t *testing.T) {
	const ttl = 300 * time.Millisecond
	ts := newTestServer(t, serverOpts{
		rt:  runtime.Config{ProgramTTL: ttl, Pace: 0.05},
		api: Config{Keys: keyring(t, twoTenantKeys)},
	})
	ctx := context.Background()
	kept := func() []string {
		t.Helper()
		classes, err := ts.rt.PolicyClasses(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return classes
	}
	// program runs one tool-using program of the key's tenant: two calls
	// under one program id, each with a server-side calculator round.
	program := func(key, id string) error {
		cl := ts.clientWithKey(key, map[string]string{HeaderProgram: id})
		for range 2 {
			resp, err := cl.CreateChatCompletion(ctx, openai.ChatCompletionRequest{
				Model:    "pitstop-scripted-test",
				Messages: []openai.ChatCompletionMessage{userMsg("What is (17+25)*3?")},
				Tools:    []openai.Tool{calculatorDecl()},
			})
			if err != nil {
				return fmt.Errorf("%s %s: %w", key, id, err)
			}
			if got := resp.Choices[0].Message.Content; got != "The result is 126." {
				return fmt.Errorf("%s %s: answer %q", key, id, got)
			}
			if got := resp.Header().Get(HeaderToolRounds); got != "1" {
				return fmt.Errorf("%s %s: %s tool rounds, want 1", key, id, got)
			}
		}
		return nil
	}
	for i := range 3 {
		if err := program("ka", fmt.Sprintf("a%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	alphaIdle := time.Now()
	if err := program("kb", "b-first"); err != nil {
		t.Fatal(err)
	}
	if got := kept(); !slices.Contains(got, "alpha") || !slices.Contains(got, "beta") {
		t.Fatalf("classes kept %v, want alpha and beta", got)
	}
	if n := policyClassesMetric(t, ts); n != 2 {
		t.Fatalf("pitstop_policy_classes %g, want 2", n)
	}

	// Beta keeps calling from here to the end.
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var betaErr error
	betaPrograms := 0
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			if err := program("kb", fmt.Sprintf("b%d", betaPrograms)); err != nil {
				betaErr = err
				return
			}
			betaPrograms++
		}
	})
	stopBeta := func() {
		t.Helper()
		close(stop)
		wg.Wait()
		if betaErr != nil {
			t.Fatalf("beta's program failed while alpha went and came back: %v", betaErr)
		}
	}

	deadline := time.Now().Add(100 * ttl)
	for {
		got := kept()
		if !slices.Contains(got, "beta") {
			stopBeta()
			t.Fatalf("classes kept %v: the busy tenant beta was dropped", got)
		}
		if !slices.Contains(got, "alpha") {
			if idle := time.Since(alphaIdle); idle < ttl/2 {
				stopBeta()
				t.Fatalf("alpha dropped %v after its last call, before the %v TTL", idle, ttl)
			}
			break
		}
		if time.Now().After(deadline) {
			stopBeta()
			t.Fatalf("classes kept %v %v after alpha's last call, want alpha dropped after the %v TTL", got, 100*ttl, ttl)
		}
		time.Sleep(ttl / 10)
	}
	if n := policyClassesMetric(t, ts); n != 1 {
		stopBeta()
		t.Fatalf("pitstop_policy_classes %g with alpha dropped, want 1", n)
	}

	// Alpha comes back (a program id it used before, now completed and
	// forgotten, and a new one) and is served beside beta.
	for _, id := range []string{"a0", "a-back"} {
		if err := program("ka", id); err != nil {
			stopBeta()
			t.Fatalf("alpha back: %v", err)
		}
	}
	got := kept()
	n := policyClassesMetric(t, ts)
	stopBeta()
	if !slices.Contains(got, "alpha") || !slices.Contains(got, "beta") {
		t.Fatalf("classes kept %v after alpha came back, want alpha and beta", got)
	}
	if n != 2 {
		t.Fatalf("pitstop_policy_classes %g after alpha came back, want 2", n)
	}
	if betaPrograms == 0 {
		t.Fatal("beta ran no program while alpha was idle")
	}
}

// policyClassesMetric reads pitstop_policy_classes from /metrics with the
// admin key.
func policyClassesMetric(t *testing.T, ts *testServer) float64 {
	t.Helper()
	req, err := http.NewRequest("GET", ts.http.URL+"/metrics", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer root")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(resp.Body)
		t.Fatalf("/metrics: %d %s", resp.StatusCode, body)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "pitstop_policy_classes "); ok {
			n, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatal("/metrics has no pitstop_policy_classes")
	return 0
}
