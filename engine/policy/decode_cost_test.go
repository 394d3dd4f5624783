package policy

import (
	"math"
	"testing"
	"time"

	"github.com/pitstop-llm/pitstop/engine"
)

// Before any iteration the decodes cost what the cost model says; after an
// iteration of 10 decodes and 100 prompt tokens that took 0.013 + 100
// PerToken + 10 × 0.5 ms, an iteration of 20 decodes costs 0.013 + 20 ×
// 0.5 ms; an iteration without decodes teaches nothing.
func TestDecodeCostMeasured(t *testing.T) {
	m := testCost()
	m.IterBase, m.PerToken = 0.013, 0.000084
	var d decodeCost
	if got, want := d.fixed(m, 20), m.IterTime(20); got != want {
		t.Fatalf("nothing measured: fixed %v, want the model's %v", got, want)
	}
	dur := 0.013 + 100*0.000084 + 10*0.0005
	d.observe(&engine.IterationStats{Duration: time.Duration(dur * 1e9), PrefillTokens: 100, DecodeTokens: 10})
	if got, want := d.fixed(m, 20), 0.013+20*0.0005; math.Abs(got-want) > 1e-6 {
		t.Fatalf("measured 0.5 ms a decode: fixed(20) %v, want %v", got, want)
	}
	d.observe(&engine.IterationStats{Duration: time.Second, PrefillTokens: 2000})
	if got, want := d.fixed(m, 20), 0.013+20*0.0005; math.Abs(got-want) > 1e-6 {
		t.Fatalf("a prefill-only iteration changed fixed(20) to %v, want %v", got, want)
	}
}
