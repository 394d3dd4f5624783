package policy

import (
	"strings"
	"testing"
	"time"

	"github.com/pitstop-llm/pitstop/engine"
)

// An older call A comes back from its tool with 320 tokens to prefill (10
// chunks of the 32-token budget) while a younger call B decodes. In
// "arrival" A's chunks take the whole budget and B is left out of the batch
// until they are done; in "decode-first" B decodes in every iteration and
// A's chunks take the budget left, so B ends at least 8 iterations sooner
// and A at most one iteration later.
func TestDecodeFirstKeepsDecodesInTheBatch(t *testing.T) {
	run := func(mode string) (a, b time.Duration) {
		h := newHarness(t, NewPitstop(Options{PitstopBatch: mode}), testConfig())
		h.submit("A", "pa", "main", 8, []seg{{decode: 2, tool: 0.05, ret: 320}, {decode: 2}}, nil)
		h.submit("B", "pb", "main", 8, []seg{{decode: 60}}, nil)
		h.run(nil)
		return h.done["A"], h.done["B"]
	}
	arrA, arrB := run("arrival")
	dfA, dfB := run("decode-first")
	t.Logf("arrival: A %v B %v; decode-first: A %v B %v", arrA, arrB, dfA, dfB)
	iter := time.Duration(testCost().IterBase * float64(time.Second))
	if dfB > arrB-8*iter {
		t.Errorf("B ended at %v with decode-first, %v with arrival: want at least 8 iterations (%v) sooner", dfB, arrB, 8*iter)
	}
	if dfA > arrA+2*iter {
		t.Errorf("A ended at %v with decode-first, %v with arrival: want at most about one iteration later", dfA, arrA)
	}
}

// A bad value is refused with the valid ones; the default is decode-first.
func TestBatchOrderValues(t *testing.T) {
	if err := (Options{PitstopBatch: "prefill-first"}).Validate(); err == nil || !strings.Contains(err.Error(), "valid: arrival, decode-first") {
		t.Errorf("Validate(prefill-first) = %v, want an error naming the valid values", err)
	}
	for _, m := range []string{"", "arrival", "decode-first"} {
		if err := (Options{PitstopBatch: m}).Validate(); err != nil {
			t.Errorf("Validate(%q) = %v", m, err)
		}
	}
	if got := (Options{}).Defaults().PitstopBatch; got != "decode-first" {
		t.Errorf("the default batch order is %q, want decode-first (session 13)", got)
	}
}

// "decode-first-late" changes the rank of one kind of call only: a call
// on the device still prefilling whose predicted rest ends past the lane's
// due time goes ahead of the decodes (class 0, as in "arrival"); the same
// call with time to spare, and a decoding call, rank as in "decode-first".
func TestDecodeFirstLateRanks(t *testing.T) {
	ranks := func(o Options, dueIn float64) (prefill, decode engine.Priority) {
		p := NewPitstop(o)
		h := newHarness(t, p, testConfig())
		b := h.submit("B", "pb", "main", 8, []seg{{decode: 60}}, nil)
		h.run(untilIteration(3))
		a := h.submit("A", "pa", "main", 320, []seg{{decode: 4}}, nil)
		h.run(untilIteration(5))
		if a.State() != engine.Running || a.Remaining() <= 1 || b.Remaining() != 1 {
			t.Fatalf("set-up: A %v with %d to compute, B %d: want A prefilling on the device, B decoding", a.State(), a.Remaining(), b.Remaining())
		}
		v := h.view(h.e.Now(), 5)
		st := stateOf(a)
		st.deadline, st.hasDeadline = v.Now.Seconds()+restOfService(v, a, st)+dueIn, true
		return p.Priority(v, a), p.Priority(v, b)
	}
	for _, c := range []struct {
		mode         string
		dueIn        float64
		prefillClass float64
	}{
		{"decode-first", -1, 0.5},
		{"decode-first", 10, 0.5},
		{"decode-first-late", -1, 0},
		{"decode-first-late", 10, 0.5},
	} {
		pf, dec := ranks(Options{PitstopBatch: c.mode}, c.dueIn)
		if pf.Class != c.prefillClass {
			t.Errorf("%s, due in %+g s after its rest: the prefilling call's class %v, want %v", c.mode, c.dueIn, pf.Class, c.prefillClass)
		}
		if dec.Class != 0 {
			t.Errorf("%s: the decoding call's class %v, want 0", c.mode, dec.Class)
		}
	}
	// Without the deadline lane there is no due time: decode-first.
	if pf, _ := ranks(Options{PitstopBatch: "decode-first-late", PitstopTail: "aging+warm"}, -1); pf.Class != 0.5 {
		t.Errorf("decode-first-late without the lane (aging+warm): the prefilling call's class %v, want decode-first's 0.5", pf.Class)
	}
}

// A call already late keeps its place ahead of the decodes with
// "decode-first-late": the older call A, back from its tool with 320 tokens
// to prefill and held to a due time already past, takes the whole budget as
// in "arrival" (both calls end when they do there) and the younger call B,
// decoding meanwhile, ends later than with "decode-first"; with a due time
// far off the run is decode-first's.
func TestDecodeFirstLatePutsLatePrefillsAhead(t *testing.T) {
	run := func(mode string, due float64) (a, b time.Duration) {
		h := newHarness(t, NewPitstop(Options{PitstopBatch: mode}), testConfig())
		sa := h.submit("A", "pa", "main", 8, []seg{{decode: 2, tool: 0.05, ret: 320}, {decode: 2}}, nil)
		st := stateOf(sa)
		st.deadline, st.hasDeadline = due, true
		h.submit("B", "pb", "main", 8, []seg{{decode: 60}}, nil)
		h.run(nil)
		return h.done["A"], h.done["B"]
	}
	arrA, arrB := run("arrival", 0)
	dfA, dfB := run("decode-first", 0)
	lateA, lateB := run("decode-first-late", 0)
	t.Logf("due past: arrival A %v B %v; decode-first A %v B %v; decode-first-late A %v B %v", arrA, arrB, dfA, dfB, lateA, lateB)
	if lateA != arrA || lateB != arrB {
		t.Errorf("due past: decode-first-late A %v B %v, want arrival's A %v B %v", lateA, lateB, arrA, arrB)
	}
	if lateB <= dfB {
		t.Errorf("due past: decode-first-late B %v, decode-first B %v: want B later behind A's chunks", lateB, dfB)
	}
	farA, farB := run("decode-first-late", 1e6)
	if farA != dfA || farB != dfB {
		t.Errorf("due far off: decode-first-late A %v B %v, want decode-first's A %v B %v", farA, farB, dfA, dfB)
	}
}
