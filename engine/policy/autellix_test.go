package policy

import (
	"slices"
	"testing"
	"time"

	"github.com/pitstop-llm/pitstop/engine"
)

func TestQueueSetRanges(t *testing.T) {
	q := newQueueSet(4, 0.1)
	cases := []struct {
		service time.Duration
		want    int
	}{
		{0, 0},
		{99 * time.Millisecond, 0},
		{100 * time.Millisecond, 1},
		{299 * time.Millisecond, 1},
		{300 * time.Millisecond, 2},
		{700 * time.Millisecond, 3},
		{time.Hour, 3},
	}
	for _, c := range cases {
		if got := q.index(c.service); got != c.want {
			t.Errorf("service %v: queue %d, want %d", c.service, got, c.want)
		}
	}
	if q.quanta[0] != 100*time.Millisecond || q.quanta[2] != 400*time.Millisecond {
		t.Errorf("quanta %v", q.quanta)
	}
}

// TestProgramService: PLAS sums the service of a program's completed calls,
// ATLAS keeps the longest critical path over its threads; a program's next
// call enters the queue of that service, behind a new program's call.
func TestProgramService(t *testing.T) {
	cases := []struct {
		policy  string
		minSvc  time.Duration // program service after two parallel threads of 20 decodes
		maxSvc  time.Duration
		nextQ   int
		ordered []string
	}{
		// Two threads of 20+ iterations each (10 ms) run side by side.
		{policy: "plas", minSvc: 400 * time.Millisecond, maxSvc: 500 * time.Millisecond, nextQ: 2, ordered: []string{"new", "next"}},
		{policy: "atlas", minSvc: 200 * time.Millisecond, maxSvc: 250 * time.Millisecond, nextQ: 1, ordered: []string{"new", "next"}},
		{policy: "mlfq", minSvc: 0, maxSvc: 0, nextQ: 0, ordered: []string{"next", "new"}},
	}
	for _, tc := range cases {
		t.Run(tc.policy, func(t *testing.T) {
			p, err := New(tc.policy, Options{Quantum: 0.1, Beta: -1})
			if err != nil {
				t.Fatal(err)
			}
			a := &p.(*Autellix).a
			h := newHarness(t, p, testConfig())
			h.submit("t1", "old", "t1", 8, []seg{{decode: 20}}, nil)
			h.submit("t2", "old", "t2", 8, []seg{{decode: 20}}, nil)
			h.run(nil)
			var svc time.Duration
			if r := a.table.rows["old"]; r != nil {
				svc = r.service
			}
			if svc < tc.minSvc || svc > tc.maxSvc {
				t.Fatalf("program service %v, want within [%v, %v]", svc, tc.minSvc, tc.maxSvc)
			}
			next := h.submit("next", "old", "t1", 8, []seg{{decode: 5}}, nil)
			fresh := h.submit("new", "young", "main", 8, []seg{{decode: 5}}, nil)
			if q := stateOf(next).queue; q != tc.nextQ {
				t.Fatalf("next call of the old program in queue %d, want %d", q, tc.nextQ)
			}
			if got := order(p, h.view(h.e.Now(), 100), next, fresh); !slices.Equal(got, tc.ordered) {
				t.Fatalf("order %v, want %v", got, tc.ordered)
			}
		})
	}
}

// TestDemotionAndPromotion: a call is demoted each time it uses up its
// quantum; a waiting call whose program waited β times its service goes back
// to the first queue.
func TestDemotionAndPromotion(t *testing.T) {
	p := NewMLFQ(Options{Quantum: 0.1, Queues: 4, Beta: 8})
	h := newHarness(t, p, testConfig())
	long := h.submit("long", "a", "main", 8, []seg{{decode: 100}}, nil)
	h.run(untilIteration(15)) // 0.15 s of service: past Q0's 0.1 s quantum
	if q := stateOf(long).queue; q != 1 {
		t.Fatalf("after 0.15 s of service in queue %d, want 1", q)
	}
	h.run(untilIteration(30)) // 0.35 s: past Q1's 0.2 s quantum as well
	if q := stateOf(long).queue; q != 2 {
		t.Fatalf("after 0.35 s of service in queue %d, want 2", q)
	}
	// Seen waiting 10 s later (wait 10 s ≥ 8 × 0.35 s), it is promoted.
	v := h.view(h.e.Now()+10*time.Second, 400)
	if long.State() != engine.Running {
		t.Fatalf("long is %v", long.State())
	}
	// A running call accrues no wait; take a waiting one instead.
	w := h.submit("w", "b", "main", 8, []seg{{decode: 5}}, nil)
	st := stateOf(w)
	st.queue, st.svcBase = 3, 0
	st.row.service = time.Second
	if q := p.a.queueOf(v, w, st); q != 0 {
		t.Fatalf("waited 10 s on 1 s of service with β 8: queue %d, want 0", q)
	}
	st.queue = 3
	st.waitBase = v.Wait(w)
	if q := p.a.queueOf(v, w, st); q != 3 {
		t.Fatalf("after a promotion the call's own wait restarts: queue %d, want 3", q)
	}
}

// TestQueuesOrderAcrossStates: a call in a higher queue outranks a running
// call of a lower queue (Autellix preempts), FCFS by entry inside a queue.
func TestQueuesOrderAcrossStates(t *testing.T) {
	p := NewPLAS(Options{Quantum: 0.05, Beta: -1})
	h := newHarness(t, p, testConfig())
	h.submit("old", "a", "main", 8, []seg{{decode: 200}}, nil)
	h.run(untilIteration(20)) // old used 0.2 s: queue 2
	n1 := h.submit("n1", "b", "main", 8, []seg{{decode: 50}}, nil)
	n2 := h.submit("n2", "c", "main", 8, []seg{{decode: 5}}, nil)
	v := h.view(h.e.Now(), 21)
	if got, want := order(p, v, h.seqs["old"], n2, n1), []string{"n1", "n2", "old"}; !slices.Equal(got, want) {
		t.Fatalf("order %v, want %v", got, want)
	}
	if !p.Traits().Preemptive || !p.Traits().PrefixCache {
		t.Fatal("Autellix policies preempt and use the prefix cache")
	}
}
