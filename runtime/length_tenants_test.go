package runtime

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/pitstop-llm/pitstop/internal/testutil"
	"github.com/pitstop-llm/pitstop/predictor"
	"github.com/pitstop-llm/pitstop/runtime/internal/tracetest"
)

// goLength is the shipped length model run in Go (no ONNX Runtime needed).
func goLength(t *testing.T) predictor.GoClassifier {
	t.Helper()
	info, err := predictor.ParseONNX(predictor.DefaultModelBytes())
	if err != nil {
		t.Fatal(err)
	}
	return predictor.GoClassifier{MLP: info.MLP, OverflowTokens: info.OverflowTokens}
}

// teachModes runs n programs of tenant through rt in which the answer after
// cat is long and after ls short, the ls command being the longer call:
// enough for the tenant's window modes to be chosen over the mixture
// (TestServePredictsWhatEvalReplays).
func teachModes(t *testing.T, rt *Runtime, tenant string, n int) {
	t.Helper()
	for i := range n {
		req := shellCall(fmt.Sprintf("teach%02d", i), "cat a.txt", "/long 40")
		if i%2 == 1 {
			req = shellCall(fmt.Sprintf("teach%02d", i), "ls -la /srv/data/archive/2026/november/reports", "/say ok")
		}
		req.Tenant = tenant
		if _, err := rt.ChatSync(context.Background(), req); err != nil {
			t.Fatal(err)
		}
	}
}

// probePredictions runs four fresh programs of tenant through rt and
// returns the lengths predicted for their segments, in program order.
func probePredictions(t *testing.T, rt *Runtime, sink *testutil.LockedBuffer, before int, tenant string) []int {
	t.Helper()
	for i, cmd := range []string{"cat b.txt", "ls", "cat c.txt", "ls -la /srv"} {
		req := shellCall(fmt.Sprintf("probe%d", i), cmd, "/say ok")
		req.Tenant = tenant
		if _, err := rt.ChatSync(context.Background(), req); err != nil {
			t.Fatal(err)
		}
	}
	return tracetest.PredictedLengths(tracetest.Records(t, sink, before+8), "probe")
}

// One tenant's finished segments never move the lengths predicted for
// another tenant's calls: tenant b predicts the same after tenant a taught
// its window modes as on a server where a never called, while a's own
// next calls predict otherwise (the control: the teaching does move the
// predictions of the tenant that taught).
func TestTenantsLearnLengthsApart(t *testing.T) {
	model := goLength(t)
	const taught = 40
	run := func(teacher, prober string) ([]int, *Runtime) {
		sink := &testutil.LockedBuffer{}
		rt := newTestRuntime(t, Config{Tools: shellTools(), Length: model, Trace: sink})
		n := 0
		if teacher != "" {
			teachModes(t, rt, teacher, taught)
			n = 2 * taught
		}
		return probePredictions(t, rt, sink, n, prober), rt
	}
	alone, _ := run("", "b")
	afterA, rt := run("a", "b")
	if !slices.Equal(afterA, alone) {
		t.Fatalf("tenant b's predictions moved with tenant a's segments: %v, alone %v", afterA, alone)
	}
	own, _ := run("a", "a")
	if slices.Equal(own, alone) {
		t.Fatalf("tenant a's teaching does not move even its own predictions (%v): the test cannot tell isolation from none", own)
	}
	if got := gaugeWith(t, rt, "pitstop_predictor_tenant_states", nil); got != 2 {
		t.Fatalf("pitstop_predictor_tenant_states = %g, want 2 (a and b)", got)
	}
	if got := gaugeWith(t, rt, "pitstop_predictor_mode_chosen", nil); got != 1 {
		t.Fatalf("pitstop_predictor_mode_chosen = %g, want 1 (a's modes, not b's)", got)
	}
	if rt.length.led.ModeChosen() || !slices.Equal(weightsOf(rt.length.mix), weightsOf(predictor.OrderScored(-1))) {
		t.Fatal("the deployment's own state (calls without a tenant) learnt from the tenants' segments")
	}
}

// weightsOf is a mixture's weights, first segments then later ones.
func weightsOf(x *predictor.ExpertMix) []float64 {
	first, later := x.Weights()
	return append(first[:], later[:]...)
}

// fingerprint is what a step predicts for a few inputs: the window modes'
// points and modes after shell calls of several classes, and the
// mixture's weights.
func fingerprint(s predictor.ServedStep) []float64 {
	var out []float64
	for _, v := range modePredictions(s.Led) {
		out = append(out, float64(v))
	}
	return append(out, weightsOf(s.Mix)...)
}

