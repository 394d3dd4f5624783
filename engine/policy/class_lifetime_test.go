package policy

import (
	"fmt"
	"math"
	"runtime"
	"testing"
	"time"

	"github.com/pitstop-llm/pitstop/engine"
)

// fullPopulation is a population whose model is full (programSamples
// heavy-tailed samples, rebuilt) with gaps at four paces, as a tenant's
// after a long run.
func fullPopulation(ps *populations, class string) *population {
	pop := ps.of(class)
	for i := range programSamples {
		pop.model.add(1 / math.Pow(float64(i+1)/(programSamples+1), 1/1.2))
	}
	pop.model.programs, pop.model.calls = programSamples, 10*programSamples
	pop.model.rebuild()
	for pace := range 4 {
		g := &gapSamples{}
		for i := range 1000 {
			g.add(float64(i%97) / 10)
		}
		pop.pace[pace] = g
	}
	return pop
}

// TestPopulationSize measures a full population's heap (run with -v for
// the figure docs/results-policies.md quotes); it fails if a population
// is no longer about the size the lifetime rule was written for.
func TestPopulationSize(t *testing.T) {
	const n = 200
	ps := newPopulations(120, false, false, byCall)
	var m0, m1 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m0)
	for i := range n {
		fullPopulation(&ps, fmt.Sprint("c", i))
	}
	runtime.GC()
	runtime.ReadMemStats(&m1)
	per := float64(m1.HeapAlloc-m0.HeapAlloc) / n
	t.Logf("a full population: %.0f bytes (%d populations, %d samples each)", per, len(ps.list), programSamples)
	if per < 10e3 || per > 10e6 {
		t.Errorf("a full population holds %.0f bytes: outside 10 kB-10 MB", per)
	}
}

// idleThenBack runs class a's 12 DAG programs, then only class b's calls
// (one every second, so the engine iterates and sweeps) for 30 s, then a
// late program of a; ProgramIdle 0.5 s, PitstopClassIdle classIdle. It
// returns the policy, a's population before the late call and whether it
// was still kept at 29 s.
func idleThenBack(t *testing.T, classIdle float64) (p *Pitstop, before *population, keptAt29 bool) {
	p = NewPitstop(Options{ProgramIdle: 0.5, PitstopClasses: "class-shared", PitstopClassIdle: classIdle})
	h := newHarness(t, p, testConfig())
	for i := range 12 {
		h.e.At(time.Duration(i)*300*time.Millisecond, func() {
			id := fmt.Sprint("a", i)
			for _, th := range []string{"t1", "t2"} {
				h.submitIn("a", id+th, id, th, 8, []seg{{decode: 4 + 4*(i%3)}}, nil)
			}
		})
	}
	for i := range 30 {
		h.e.At(time.Duration(i)*time.Second, func() {
			id := fmt.Sprint("b", i)
			h.submitIn("b", id, id, "main", 8, []seg{{decode: 4}}, nil)
			if i == 29 {
				before = p.pops.byClass["a"]
				keptAt29 = before != nil
			}
		})
	}
	h.e.At(30*time.Second, func() {
		h.submitIn("a", "a99", "a99", "main", 8, []seg{{decode: 4}}, nil)
	})
	h.run(nil)
	return p, before, keptAt29
}

// A class idle past PitstopClassIdle, its programs all completed, is
// dropped, keeping its pooled counts; its later call starts from the cold
// prior. Without the option the class keeps what it learned.
func TestIdleClassDropped(t *testing.T) {
	kept, before, ok := idleThenBack(t, 0)
	if !ok || !before.model.ready() {
		t.Fatalf("class a not kept ready without the option (kept %v)", ok)
	}
	if a := kept.pops.byClass["a"]; a != before || len(a.model.samples) < 12 {
		t.Errorf("without the option class a's population changed")
	}
	p, _, ok := idleThenBack(t, 5)
	if ok {
		t.Errorf("class a still kept about 25 s after its last call with PitstopClassIdle 5 s")
	}
	a := p.pops.byClass["a"]
	if a == nil {
		t.Fatal("class a's late call has no population")
	}
	if len(a.model.samples) > 1 || a.model.ready() {
		t.Errorf("class a's late population has %d samples: not the cold prior", len(a.model.samples))
	}
	if sh := p.a.table.shapeOf("a"); sh.programs != 1 {
		t.Errorf("class a's shape after the drop counts %d programs, want its late one", sh.programs)
	}
	gotP, gotC := p.pops.pooledCalls()
	wantP, wantC := kept.pops.pooledCalls()
	if gotP != wantP || gotC != wantC {
		t.Errorf("pooled programs and calls %g, %g after the drop; %g, %g kept: headReuse would move", gotP, gotC, wantP, wantC)
	}
}

