package policy

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/pitstop-llm/pitstop/engine"
)

// completed books n completed programs of c calls each in the model.
func completed(m *programModel, n, c int) {
	for range n {
		m.programs++
		m.calls += float64(c)
		m.countCalls(c)
	}
}

func TestNextCallCountsLiveProgramsAsCensored(t *testing.T) {
	m := newProgramModel(120)
	completed(&m, 5, 1)
	if _, ok := m.nextCall(1); ok {
		t.Fatal("model answered with 5 completed programs, below minN")
	}
	completed(&m, 15, 1)
	completed(&m, 20, 3)
	// 40 completed: 40 made ≥1 call, 20 ≥2, 20 ≥3, none ≥4; uniform prior.
	for k, want := range map[int]float64{1: 21.0 / 42, 2: 21.0 / 22, 3: 1.0 / 22} {
		if q, ok := m.nextCall(k); !ok || q != want {
			t.Errorf("nextCall(%d) = %g, %v; want %g, true", k, q, ok, want)
		}
	}
	if _, ok := m.nextCall(4); ok {
		t.Error("nextCall(4) answered with no program known at 4 calls")
	}
	// 10 live programs at their 2nd call: past 1 (they went on), censored at 2.
	for range 10 {
		m.arrived(1)
		m.arrived(2)
	}
	for k, want := range map[int]float64{1: 31.0 / 52, 2: 21.0 / 22} {
		if q, ok := m.nextCall(k); !ok || q != want {
			t.Errorf("with live programs, nextCall(%d) = %g, %v; want %g, true", k, q, ok, want)
		}
	}
	// They complete with 2 calls: no longer live, now ended at 2.
	completed(&m, 10, 2)
	if q, _ := m.nextCall(2); q != 21.0/32 {
		t.Errorf("after they completed, nextCall(2) = %g, want %g", q, 21.0/32)
	}
}

// With "lru" nothing is hinted; with "program" (the default) a finished program's
// context is watched while it is likelier to come back than the LRU head,
// and goes cold at the finish when it is not.
func TestRetainHintsByTheLearnedNextCall(t *testing.T) {
	for _, tc := range []struct {
		mode string
		head float64 // the LRU head's probability of reuse
		want engine.Retention
	}{
		{"lru", 0.9, engine.RetainLRU},
		{"", 0.9, engine.RetainLow},
		{"program", 0, engine.RetainWatch},
		{"program", 0.01, engine.RetainWatch},
		{"program", 0.9, engine.RetainLow},
	} {
		o := Options{PitstopEvict: tc.mode}
		if err := o.Validate(); err != nil {
			t.Fatal(err)
		}
		p := NewPitstop(o)
		h := newHarness(t, p, testConfig())
		a := h.submit("a", "pa", "main", 40, []seg{{decode: 4}}, nil)
		h.run(nil)
		v := h.e.View()
		if got := p.Retain(&v, a); got != engine.RetainLRU {
			t.Errorf("%q: hint %v before any program completed, want lru", tc.mode, got)
		}
		if tc.mode == "" && !p.retain.byProgram {
			t.Errorf("the default is not program")
		}
		completed(&p.pops.of("").model, 40, 1) // single-call programs: q = 1/42 at k = 1
		p.retain.head = tc.head
		if got := p.Retain(&v, a); got != tc.want {
			t.Errorf("%q, head %g: hint %v, want %v", tc.mode, tc.head, got, tc.want)
		}
	}
}

// A watched program idle for longer than the model's idle time counts as
// completed and is named cold even while the head's probability is
// unknown; one idle for less is not.
func TestColdNamesProgramsIdlePastTheModelsIdle(t *testing.T) {
	p := NewPitstop(Options{PitstopEvict: "program"})
	now := 200 * time.Second
	p.retain.watch["old"] = watched{since: now - 121*time.Second, q: 0.9}
	p.retain.watch["young"] = watched{since: now - 10*time.Second, q: 0.9}
	v := engine.View{Now: now}
	if got := p.Cold(&v); len(got) != 1 || got[0] != "old" {
		t.Fatalf("cold %v, want [old]", got)
	}
	if _, ok := p.retain.watch["young"]; !ok {
		t.Error("the young program is no longer watched")
	}
	v.Now += 500 * time.Millisecond
	p.retain.watch["old2"] = watched{since: 0, q: 0.9}
	if got := p.Cold(&v); got != nil {
		t.Errorf("asked again within a second: cold %v, want none", got)
	}
}

func TestComesBackFallsWithTheGapSurvival(t *testing.T) {
	p := NewPitstop(Options{PitstopEvict: "program"})
	g := &gapSamples{}
	for i := 1; i <= 10; i++ {
		g.add(float64(i)) // gaps of 1..10 s, first gaps (no pace yet)
	}
	p.pops.of("").pace[noPace] = g
	w := watched{since: 0, pop: p.pops.of(""), q: 0.5}
	for _, tc := range []struct {
		t    time.Duration
		want float64
	}{
		{0, 0.5},                           // S = 1: q
		{5500 * time.Millisecond, 1.0 / 3}, // S = 0.5: 0.25 / 0.75
		{11 * time.Second, 0},              // S = 0
	} {
		if got := p.comesBack(w, tc.t); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("at %v: %g, want %g", tc.t, got, tc.want)
		}
	}
	if got := p.comesBack(watched{scale: 3, pop: p.pops.of(""), q: 0.5}, time.Second); got != 1 {
		t.Errorf("pace without samples: %g, want 1", got)
	}
}

func TestEvictRejectsUnknownHint(t *testing.T) {
	err := Options{PitstopEvict: "belady"}.Validate()
	if err == nil || !strings.Contains(err.Error(), "valid: lru, program") {
		t.Fatalf("error %v, want one naming the valid hints", err)
	}
}
