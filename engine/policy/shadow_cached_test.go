package policy

import (
	"testing"

	"github.com/pitstop-llm/pitstop/engine"
)

// TestShadowCachedPrefill: a call whose 40-token prompt a finished call left
// in the prefix cache (36 tokens, nine whole blocks of 4) asks the cached
// shadow to prefill the 4 tokens past the cache and the plain shadow all
// 40; a fresh call asks 40 of both. And "-cached" is the default's rules
// with the shadow's switch on, nothing else.
func TestShadowCachedPrefill(t *testing.T) {
	p := NewPitstop(Options{})
	h := newHarness(t, p, testConfig())
	b, c := submitCachedAndFresh(t, h)
	v := h.e.View()
	if got := v.CachedPrefix(b); got != 36 {
		t.Fatalf("cached prefix %d, want 36: the test's premise", got)
	}
	for _, x := range []struct {
		cached bool
		s      *engine.Sequence
		want   int
	}{{false, b, 40}, {true, b, 4}, {false, c, 40}, {true, c, 40}} {
		f := fcfsShadow{cached: x.cached}
		if got := f.workOf(&v, x.s, stateOf(x.s)).prefill; got != x.want {
			t.Errorf("cached %v, call %s: prefill %d, want %d", x.cached, x.s.Name(), got, x.want)
		}
	}
	def, err := newTailRules(Options{PitstopTail: "aging+warm+first-final-gated-fit", PitstopAgingPower: 2})
	if err != nil {
		t.Fatal(err)
	}
	for _, tail := range []string{"aging+warm+first-final-gated-fit-cached", "aging+warm+first-final-gated-fit-queue-cached"} {
		r, err := newTailRules(Options{PitstopTail: tail, PitstopAgingPower: 2})
		if err != nil {
			t.Fatal(err)
		}
		if !r.cached || r.queue != (tail != "aging+warm+first-final-gated-fit-cached") {
			t.Fatalf("%s: cached %v queue %v", tail, r.cached, r.queue)
		}
		r.cached, r.queue = false, false
		if r != def {
			t.Fatalf("%s changes other rules: %+v against %+v", tail, r, def)
		}
		if !NewPitstop(Options{PitstopTail: tail}).deadlines.shadow.cached {
			t.Fatalf("%s: the shadow's cached switch is off", tail)
		}
	}
	if NewPitstop(Options{}).deadlines.shadow.cached {
		t.Fatal("the default's shadow counts the cache")
	}
}
