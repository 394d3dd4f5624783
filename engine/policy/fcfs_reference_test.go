package policy

import (
	"cmp"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/pitstop-llm/pitstop/engine"
)

// TestFCFSReferenceLearns: the reference is the service-weighted mean wait
// of the finished calls (exponentially weighted, in finish order), unknown
// until fcfsMinCalls have finished.
func TestFCFSReferenceLearns(t *testing.T) {
	p := NewPitstop(Options{PitstopFCFSTail: true}) // the reference is kept for the tail rule alone
	cfg := testConfig()
	cfg.MaxSeqs = 2 // the calls queue: they wait different times
	h := newHarness(t, p, cfg)
	var seqs []*engine.Sequence
	for i := range 14 {
		seqs = append(seqs, h.submit("c", "p"+string(rune('a'+i)), "main", 8, []seg{{decode: 5 + 7*(i%3)}}, nil))
	}
	h.run(untilIteration(3))
	if _, ok := p.fcfs.wait(); ok {
		t.Fatal("reference known before any call finished")
	}
	h.run(nil)
	slices.SortStableFunc(seqs, func(a, b *engine.Sequence) int { return cmp.Compare(a.FinishedAt(), b.FinishedAt()) })
	var num, den float64
	waited := false
	for _, s := range seqs {
		sv, w := s.Service().Seconds(), s.Waited().Seconds()
		num += fcfsAlpha * (sv*w - num)
		den += fcfsAlpha * (sv - den)
		waited = waited || w > 0
	}
	got, ok := p.fcfs.wait()
	if !ok || !waited || math.Abs(got-num/den) > 1e-9 {
		t.Fatalf("reference %v (known %v), want %v; some call waited: %v", got, ok, num/den, waited)
	}
}

// TestPitstopLateVsFCFS: a waiting call that has waited more than (1+ε)
// times the reference wait plus the p99 own time goes ahead of the ranked
// calls (class 1.5), in arrival order; before that, or with ε < 0,
// memory-over-time decides. The tail is "aging+warm": the default's
// deadline lane would promote by its own deadlines ahead of this rule.
func TestPitstopLateVsFCFS(t *testing.T) {
	p := NewPitstop(Options{PitstopFCFSTail: true, PitstopFCFSSlack: 0.5, PitstopTail: "aging+warm"})
	h := newHarness(t, p, testConfig())
	h.submit("running", "r", "main", 8, []seg{{decode: 300}}, nil)
	h.run(untilIteration(2))
	long := h.submit("long", "n1", "main", 8, []seg{{decode: 80, tool: 1, ret: 4}, {decode: 20}}, nil)
	long2 := h.submit("long2", "n2", "main", 8, []seg{{decode: 90}}, nil)
	short := h.submit("short", "n3", "main", 8, []seg{{decode: 4}}, nil)
	p.fcfs = fcfsReference{num: 3, den: 1, own: p99Window{n: fcfsMinCalls, q99: 1}} // a 3 s reference wait, 1 s p99 own time
	v := h.view(h.e.Now(), 3)
	if got, want := order(p, v, long, long2, short), []string{"short", "long2", "long"}; !slices.Equal(got, want) {
		t.Fatalf("not late: order %v, want %v", got, want)
	}
	v.Now += 5 * time.Second // 5 s < 1.5·3 + 1
	if got, want := order(p, v, long2, long, short), []string{"short", "long2", "long"}; !slices.Equal(got, want) {
		t.Fatalf("within the slack: order %v, want %v", got, want)
	}
	v.Now += 1 * time.Second // 6 s > 5.5 s: every call is late; arrival order
	if got, want := order(p, v, long2, short, long), []string{"long", "long2", "short"}; !slices.Equal(got, want) {
		t.Fatalf("late: order %v, want %v", got, want)
	}
	if pr := p.Priority(v, long2); pr.Class != 1.5 || pr.Key != long2.Arrival().Seconds() {
		t.Fatalf("late call ranked %+v, want class 1.5 keyed by its arrival", pr)
	}
	off := NewPitstop(Options{PitstopFCFSSlack: 0.5})
	off.fcfs = p.fcfs
	if pr := off.Priority(v, long); pr.Class == 1.5 {
		t.Fatal("rule off: the call was promoted")
	}
}

// TestFCFSReferenceP99: the bound adds the 99th percentile of the finished
// calls' own times (e2e less wait) to the stretched reference wait.
func TestFCFSReferenceP99(t *testing.T) {
	var r fcfsReference
	r.num, r.den = 2, 1
	for i := range 200 {
		r.own.times = append(r.own.times, float64(i))
	}
	r.own.n = fcfsEvery - 1
	h := newHarness(t, NewPitstop(Options{}), testConfig())
	s := h.submit("c", "p", "main", 8, []seg{{decode: 3}}, nil)
	h.run(nil)
	r.observe(&engine.Event{Kind: engine.EvFinished, Seq: s})
	own := (s.FinishedAt() - s.Arrival() - s.Waited()).Seconds()
	want := 197.0 // index 201·99/100 = 198 of 0, own (< 1), 1, ..., 199
	if own >= 1 || r.own.q99 != want {
		t.Fatalf("p99 %v (own %v), want %v", r.own.q99, own, want)
	}
	w, _ := r.wait()
	if b, ok := r.bound(0.5); !ok || math.Abs(b-(1.5*w+want)) > 1e-9 {
		t.Fatalf("bound %v %v, want %v", b, ok, 1.5*w+want)
	}
}

// TestExpWaitP99: with no own time the bound is the exponential wait's p99,
// w·ln 100; with a wait far below the own times it is the own times' p99;
// and in between it is above the default bound (wait plus p99 own time),
// since the waits vary.
func TestExpWaitP99(t *testing.T) {
	zero := make([]float64, 1000)
	if got, want := expWaitP99(zero, 10, 0), 10*math.Log(100); math.Abs(got-want) > 1e-6*want {
		t.Fatalf("own times 0, wait 10 s: bound %v, want %v", got, want)
	}
	own := make([]float64, 1000)
	for i := range own {
		own[i] = float64(i) // p99 990
	}
	if got := expWaitP99(own, 1e-6, 990); got < 990 || got > 991 {
		t.Fatalf("wait 1 µs: bound %v, want the own p99 990", got)
	}
	if got := expWaitP99(own, 100, 990); got <= 100+990 {
		t.Fatalf("wait 100 s: bound %v, want above wait plus p99 own (1090)", got)
	}
}
