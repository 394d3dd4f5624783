package policy

import (
	"strings"
	"testing"

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

func TestNextCallIsTheShareOfProgramsThatWentOn(t *testing.T) {
	m := newProgramModel(120)
	completed(&m, 5, 1)
	if _, ok := m.nextCall(1); ok {
		t.Fatal("model answered with 5 completed programs, below minN")
	}
	completed(&m, 3, 2)
	completed(&m, 2, 4)
	// 10 programs: 10 made ≥1 call, 5 ≥2, 2 ≥3, 2 ≥4, none ≥5.
	for k, want := range map[int]float64{1: 0.5, 2: 0.4, 3: 1, 4: 0} {
		q, ok := m.nextCall(k)
		if !ok || q != want {
			t.Errorf("nextCall(%d) = %g, %v; want %g, true", k, q, ok, want)
		}
	}
	if _, ok := m.nextCall(5); ok {
		t.Error("nextCall(5) answered for a program longer than every sample")
	}
}

// A finished single-call program's context is hinted low with "program"
// once completed programs say it is more likely over than not, and never
// with the default; a program that usually goes on keeps LRU.
func TestRetainHintsByTheLearnedNextCall(t *testing.T) {
	for _, tc := range []struct {
		mode  string
		calls int // calls of each of the 10 completed programs
		want  engine.Retention
	}{
		{"", 1, engine.RetainLRU},
		{"lru", 1, engine.RetainLRU},
		{"program", 1, engine.RetainLow},
		{"program", 3, engine.RetainLRU},
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
		completed(&p.model, 10, tc.calls)
		if got := p.Retain(&v, a); got != tc.want {
			t.Errorf("%q, programs of %d calls: hint %v, want %v", tc.mode, tc.calls, got, tc.want)
		}
	}
}

func TestEvictRejectsUnknownHint(t *testing.T) {
	err := Options{PitstopEvict: "belady"}.Validate()
	if err == nil || !strings.Contains(err.Error(), "valid: lru, program") {
		t.Fatalf("error %v, want one naming the valid hints", err)
	}
}
