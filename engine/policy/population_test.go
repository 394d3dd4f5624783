package policy

import (
	"fmt"
	"testing"
	"time"

	"github.com/pitstop-llm/pitstop/engine"
)

// twoClasses runs, on one engine, class a's 12 DAG programs of one size
// (two threads of 4 tokens at once: tree searches alike) beside class b's
// 24 DAG programs of which half run 100 times longer (a heavy tail), then
// lets every program go idle past the model's idle time. pooled learns
// every class together (PitstopClasses "pooled", as before session 16).
func twoClasses(t *testing.T, pooled bool) (*Pitstop, *harness) {
	t.Helper()
	return twoClassesWith(t, classesOption(pooled))
}

// twoClassesWith is twoClasses under PitstopClasses classes.
func twoClassesWith(t *testing.T, classes string) (*Pitstop, *harness) {
	t.Helper()
	p := NewPitstop(Options{ProgramIdle: 0.5, PitstopClasses: classes})
	h := newHarness(t, p, testConfig())
	program := func(c string, i, decode int) {
		id := fmt.Sprintf("%s%d", c, i)
		for _, th := range []string{"t1", "t2"} {
			h.submitIn(c, id+th, id, th, 8, []seg{{decode: decode}}, nil)
		}
	}
	for i := range 24 {
		at := time.Duration(i) * 300 * time.Millisecond
		h.e.At(at, func() {
			if i < 12 {
				program("a", i, 4)
			}
			decode := 4
			if i%2 == 1 {
				decode = 400
			}
			program("b", i, decode)
		})
	}
	// A late call of each class: its iterations sweep the idle programs
	// into samples; a's is its class's fresh program, ranked at the end.
	h.e.At(20*time.Second, func() {
		program("a", 99, 4)
		program("b", 99, 4)
	})
	h.run(nil)
	return p, h
}

// One class's completed long programs move neither the Gittins question
// nor the order of another class's programs: class a (programs alike)
// keeps arrival order of programs while class b's heavy tail puts b in the
// call's order; pooled, b's tail takes a's programs out of arrival order.
func TestClassesLearnTheirOwnProgramOrder(t *testing.T) {
	p, _ := twoClasses(t, false)
	a, b := p.pops.of("a"), p.pops.of("b")
	if !a.model.ready() || !b.model.ready() {
		t.Fatalf("models not ready: a %d samples, b %d", len(a.model.sorted), len(b.model.sorted))
	}
	if len(a.model.sorted) != 12 || len(b.model.sorted) != 24 {
		t.Errorf("samples a %d, b %d: want 12 and 24 (each class its own programs)", len(a.model.sorted), len(b.model.sorted))
	}
	if got := p.orderOf(a); got != byArrival {
		t.Errorf("class a's order %d, want arrival (%d): b's tail leaked into a's index", got, byArrival)
	}
	if got := p.orderOf(b); got != byCall {
		t.Errorf("class b's order %d, want the call's (%d)", got, byCall)
	}
	pooled, _ := twoClasses(t, true)
	if got := pooled.orderOf(pooled.pops.of("")); got != byCall {
		t.Errorf("pooled order %d, want the call's (%d): the test no longer shows a leak", got, byCall)
	}
}

// A waiting call is ranked under its own class's order: the same call of
// class a gets arrival order's class per class and the call's order's when
// b's programs are pooled with a's.
func TestClassesRankUnderTheirOwnOrder(t *testing.T) {
	for _, pooled := range []bool{false, true} {
		p, h := twoClasses(t, pooled)
		s := h.submitIn("a", "late", "a-late", "t1", 8, []seg{{decode: 4}}, nil)
		v := h.e.View()
		pr := p.Priority(&v, s)
		if byArr := pr.Class > 2; byArr == pooled {
			t.Errorf("pooled %v: priority class %g; want arrival order's (> 2) only per class", pooled, pr.Class)
		}
	}
}

