package policy

import (
	"testing"
	"time"

	"github.com/pitstop-llm/pitstop/engine"
)

// TestShapeShownCountsProgramsThatMadeASecondCall: ten programs arrive; four
// make a second call while their first is in the engine (tree searches that
// have started), six wait with their first call alone (fresh programs past
// capacity). The table
// counts ten programs, four threaded, and four that showed their shape.
func TestShapeShownCountsProgramsThatMadeASecondCall(t *testing.T) {
	p := NewPitstop(Options{ProgramOrder: "gittins-started-shown"})
	h := newHarness(t, p, testConfig())
	calls := 0
	for prog := range 10 {
		name := string(rune('a' + prog))
		h.submit(name+"0", name, "", 8, []seg{{decode: 4}}, nil)
		calls++
		if prog < 4 {
			h.submit(name+"1", name, "b0", 8, []seg{{decode: 4}}, nil) // beside its first: two at once
			calls++
		}
	}
	arrived := 0
	h.run(func(ev *engine.Event) bool {
		if ev.Kind == engine.EvArrived {
			arrived++
		}
		return arrived == calls
	})
	sh := p.a.table.shapeOf("")
	if sh.programs != 10 || sh.threaded != 4 || sh.shown != 4 {
		t.Fatalf("programs %d, threaded %d, shown %d; want 10, 4, 4", sh.programs, sh.threaded, sh.shown)
	}
}

// TestShapeShownOrder: four of ten programs have shown their shape (a
// second call). Over every program seen ("gittins-started-all", the default before session 18) four DAGs of ten are
// not a majority: they are ordered as chains (the warm-up's queues before
// any program completed, the call's order after); over the four that
// showed it ("gittins-started-shown") they are DAGs, in arrival order of
// programs. Chains (none threaded) stay chains either way.
func TestShapeShownOrder(t *testing.T) {
	for _, c := range []struct {
		order    string
		threaded int
		want     programOrder
	}{
		{"gittins-started-all", 4, byQueue},
		{"gittins-started-shown", 4, byArrival},
		{"gittins-started-all", 0, byQueue},
		{"gittins-started-shown", 0, byQueue},
		{"gittins-started-shown", 1, byQueue}, // one of four: still chains
		{"gittins-started-shown", 2, byArrival},
	} {
		p := NewPitstop(Options{ProgramOrder: c.order})
		sh := p.a.table.shape("")
		sh.anyMulti, sh.programs, sh.shown, sh.threaded = true, 10, 4, c.threaded
		if got := p.orderOf(p.pops.of("")); got != c.want {
			t.Errorf("order %q, %d of 4 shown programs threaded: order %d, want %d", c.order, c.threaded, got, c.want)
		}
	}
}

// TestShapeHeldCountsProgramsWithoutAToken: a program is held from its
// first call's arrival until a call of it generates a token. One sequence
// at a time: while a's first call decodes, b's waits, held.
func TestShapeHeldCountsProgramsWithoutAToken(t *testing.T) {
	p := NewPitstop(Options{ProgramOrder: "gittins-started-held"})
	cfg := testConfig()
	cfg.MaxSeqs = 1
	h := newHarness(t, p, cfg)
	h.submit("a0", "a", "", 8, []seg{{decode: 4}}, nil)
	h.submit("b0", "b", "", 8, []seg{{decode: 4}}, nil)
	h.run(func(ev *engine.Event) bool { return ev.Kind == engine.EvToken })
	if sh := p.a.table.shapeOf(""); sh.programs != 2 || sh.held != 1 {
		t.Fatalf("after the first token: %d programs, %d held; want 2, 1", sh.programs, sh.held)
	}
	h.run(nil)
	if sh := p.a.table.shapeOf(""); sh.held != 0 {
		t.Fatalf("at the end: %d held, want 0", sh.held)
	}
}

// TestShapeHeldOrder: ten programs, four threaded, six with no token yet
// (held back): the held test counts four programs, all DAGs, so arrival
// order of programs; with two of the six begun (six counted, four DAGs)
// still DAGs; with all six begun (ten counted) chains, as the default.
func TestShapeHeldOrder(t *testing.T) {
	for _, c := range []struct {
		held int
		want programOrder
	}{{6, byArrival}, {4, byArrival}, {0, byQueue}} {
		p := NewPitstop(Options{ProgramOrder: "gittins-started-held"})
		sh := p.a.table.shape("")
		sh.anyMulti, sh.programs, sh.shown, sh.threaded, sh.held = true, 10, 4, 4, c.held
		if got := p.orderOf(p.pops.of("")); got != c.want {
			t.Errorf("%d of 10 held: order %d, want %d", c.held, got, c.want)
		}
	}
}

// TestShapeHeldKeepsProgramsDroppedBeforeAToken: a program whose only call
// left the engine without a token (a cancelled request) and whose row the
// TTL sweep drops stays held, so the held test does not count it as a
// chain; a program that began is dropped without touching the count.
func TestShapeHeldKeepsProgramsDroppedBeforeAToken(t *testing.T) {
	tb := newProcessTable(callService, 1)
	tb.rows["never"] = &progRow{calls: 1}
	tb.rows["began"] = &progRow{calls: 1, begun: true}
	sh := tb.shape("")
	sh.programs, sh.held = 2, 1
	tb.sweep(10 * time.Second)
	if len(tb.rows) != 0 {
		t.Fatalf("%d rows left after the sweep, want 0", len(tb.rows))
	}
	if got := tb.shapeOf(""); got.programs != 2 || got.held != 1 {
		t.Fatalf("after the sweep: %d programs, %d held; want 2, 1", got.programs, got.held)
	}
}
