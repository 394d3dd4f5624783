package policy

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/pitstop-llm/pitstop/engine"
)

// shadowedFCFS is arrival order with the shadow beside it: the shadow's
// predicted finish of each call, to compare with the real one.
type shadowedFCFS struct {
	FCFS
	shadow fcfsShadow
	finish map[string]float64
}

func (p *shadowedFCFS) Priority(v *engine.View, s *engine.Sequence) engine.Priority {
	st := stateOf(s)
	if !st.hasDeadline {
		dev, tool := restParts(v, s, st)
		p.finish[s.Name()] = p.shadow.enter(s.Arrival().Seconds(), dev) + dev + tool
		p.shadow.record(p.finish[s.Name()] - s.Arrival().Seconds())
		st.hasDeadline = true
	}
	return p.FCFS.Priority(v, s)
}

func (p *shadowedFCFS) Observe(e *engine.Event) { p.shadow.observe(e) }

// TestFCFSShadowMatchesFCFS: on a stream that queues (Poisson arrivals at
// about 0.95 of the engine's capacity: 8 slots of 10 ms iterations, calls of
// 10-150 decode tokens), the shadow's predicted arrival-order finish of each
// call matches a real fcfs run of the same engine: mean absolute error under
// 2% of the mean end-to-end time and every call within 0.5 s (the calls wait
// up to seconds), the p99 of its end-to-end times within 5% of fcfs's; and
// it learns the engine's 8 slots.
func TestFCFSShadowMatchesFCFS(t *testing.T) {
	p := &shadowedFCFS{finish: map[string]float64{}}
	h := newHarness(t, p, testConfig())
	r := rand.New(rand.NewPCG(3, 4))
	const n = 400
	// Capacity: 8 slots / (80 iterations × 10 ms) = 10 calls/s; rate 9.5/s.
	at := time.Duration(0)
	for i := range n {
		at += time.Duration(r.ExpFloat64() / 9.5 * float64(time.Second))
		dec := 10 + r.IntN(141)
		name := fmt.Sprintf("c%d", i)
		h.e.At(at, func() { h.submit(name, name, "main", 8, []seg{{decode: dec}}, nil) })
	}
	h.run(nil)
	var errSum, e2eSum, worst, waited float64
	var e2es []float64
	for name, s := range h.seqs {
		real := s.FinishedAt().Seconds()
		e2es = append(e2es, real-s.Arrival().Seconds())
		d := math.Abs(p.finish[name] - real)
		errSum += d
		e2eSum += real - s.Arrival().Seconds()
		worst = max(worst, d)
		waited = max(waited, s.Waited().Seconds())
	}
	if len(h.seqs) != n {
		t.Fatalf("%d calls ran, want %d", len(h.seqs), n)
	}
	if waited < 1 {
		t.Fatalf("longest wait %.2f s: the stream must queue for the test to mean anything", waited)
	}
	mae, mean := errSum/n, e2eSum/n
	t.Logf("mean e2e %.3f s, mean abs error %.4f s, worst %.4f s, longest wait %.2f s, servers %d", mean, mae, worst, waited, p.shadow.servers())
	if mae > 0.02*mean || worst > 0.5 {
		t.Fatalf("shadow vs fcfs: mean abs error %.4f s (mean e2e %.3f s), worst %.4f s", mae, mean, worst)
	}
	slices.Sort(e2es)
	if real, shadow := e2es[len(e2es)*99/100], p.shadow.p99; math.Abs(shadow-real) > 0.05*real {
		t.Fatalf("shadow p99 %.3f s (last %d calls), fcfs p99 %.3f s (all): not within 5%%", shadow, fcfsWindow, real)
	}
	if p.shadow.servers() != 8 {
		t.Fatalf("shadow learned %d servers, want the engine's 8", p.shadow.servers())
	}
}

// TestFCFSShadowQueue: the shadow is first-come-first-served on c servers:
// before a full batch is seen nobody waits; with 2 servers the third call
// takes the one that frees first.
func TestFCFSShadowQueue(t *testing.T) {
	var f fcfsShadow
	if s := f.enter(0, 5); s != 0 {
		t.Fatalf("no full batch yet: start %v, want the arrival 0", s)
	}
	if s := f.enter(1, 5); s != 1 {
		t.Fatalf("no full batch yet: start %v, want the arrival 1", s)
	}
	f.observe(&engine.Event{Kind: engine.EvIteration, Iter: &engine.IterationStats{Seqs: 2, Waiting: 3}})
	for _, c := range []struct{ a, dev, want float64 }{{2, 1, 5}, {2, 1, 6}, {3, 2, 6}, {20, 1, 20}} {
		if s := f.enter(c.a, c.dev); s != c.want {
			t.Fatalf("call at %v for %v s: start %v, want %v", c.a, c.dev, s, c.want)
		}
	}
}
