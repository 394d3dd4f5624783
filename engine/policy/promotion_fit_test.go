package policy

import (
	"testing"

	"github.com/pitstop-llm/pitstop/engine"
)

// TestPromotionFit: with "aging+feasible-fit" an urgent call is promoted
// only while its peak blocks (context and predicted output) fit in the free
// blocks beside the calls promoted earlier in the same full re-rank;
// otherwise it stays in the aging rank. "aging+feasible-p99", the same lane
// without the test, promotes it in the same state.
func TestPromotionFit(t *testing.T) {
	p := NewPitstop(Options{PitstopTail: "aging+feasible-fit"})
	if p.deadlines.fit == nil || p.deadlines.edf == nil || !p.deadlines.edf.toP99 || !p.tail.aging {
		t.Fatal("aging+feasible-fit: want the aging, the EDF test against the realized p99 and the fit test")
	}
	if NewPitstop(Options{PitstopTail: "aging+feasible-p99"}).deadlines.fit != nil {
		t.Fatal("aging+feasible-p99: the fit test is on")
	}
	h, long := longWaiter(t, p)
	long2 := h.submit("long2", "n3", "main", 8, []seg{{decode: 200}}, nil)
	v := h.view(h.e.Now(), 300)
	now := v.Now.Seconds()
	urgent := func(s *engine.Sequence) {
		st := stateOf(s)
		st.deadline, st.hasDeadline = now+restOfService(v, s, st)+0.5, true
	}
	urgent(long)
	urgent(long2)
	p.deadlines.interval = 1 // a laxity under 1 s is promoted
	peak := peakBlocks(v, long, stateOf(long))
	if want := (long.NumTokens() + 200 + v.BlockSize - 1) / v.BlockSize; peak != want {
		t.Fatalf("peak blocks %d, want %d (context %d and 200 predicted tokens)", peak, want, long.NumTokens())
	}

	v.FreeBlocks = peak - 1
	if pr := p.Priority(v, long); pr.Class != 2 {
		t.Fatalf("one block short: ranked %+v, want the aging rank (class 2)", pr)
	}
	q := NewPitstop(Options{PitstopTail: "aging+feasible-p99"})
	q.deadlines.interval = 1
	if _, ok := q.deadlines.urgent(v, long, stateOf(long)); !ok {
		t.Fatal("aging+feasible-p99 one block short: not promoted (the test state is not urgent)")
	}

	v.FreeBlocks = peak
	if pr := p.Priority(v, long); pr.Class != 1.5 {
		t.Fatalf("fits exactly: ranked %+v, want promoted (class 1.5)", pr)
	}

	// Within one full re-rank the promoted calls' peaks add up: room for
	// one and a half, so the second waits in the rank.
	p.deadlines.rerank(v)
	p.deadlines.interval = 1 // the re-rank measured its own interval
	v.FreeBlocks = peak + peak/2
	if _, ok := p.deadlines.urgent(v, long, stateOf(long)); !ok {
		t.Fatal("re-rank, first call fits: not promoted")
	}
	if _, ok := p.deadlines.urgent(v, long2, stateOf(long2)); ok {
		t.Fatal("re-rank, second call beyond the free blocks left: promoted")
	}
	v.Iteration++
	p.deadlines.rerank(v) // a new re-rank counts afresh
	p.deadlines.interval, p.deadlines.ahead = 1, 0
	if _, ok := p.deadlines.urgent(v, long2, stateOf(long2)); !ok {
		t.Fatal("next re-rank: the second call fits alone but was not promoted")
	}
}
