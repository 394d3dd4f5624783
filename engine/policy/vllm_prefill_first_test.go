package policy

import (
	"fmt"
	"testing"

	"github.com/pitstop-llm/pitstop/engine"
)

// iterRecorder is a policy wrapper's view of each iteration's batch.
type iterRecorder struct {
	*VLLMPrefillFirst
	pre, dec []int
}

func (r *iterRecorder) Observe(e *engine.Event) {
	if e.Kind == engine.EvIteration {
		r.pre = append(r.pre, e.Iter.PrefillTokens)
		r.dec = append(r.dec, e.Iter.DecodeTokens)
	}
}

// TestVLLMPrefillFirst: iterations are all prefill while prompts can be
// admitted, whole prompts only (one that does not fit in the rest of the
// budget waits; one longer than the whole budget is chunked), and all
// decode otherwise; every call finishes and the blocks balance (the harness
// checks them after every iteration).
func TestVLLMPrefillFirst(t *testing.T) {
	r := &iterRecorder{VLLMPrefillFirst: &VLLMPrefillFirst{}}
	h := newHarness(t, r, testConfig()) // budget 32 tokens
	h.submit("d", "d", "main", 8, []seg{{decode: 40}}, nil)
	h.run(untilIteration(3))
	if r.pre[0] != 8 || r.dec[1] != 1 {
		t.Fatalf("first iterations: prefill %v, decode %v", r.pre, r.dec)
	}
	for i, n := range []int{12, 12, 12, 40} {
		h.submit(fmt.Sprintf("p%d", i), fmt.Sprintf("p%d", i), "main", n, []seg{{decode: 5}}, nil)
	}
	from := len(r.pre)
	h.run(nil)
	if len(h.done) != 5 {
		t.Fatalf("%d of 5 finished", len(h.done))
	}
	pre, dec := r.pre[from:], r.dec[from:]
	// 12 + 12 fit in 32 and the third 12 waits (not chunked); then 12 alone
	// (the 40-token prompt does not fit in the 20 left); then the 40-token
	// prompt, first of its iteration and longer than the budget, in chunks
	// of 32 and 8; then decodes.
	want := []int{24, 12, 32, 8}
	for i, w := range want {
		if pre[i] != w || dec[i] != 0 {
			t.Fatalf("iteration %d: %d prefill and %d decode tokens, want %d prefill only (all: %v / %v)", i, pre[i], dec[i], w, pre, dec)
		}
	}
	for i := range pre {
		if pre[i] > 0 && dec[i] > 0 {
			t.Fatalf("iteration %d mixes %d prefill and %d decode tokens", i, pre[i], dec[i])
		}
	}
	if dec[len(want)] == 0 {
		t.Fatal("no decode iteration after the prefills")
	}
}
