package engine

import (
	"container/heap"
	"time"
)

// Clock is the engine's time. The real clock reads the wall; the virtual
// clock only moves when the engine advances it by an iteration's simulated
// duration or jumps to the next timer when idle (discrete-event simulation).
// The same loop, scheduler and policies run on both.
type Clock interface {
	Now() time.Duration
	// Virtual reports whether time is simulated.
	Virtual() bool
}

// RealClock measures time since its creation.
type RealClock struct{ start time.Time }

func NewRealClock() *RealClock                      { return &RealClock{start: time.Now()} }
func (c *RealClock) Now() time.Duration             { return time.Since(c.start) }
func (c *RealClock) Virtual() bool                  { return false }
func (c *RealClock) Wall(d time.Duration) time.Time { return c.start.Add(d) }

// VirtualClock is advanced by the engine.
type VirtualClock struct{ now time.Duration }

func NewVirtualClock() *VirtualClock            { return &VirtualClock{} }
func (c *VirtualClock) Now() time.Duration      { return c.now }
func (c *VirtualClock) Virtual() bool           { return true }
func (c *VirtualClock) advance(d time.Duration) { c.now += d }
func (c *VirtualClock) jump(t time.Duration) {
	if t > c.now {
		c.now = t
	}
}

// timer is a callback due at a clock instant; seq breaks ties in FIFO order.
type timer struct {
	at  time.Duration
	seq uint64
	fn  func()
}

type timerHeap []timer

func (h timerHeap) Len() int { return len(h) }
func (h timerHeap) Less(i, j int) bool {
	if h[i].at != h[j].at {
		return h[i].at < h[j].at
	}
	return h[i].seq < h[j].seq
}
func (h timerHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *timerHeap) Push(x any)   { *h = append(*h, x.(timer)) }
func (h *timerHeap) Pop() any {
	old := *h
	t := old[len(old)-1]
	old[len(old)-1] = timer{}
	*h = old[:len(old)-1]
	return t
}

// timers is the engine's timer queue.
type timers struct {
	h   timerHeap
	seq uint64
}

func (t *timers) add(at time.Duration, fn func()) {
	t.seq++
	heap.Push(&t.h, timer{at: at, seq: t.seq, fn: fn})
}

// next returns the earliest instant, if any.
func (t *timers) next() (time.Duration, bool) {
	if len(t.h) == 0 {
		return 0, false
	}
	return t.h[0].at, true
}

// popDue removes and returns the callbacks due at or before now, in order.
func (t *timers) popDue(now time.Duration, out []func()) []func() {
	for len(t.h) > 0 && t.h[0].at <= now {
		out = append(out, heap.Pop(&t.h).(timer).fn)
	}
	return out
}
