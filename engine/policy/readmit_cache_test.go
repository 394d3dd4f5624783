package policy

import (
	"strings"
	"testing"
	"time"

	"github.com/pitstop-llm/pitstop/engine"
)

// A waiting call whose prompt a finished call left in the prefix cache
// ranks ahead of an equal call that finds nothing cached while the rule is
// on, and alike with it off.
func TestReadmitRanksCachedPrefixAhead(t *testing.T) {
	for _, mode := range []string{"off", "held", "cached"} {
		o := Options{PitstopReadmit: mode}
		if err := o.Validate(); err != nil {
			t.Fatal(err)
		}
		p := NewPitstop(o)
		h := newHarness(t, p, testConfig())
		b, c := submitCachedAndFresh(t, h)
		v := h.e.View()
		kb, kc := p.Priority(&v, b).Key, p.Priority(&v, c).Key
		switch {
		case mode == "off" && kb != kc:
			t.Errorf("rule off: keys %g (cached prompt) and %g (fresh) should be equal", kb, kc)
		case mode != "off" && !(kb < kc):
			t.Errorf("rule %s: key %g of the call with 36 cached tokens should be below %g of the fresh one", mode, kb, kc)
		}
	}
}

// rateOf converges to a steady counter's rate and reads it once an iteration.
func TestRateOfLearnsSteadyRate(t *testing.T) {
	var r rateOf
	n := int64(0)
	for i := range int64(2000) {
		v := engine.View{Iteration: i, Now: time.Duration(i) * 10 * time.Millisecond}
		r.sample(&v, n)
		r.sample(&v, n+1000) // same iteration: ignored
		n += 5               // 500 per second
	}
	if r.perSecond < 490 || r.perSecond > 510 {
		t.Fatalf("rate = %g per second, want about 500", r.perSecond)
	}
}

func TestReadmitRejectsUnknownRule(t *testing.T) {
	err := Options{PitstopReadmit: "always"}.Validate()
	if err == nil || !strings.Contains(err.Error(), "valid: cached, sunk, held, off") {
		t.Fatalf("error %v, want one naming the valid rules", err)
	}
}
