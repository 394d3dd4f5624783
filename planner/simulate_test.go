package planner

import (
	"testing"
	"time"
)

func pipelineApp(t *testing.T) *App {
	t.Helper()
	spec, dir, err := ReadApp("testdata/pipeline.json")
	if err != nil {
		t.Fatal(err)
	}
	a, err := BuildApp(spec, dir, 1)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func all(m *Model) []pending {
	var p []pending
	for i := range m.reqs {
		p = append(p, pending{req: i})
	}
	return p
}

func near(t *testing.T, what string, got, want time.Duration) {
	t.Helper()
	if d := got - want; d < -time.Microsecond || d > time.Microsecond {
		t.Fatalf("%s = %v, want %v", what, got, want)
	}
}

// With every iteration at 10 ms, a request of 5 output tokens takes 5
// iterations (one prefill that samples the first token, four decodes), and
// requests that fit one batch run together.
func TestRunCountsTheEnginesIterations(t *testing.T) {
	a := pipelineApp(t)
	s := NewSimulator(a)
	up := a.Models[0]
	r, err := s.run(up, Plan{DP: 1, TP: 1}, true, all(up))
	if err != nil {
		t.Fatal(err)
	}
	near(t, "end with load", r.end, time.Second+50*time.Millisecond)
	r, err = s.run(up, Plan{DP: 2, TP: 1}, false, all(up))
	if err != nil {
		t.Fatal(err)
	}
	near(t, "end on two replicas without load", r.end, 50*time.Millisecond)
	// A request ready later starts later.
	items := all(up)
	items[3].ready = 200 * time.Millisecond
	r, err = s.run(up, Plan{DP: 1, TP: 1}, false, items)
	if err != nil {
		t.Fatal(err)
	}
	near(t, "late request's finish", r.finishOf(3), 250*time.Millisecond)
	if s.Runs != 3 {
		t.Fatalf("%d simulations, want 3", s.Runs)
	}
	if _, err := s.run(up, Plan{DP: 2, TP: 1}, false, all(up)); err != nil || s.Runs != 3 {
		t.Fatalf("asking again simulated again (runs %d, err %v): want the memo", s.Runs, err)
	}
}

// A stage holding a model and its input pipelines them: the downstream
// requests start when the upstream ones finish, after its own load.
func TestStagePipelinesDependentModels(t *testing.T) {
	a := pipelineApp(t)
	s := NewSimulator(a)
	w := newWorld(a)
	if w.eligible(a, 1, nil) {
		t.Fatal("down is eligible before up finished or joined the stage")
	}
	e, err := w.evaluate(a, s, []Pair{{1, Plan{1, 1}}, {0, Plan{1, 1}}})
	if err != nil {
		t.Fatal(err)
	}
	// up: 1 s load + 50 ms. down: its 2 s load ends after up finished; 3 iterations.
	near(t, "up's end", e.runs[0].end(), 1050*time.Millisecond)
	near(t, "down's end", e.runs[1].end(), 2030*time.Millisecond)
	near(t, "stage end", e.end, 1050*time.Millisecond)
	nw, st := w.commit(a, e)
	if len(st.Finished) != 1 || st.Finished[0] != 0 || !nw.finished(0) || nw.finished(1) {
		t.Fatalf("after the stage: finished %v; want up done, down not", st.Finished)
	}
	// down goes on with the same plan: no reload, its run continues.
	e2, err := nw.evaluate(a, s, []Pair{{1, Plan{1, 1}}})
	if err != nil {
		t.Fatal(err)
	}
	if e2.loads[0] || e2.runs[0] != e.runs[1] {
		t.Fatal("down reloaded or restarted although its plan did not change")
	}
	near(t, "down's end", e2.end, 2030*time.Millisecond)
	// A different plan reloads it from what it had done: nothing.
	e3, err := nw.evaluate(a, s, []Pair{{1, Plan{2, 1}}})
	if err != nil {
		t.Fatal(err)
	}
	near(t, "down re-planned", e3.end, 1050*time.Millisecond+2*time.Second+30*time.Millisecond)
}

// Sizing the KV pool down to where memory cannot bind changes nothing:
// the same finishes to the nanosecond as with the profile's whole pool.
func TestUnboundPoolReplaysTheSame(t *testing.T) {
	spec, dir := tinySpec(t)
	spec.Models[0].Requests = 600
	a, err := BuildApp(spec, dir, 5)
	if err != nil {
		t.Fatal(err)
	}
	m := a.Models[0]
	cfg := m.byTP[1].profile.EngineConfig()
	if b := unboundBlocks(cfg, m.longest); b >= cfg.NumBlocks {
		t.Fatalf("the test needs a profile whose pool is larger than %d blocks, has %d", b, cfg.NumBlocks)
	}
	small, full := NewSimulator(a), NewSimulator(a)
	full.fullKV = true
	for _, p := range []Plan{{1, 1}, {2, 1}} {
		r1, err := small.run(m, p, true, all(m))
		if err != nil {
			t.Fatal(err)
		}
		r2, err := full.run(m, p, true, all(m))
		if err != nil {
			t.Fatal(err)
		}
		for k := range r1.done {
			if r1.done[k][0] != r2.done[k][0] {
				t.Fatalf("%s: request %d finishes at %v with the sized pool, %v with the whole one", p, k, r1.done[k][0], r2.done[k][0])
			}
		}
	}
}

// Replay runs a model's requests on the executor given, on a clock that
// advances by the durations it reports: five iterations of 2 ms here.
func TestReplayUsesTheExecutorsDurations(t *testing.T) {
	a := pipelineApp(t)
	up := a.Models[0]
	cfg := up.byTP[1].profile.EngineConfig()
	end, err := NewSimulator(a).Replay(up, cfg, sleepExecutor{2 * time.Millisecond}, 10)
	if err != nil {
		t.Fatal(err)
	}
	near(t, "replay end", end, 10*time.Millisecond)
}

// A derived TP degree's run, scaled from the base profile's, matches its
// own replay to within a nanosecond per iteration (each iteration's time is
// rounded to the nanosecond either way).
func TestScaledRunMatchesItsReplay(t *testing.T) {
	spec, dir := tinySpec(t)
	spec.Models[0].TP = []int{1, 2, 4}
	spec.Models[0].Requests = 500
	a, err := BuildApp(spec, dir, 9)
	if err != nil {
		t.Fatal(err)
	}
	m := a.Models[0]
	scaled, direct := NewSimulator(a), NewSimulator(a)
	direct.direct = true
	for _, p := range []Plan{{1, 2}, {2, 2}, {1, 4}} {
		r1, err := scaled.run(m, p, true, all(m))
		if err != nil {
			t.Fatal(err)
		}
		r2, err := direct.run(m, p, true, all(m))
		if err != nil {
			t.Fatal(err)
		}
		for k := range r1.done {
			if d := r1.done[k][0] - r2.done[k][0]; d < -5*time.Microsecond || d > 5*time.Microsecond {
				t.Fatalf("%s: request %d finishes at %v scaled, %v replayed", p, k, r1.done[k][0], r2.done[k][0])
			}
		}
	}
	if scaled.Runs >= direct.Runs {
		t.Fatalf("scaled runs made %d replays, direct %d: nothing was shared", scaled.Runs, direct.Runs)
	}
}