// feed books n finished segments after shell calls of class, each actual
// tokens long, into s.
func feed(s predictor.ServedStep, class string, n, actual int) {
	for i := range n {
		in := predictor.Input{LastTool: "shell", LastToolClass: class, LastMessage: "done", History: predictor.History{Calls: 1, LastOutputTokens: 30}}
		var b predictor.ProgramBlend
		p := s.Predict(b, in, 20+i%7, nil, 0)
		s.Observe(b, in, p, actual+i%3, "shell")
	}
}

func quietLog() *slog.Logger { return slog.New(slog.DiscardHandler) }

// Each tenant's state is saved under the state directory in a directory
// named by a keyed hash of its name (never the name), and restored when the
// tenant calls after a restart; another tenant, or the same name with
// another naming key, starts cold.
func TestTenantStatesKeptAcrossRestarts(t *testing.T) {
	dir := t.TempDir()
	const median = 60
	ts := newTenantSteps(median, predictor.NewServedStep(median), 8, quietLog())
	if err := ts.persist(dir); err != nil {
		t.Fatal(err)
	}
	cold := fingerprint(predictor.NewServedStep(median))
	a, b := ts.acquire("team-alpha"), ts.acquire("key-3f2a")
	feed(a.served(), "prog:cat", 40, 300)
	feed(b.served(), "prog:ls", 40, 7)
	wantA, wantB := fingerprint(a.served()), fingerprint(b.served())
	if slices.Equal(wantA, cold) || slices.Equal(wantB, cold) || slices.Equal(wantA, wantB) {
		t.Fatal("the segments fed do not change the states: the test cannot tell a restore from a cold start")
	}
	ts.release(a)
	ts.release(b)
	ts.close()

	entries, err := os.ReadDir(filepath.Join(dir, TenantStatesDir))
	if err != nil {
		t.Fatal(err)
	}
	var dirs []string
	for _, e := range entries {
		if strings.Contains(e.Name(), "alpha") || strings.Contains(e.Name(), "3f2a") {
			t.Fatalf("%s names a tenant", e.Name())
		}
		if e.IsDir() {
			dirs = append(dirs, e.Name())
			for _, f := range []string{predictor.ExpertMixStateFile, predictor.ModeLedStateFile} {
				if _, err := os.Stat(filepath.Join(dir, TenantStatesDir, e.Name(), f)); err != nil {
					t.Fatalf("tenant state %s: %v", e.Name(), err)
				}
			}
		}
	}
	if len(dirs) != 2 {
		t.Fatalf("tenant state directories %v, want 2", dirs)
	}
	st, err := os.Stat(filepath.Join(dir, TenantStatesDir, TenantStateKeyFile))
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("naming key: %v, mode %v; want 0600", err, st.Mode())
	}

	again := newTenantSteps(median, predictor.NewServedStep(median), 8, quietLog())
	if err := again.persist(dir); err != nil {
		t.Fatal(err)
	}
	if got := fingerprint(again.acquire("team-alpha").served()); !slices.Equal(got, wantA) {
		t.Fatalf("team-alpha after a restart: %v, before %v", got, wantA)
	}
	if got := fingerprint(again.acquire("key-3f2a").served()); !slices.Equal(got, wantB) {
		t.Fatalf("key-3f2a after a restart: %v, before %v", got, wantB)
	}
	if got := fingerprint(again.acquire("team-beta").served()); !slices.Equal(got, cold) {
		t.Fatalf("a new tenant does not start cold: %v", got)
	}
	if s := again.stats(); s.restored != 2 || s.cold != 1 {
		t.Fatalf("started %+v, want 2 restored and 1 cold", s)
	}

	// Another naming key (the key file removed) finds none of the states.
	if err := os.Remove(filepath.Join(dir, TenantStatesDir, TenantStateKeyFile)); err != nil {
		t.Fatal(err)
	}
	rekeyed := newTenantSteps(median, predictor.NewServedStep(median), 8, quietLog())
	if err := rekeyed.persist(dir); err != nil {
		t.Fatal(err)
	}
	if got := fingerprint(rekeyed.acquire("team-alpha").served()); !slices.Equal(got, cold) {
		t.Fatal("with another naming key team-alpha's state was still found")
	}
	// A naming key of the wrong size is an error, and is kept.
	if err := os.WriteFile(filepath.Join(dir, TenantStatesDir, TenantStateKeyFile), []byte("short"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := newTenantSteps(median, predictor.NewServedStep(median), 8, quietLog()).persist(dir); err == nil || !strings.Contains(err.Error(), "5 bytes") {
		t.Fatalf("a 5-byte naming key: %v", err)
	}
}

// Beyond the cap the least recently used tenant's state leaves memory,
// saved, and comes back from disk when the tenant calls again; one a call
// still holds stays in memory until the call ends. Without a state
// directory an evicted tenant starts cold again.
func TestTenantStatesEvictLeastRecentlyUsed(t *testing.T) {
	const median = 60
	cold := fingerprint(predictor.NewServedStep(median))
	for _, persisted := range []bool{true, false} {
		ts := newTenantSteps(median, predictor.NewServedStep(median), 2, quietLog())
		if persisted {
			if err := ts.persist(t.TempDir()); err != nil {
				t.Fatal(err)
			}
		}
		use := func(tenant string, n int) []float64 {
			s := ts.acquire(tenant)
			defer ts.release(s)
			feed(s.served(), "prog:"+tenant, n, 10*len(tenant))
			return fingerprint(s.served())
		}
		a := use("a", 30)
		use("bb", 30)
		a = use("a", 1) // a is now the most recent
		use("ccc", 30)  // evicts bb
		ts.close()      // the eviction's save done
		if s := ts.stats(); s.evicted != 1 || s.held != 2 {
			t.Fatalf("persisted=%v: %+v after a third tenant with room for two, want 1 evicted, 2 held", persisted, s)
		}
		if got := fingerprint(ts.acquire("a").served()); !slices.Equal(got, a) {
			t.Fatalf("persisted=%v: the most recently used tenant was evicted", persisted)
		}
		bb := fingerprint(ts.acquire("bb").served())
		if persisted == slices.Equal(bb, cold) {
			t.Fatalf("persisted=%v: the evicted tenant came back cold=%v", persisted, !persisted)
		}

		// A state in use when evicted is the one its tenant gets back.
		held := ts.acquire("dddd")
		feed(held.served(), "prog:d", 30, 50)
		ts.acquire("eeeee") // evicts a, bb or dddd: dddd is in use
		ts.acquire("ffffff")
		if again := ts.acquire("dddd"); again != held {
			t.Fatalf("persisted=%v: a tenant whose state was evicted while a call held it got another", persisted)
		}
		ts.close()
	}
}

// Calls of many tenants on many handlers acquire, learn and release states
// while the cap evicts and saves them (run under -race).
func TestTenantStatesUnderConcurrentCalls(t *testing.T) {
	dir := t.TempDir()
	ts := newTenantSteps(60, predictor.NewServedStep(60), 3, quietLog())
	if err := ts.persist(dir); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for w := range 6 {
		wg.Go(func() {
			for i := range 40 {
				s := ts.acquire(fmt.Sprintf("t%d", (w+i)%8))
				feed(s.served(), "prog:x", 2, 20+w)
				ts.release(s)
				if i%10 == 0 {
					ts.saveAll()
				}
			}
		})
	}
	wg.Wait()
	ts.close()
	before := ts.stats()
	if before.held > 3 || before.evicted == 0 {
		t.Fatalf("%+v: want at most 3 held, and evictions", before)
	}
	// Every tenant not held comes back from what was saved.
	for i := range 8 {
		ts.release(ts.acquire(fmt.Sprintf("t%d", i)))
	}
	ts.close() // the saves of those it evicted
	if after := ts.stats(); after.restored-before.restored < 8-before.held || after.cold != before.cold {
		t.Fatalf("after the calls %+v, after each tenant once more %+v: want the %d not held restored from disk, none cold", before, after, 8-before.held)
	}
}

// Through serve's predictor (the ONNX model, its state kept without online
// learning): a tenant's calls teach its own state, saved at Close under the
// tenants' directory and restored by the next start; the deployment's own
// state, at the directory's root, learns nothing of them.
func TestTenantStatesThroughKeepMixture(t *testing.T) {
	needORT(t)
	dir := t.TempDir()
	l := onnxLength(t)
	if err := l.KeepMixture(dir, quietLog()); err != nil {
		t.Fatal(err)
	}
	rt := newTestRuntime(t, Config{Tools: shellTools(), Length: l})
	teachModes(t, rt, "a", 8)
	s := l.tenantSteps().acquire("a")
	want := fingerprint(s.served())
	l.tenantSteps().release(s)
	own := fingerprint(predictor.ServedStep{Mix: l.mix, Led: l.led})
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	again := onnxLength(t)
	defer again.Close()
	if err := again.KeepMixture(dir, quietLog()); err != nil {
		t.Fatal(err)
	}
	if slices.Equal(want, own) {
		t.Fatal("tenant a's calls taught it nothing: the test cannot tell its state from the deployment's")
	}
	if got := fingerprint(again.tenantSteps().acquire("a").served()); !slices.Equal(got, want) {
		t.Fatalf("tenant a after a restart predicts %v, before %v", got, want)
	}
	if got := fingerprint(predictor.ServedStep{Mix: again.mix, Led: again.led}); !slices.Equal(got, own) {
		t.Fatalf("the deployment's own state after a restart: %v, before %v", got, own)
	}
	fresh := onnxLength(t)
	defer fresh.Close()
	if !slices.Equal(own, fingerprint(predictor.ServedStep{Mix: fresh.expertMix(), Led: fresh.modeLed()})) {
		t.Fatal("the deployment's own state learnt from tenant a's calls")
	}
}
