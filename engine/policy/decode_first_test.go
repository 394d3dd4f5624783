package policy

import (
	"strings"
	"testing"
	"time"
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