// 10,000 classes seen in turn (one every 50 ms, each one program of two
// calls) keep a bounded number of populations and table shapes with
// PitstopClassIdle 1 s; without it every class stays (shown on 1,000).
func TestClassesBoundedOverTime(t *testing.T) {
	run := func(classes int, classIdle float64) (most, end, shapes int) {
		p := NewPitstop(Options{ProgramIdle: 0.5, PitstopClasses: "class-shared", PitstopClassIdle: classIdle})
		h := newHarness(t, p, testConfig())
		for i := range classes {
			h.e.At(time.Duration(i)*50*time.Millisecond, func() {
				c := fmt.Sprint("c", i)
				for _, th := range []string{"t1", "t2"} {
					h.submitIn(c, c+th, c, th, 8, []seg{{decode: 4}}, nil)
				}
			})
		}
		h.run(func(e *engine.Event) bool {
			most = max(most, len(p.pops.list))
			checkOrderCounts(t, &p.pops)
			return false
		})
		return most, len(p.pops.list), len(p.a.table.shapes)
	}
	most, end, shapes := run(10000, 1)
	// A class lives ProgramIdle + 1 s past its last call, plus up to a
	// sweep interval (ProgramIdle/8): about 30 classes at one per 50 ms.
	if most > 60 || end > 60 || shapes > 60 {
		t.Errorf("with PitstopClassIdle 1 s: at most %d populations, %d at the end, %d shapes; want ≤ 60", most, end, shapes)
	}
	if _, end, shapes := run(1000, 0); end != 1000 || shapes != 1000 {
		t.Errorf("without the option %d populations and %d shapes, want 1000: the test no longer shows growth", end, shapes)
	}
}

// checkOrderCounts fails the test when the order cache's counts of moved
// and drifting classes differ from a recount over the classes kept: a drop
// that leaves a dropped class counted would keep Refresh re-ranking (moved)
// or never let it rest (drifting).
func checkOrderCounts(t *testing.T, ps *populations) {
	t.Helper()
	var moved, drifting int
	for _, pop := range ps.list {
		if o := pop.orders; o.known {
			if o.order != pop.lastOrder {
				moved++
			}
			if drifts(o.order) {
				drifting++
			}
		}
	}
	if moved != ps.stale.moved || drifting != ps.stale.drifting {
		t.Fatalf("order cache counts moved %d, drifting %d; a recount over the %d classes kept gives %d, %d",
			ps.stale.moved, ps.stale.drifting, len(ps.list), moved, drifting)
	}
}

// A class dropped while its derived order still differs from its last
// re-rank's, and drifts, leaves neither count behind: Refresh would
// otherwise re-rank at every iteration for a class that no longer exists.
func TestDropForgetsTheClassInTheOrderCounts(t *testing.T) {
	p := NewPitstop(Options{PitstopClasses: "class-shared", PitstopClassIdle: 1})
	ps := &p.pops
	kept, gone := ps.of("kept"), ps.of("gone")
	kept.lastCall, gone.lastCall = 9*time.Second, 0
	kept.calls = 1 // in the engine: never dropped
	for _, pop := range []*population{kept, gone} {
		pop.orders = classOrder{order: byQueue, known: true}
		pop.lastOrder = byArrival
	}
	ps.stale.moved, ps.stale.drifting = 2, 2
	ps.dropIdle(&p.a.table, 10*time.Second)
	if ps.byClass["gone"] != nil || ps.byClass["kept"] == nil {
		t.Fatalf("after the drop: gone kept %v, kept kept %v", ps.byClass["gone"] != nil, ps.byClass["kept"] != nil)
	}
	checkOrderCounts(t, ps)
}
