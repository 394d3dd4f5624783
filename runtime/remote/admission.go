package remote

import (
	"container/heap"
	"context"
	"errors"
	"sync"
	"time"
)

// errBackendGone wakes the calls queued on a backend that failed, drained
// or was removed: they go to another.
var errBackendGone = errors.New("backend gone")

// admission is a backend's queue: at most limit calls in flight; the
// others wait, the lowest rank first (ties: first come). With no limit
// given, the limit follows the backend's measured latency (adapt).
type admission struct {
	mu       sync.Mutex
	limit    int
	fixed    bool
	inflight int
	waiting  waitHeap
	seq      uint64

	// adaptive limit: the best time to first token seen, and a window's
	// average (seconds).
	bestTTFT float64
	winSum   float64
	winN     int
}

// Adaptive limits.
const (
	initialLimit = 8
	maxLimit     = 256
	window       = 16 // calls per adaptation step
	// noiseFloor is the slowdown in seconds below which a window is not
	// taken for queueing inside the backend: on loopback a millisecond
	// doubles by scheduling noise alone.
	noiseFloor = 0.02
)

func newAdmission(limit int) *admission {
	a := &admission{limit: limit, fixed: limit > 0}
	if !a.fixed {
		a.limit = initialLimit
	}
	return a
}

type waiter struct {
	rank  float64
	seq   uint64
	ready chan error // nil: admitted; errBackendGone: go elsewhere
	index int
}

type waitHeap []*waiter

func (h waitHeap) Len() int { return len(h) }
func (h waitHeap) Less(i, j int) bool {
	if h[i].rank != h[j].rank {
		return h[i].rank < h[j].rank
	}
	return h[i].seq < h[j].seq
}
func (h waitHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i]; h[i].index = i; h[j].index = j }
func (h *waitHeap) Push(x any)   { w := x.(*waiter); w.index = len(*h); *h = append(*h, w) }
func (h *waitHeap) Pop() any {
	old := *h
	w := old[len(old)-1]
	*h = old[:len(old)-1]
	w.index = -1
	return w
}
func (h waitHeap) peek() *waiter  { return h[0] }
func (a *admission) queued() int  { a.mu.Lock(); defer a.mu.Unlock(); return len(a.waiting) }
func (a *admission) running() int { a.mu.Lock(); defer a.mu.Unlock(); return a.inflight }

// acquire waits for a slot. It returns errBackendGone when the backend
// went away while the call waited, or ctx's error.
func (a *admission) acquire(ctx context.Context, rank float64) error {
	a.mu.Lock()
	if a.inflight < a.limit && len(a.waiting) == 0 {
		a.inflight++
		a.mu.Unlock()
		return nil
	}
	a.seq++
	w := &waiter{rank: rank, seq: a.seq, ready: make(chan error, 1)}
	heap.Push(&a.waiting, w)
	a.mu.Unlock()
	select {
	case err := <-w.ready:
		return err
	case <-ctx.Done():
		a.mu.Lock()
		if w.index >= 0 {
			heap.Remove(&a.waiting, w.index)
			a.mu.Unlock()
			return ctx.Err()
		}
		a.mu.Unlock()
		// Admitted (or sent away) as the context ended: hand it back.
		if err := <-w.ready; err == nil {
			a.release()
		}
		return ctx.Err()
	}
}

// release frees a slot and admits the best waiting call.
func (a *admission) release() {
	a.mu.Lock()
	a.inflight--
	a.admitLocked()
	a.mu.Unlock()
}

func (a *admission) admitLocked() {
	for a.inflight < a.limit && len(a.waiting) > 0 {
		w := heap.Pop(&a.waiting).(*waiter)
		a.inflight++
		w.ready <- nil
	}
}

// evict sends every waiting call elsewhere.
func (a *admission) evict() {
	a.mu.Lock()
	for len(a.waiting) > 0 {
		heap.Pop(&a.waiting).(*waiter).ready <- errBackendGone
	}
	a.mu.Unlock()
}

// observe adapts the limit to a call's time to first token: a window whose
// mean is within twice the best seen (plus noiseFloor), with calls waiting, raises it by
// one; a slower window cuts it by a quarter (the backend is
// queueing inside, where the router's order cannot reach).
func (a *admission) observe(ttft time.Duration) {
	if a.fixed || ttft <= 0 {
		return
	}
	s := ttft.Seconds()
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.bestTTFT == 0 || s < a.bestTTFT {
		a.bestTTFT = s
	}
	a.winSum += s
	a.winN++
	if a.winN < window {
		return
	}
	mean := a.winSum / float64(a.winN)
	a.winSum, a.winN = 0, 0
	switch {
	case mean > 2*a.bestTTFT+noiseFloor && a.limit > 1:
		a.limit = max(1, a.limit*3/4)
	case len(a.waiting) > 0 && a.inflight >= a.limit && a.limit < maxLimit:
		a.limit++
		a.admitLocked()
	}
}

// currentLimit is the limit now.
func (a *admission) currentLimit() int { a.mu.Lock(); defer a.mu.Unlock(); return a.limit }