// One class's single-call programs do not lower another's reuse
// probability: class a's chains (three calls each) keep a's context warm
// (watched against a head of one half) while class b's 40 single-call
// programs would, pooled, mark it to go first.
func TestClassesLearnTheirOwnReuse(t *testing.T) {
	for _, pooled := range []bool{false, true} {
		p := NewPitstop(Options{ProgramIdle: 0.5, PitstopClasses: classesOption(pooled)})
		h := newHarness(t, p, testConfig())
		calls := map[string]int{}
		for i := range 40 {
			h.e.At(time.Duration(i)*200*time.Millisecond, func() {
				h.submitIn("b", fmt.Sprintf("b%d", i), fmt.Sprintf("b%d", i), "main", 8, []seg{{decode: 4}}, nil)
				if i < 12 {
					id := fmt.Sprintf("a%d", i)
					calls[id] = 1
					h.submitIn("a", id, id, "main", 8, []seg{{decode: 4}}, nil)
				}
			})
		}
		var last *engine.Sequence
		h.e.At(20*time.Second, func() {
			last = h.submitIn("a", "a-last", "a-last", "main", 8, []seg{{decode: 4}}, nil)
		})
		h.onDone = func(name string) {
			s := h.seqs[name]
			if s.Class() != "a" || name == "a-last" || calls[s.Program()] >= 3 {
				return
			}
			calls[s.Program()]++
			h.submitIn("a", fmt.Sprintf("%s-%d", s.Program(), calls[s.Program()]), s.Program(), "main", 8, []seg{{decode: 4}}, nil)
		}
		h.run(nil)
		v := h.e.View()
		p.retain.head = 0.5
		got := p.Retain(&v, last)
		want := engine.RetainWatch
		if pooled {
			want = engine.RetainLow
		}
		q, _ := p.pops.of("a").model.nextCall(1)
		if got != want {
			t.Errorf("pooled %v: class a's first call finished with hint %v, want %v (q = %.2f)", pooled, got, want, q)
		}
	}
}

// classesOption is Options.PitstopClasses for pooled or per class.
func classesOption(pooled bool) string {
	if pooled {
		return "pooled"
	}
	return "class"
}

func TestPitstopClassesOption(t *testing.T) {
	for _, ok := range []string{"", "class", "pooled", "class-shared", "class-alone"} {
		if err := (Options{PitstopClasses: ok}).Validate(); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	if err := (Options{PitstopClasses: "tenant"}).Validate(); err == nil {
		t.Error("unknown value accepted")
	}
}

// With "class-shared" a class keeps arrival order of programs only while
// no other class has a call in the engine: a's programs alike go in
// arrival order alone, in the call's order once b's call arrives, and in
// arrival order again once it is gone.
func TestClassSharedArrivalOrderOnlyAlone(t *testing.T) {
	p, h := twoClassesWith(t, "class-shared")
	a := p.pops.of("a")
	if got := p.orderOf(a); got != byArrival {
		t.Fatalf("a alone: order %d, want arrival (%d)", got, byArrival)
	}
	h.submitIn("b", "b-late", "b-late", "t1", 8, []seg{{decode: 4}}, nil)
	if got := p.orderOf(a); got != byCall {
		t.Errorf("b's call in the engine: a's order %d, want the call's (%d)", got, byCall)
	}
	h.run(nil)
	if got := p.orderOf(a); got != byArrival {
		t.Errorf("b's call gone: a's order %d, want arrival (%d)", got, byArrival)
	}
	plain, _ := twoClassesWith(t, "class")
	plain.pops.of("b").calls, plain.pops.calls = 1, 1
	if got := plain.orderOf(plain.pops.of("a")); got != byArrival {
		t.Errorf(`"class": a's order %d with b's call in the engine, want arrival (%d)`, got, byArrival)
	}
}

// With "class-alone" a class's chains keep the warm-up queues (least
// attained service until ten of its programs complete) only while no other
// class has a call in the engine: c's chain goes by the queues alone, by
// the call's order once d's call arrives (a warm class's order), and by the
// queues again once it is gone. "class-shared" keeps the queues whoever
// else waits.
func TestClassAloneWarmUpOnlyAlone(t *testing.T) {
	for _, mode := range []string{"class-alone", "class-shared"} {
		p := NewPitstop(Options{ProgramIdle: 0.5, PitstopClasses: mode})
		h := newHarness(t, p, testConfig())
		h.submitIn("c", "c1a", "c1", "main", 8, []seg{{decode: 4}}, nil)
		h.run(nil)
		h.submitIn("c", "c1b", "c1", "main", 8, []seg{{decode: 400}}, nil) // its second call: c's programs are chains
		c := p.pops.of("c")
		if c.model.ready() {
			t.Fatalf("%s: c's model ready: no warm-up to test", mode)
		}
		if got := p.orderOf(c); got != byQueue {
			t.Fatalf("%s: c alone in its warm-up: order %d, want the queues (%d)", mode, got, byQueue)
		}
		h.submitIn("d", "d1", "d1", "main", 8, []seg{{decode: 4}}, nil)
		want := byQueue
		if mode == "class-alone" {
			want = byCall
		}
		if got := p.orderOf(c); got != want {
			t.Errorf("%s: d's call in the engine: c's order %d, want %d", mode, got, want)
		}
		h.run(nil)
		if got := p.orderOf(c); got != byQueue {
			t.Errorf("%s: d's call gone: c's order %d, want the queues (%d)", mode, got, byQueue)
		}
	}
}
