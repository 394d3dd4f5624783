package engine

import (
	"container/heap"
	"time"
)

// A program's row stays its TTL after its last call ends. Scanning the
// whole table for the rows past it ran on the engine's goroutine, which
// every running call's iteration waits for: 14–19 ms at 100,000 rows, every
// few seconds. Rows with a TTL wait instead in a heap by the earliest time
// they can go (ProgramStats.due): a call only moves its row's LastFinish,
// and Expire pops the rows due, filing again at their new due time those
// used since (or in use), ExpireBatch at most per call. A row costs one heap
// push when it is made and one pop or re-filing per TTL it lives. The
// runtime and its router keep heaps of their own (on wall-clock time, under
// their locks); this one runs on the engine's clock and goroutine.

// ExpireBatch is how many due rows one Expire looks at, at most: the
// longest it holds up the engine's loop.
const ExpireBatch = 256

// dueHeap is rows, the earliest due first; each row knows its index
// (ProgramStats.idx).
type dueHeap []*ProgramStats

func (h dueHeap) Len() int           { return len(h) }
func (h dueHeap) Less(i, j int) bool { return h[i].due < h[j].due }
func (h dueHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].idx, h[j].idx = i, j
}
func (h *dueHeap) Push(x any) {
	p := x.(*ProgramStats)
	p.idx = len(*h)
	*h = append(*h, p)
}
func (h *dueHeap) Pop() any {
	old := *h
	p := old[len(old)-1]
	old[len(old)-1] = nil
	p.idx = -1
	*h = old[:len(old)-1]
	return p
}

// file puts a row with a TTL in the heap, due a TTL after now at the
// earliest (its call ends after now); a row already there moves only when
// a shorter TTL makes it due sooner.
func (t *ProgramTable) file(p *ProgramStats, now time.Duration) {
	if p.ttl <= 0 {
		return // stays for good; Expire takes it out of the heap if there
	}
	due := now + p.ttl
	switch {
	case p.idx < 0:
		p.due = due
		heap.Push(&t.due, p)
	case due < p.due:
		p.due = due
		heap.Fix(&t.due, p.idx)
	}
}

// Expire drops the rows with no active call whose last call ended more
// than their TTL before now, looking at ExpireBatch due rows at most, and
// returns how many it dropped; more reports that due rows may be left (call
// it again, after the engine's other work).
func (t *ProgramTable) Expire(now time.Duration) (dropped int, more bool) {
	dropped, _, more = t.expireStep(now)
	return dropped, more
}

// expireStep is Expire, also saying how many rows it looked at (touched).
func (t *ProgramTable) expireStep(now time.Duration) (dropped, touched int, more bool) {
	for len(t.due) > 0 && t.due[0].due < now {
		if touched == ExpireBatch {
			return dropped, touched, true
		}
		touched++
		p := t.due[0]
		switch deadline := p.LastFinish + p.ttl; {
		case p.ttl <= 0:
			heap.Pop(&t.due) // its latest call asked to keep it
		case p.Active > 0:
			// In use: it ends after now, and stays a TTL after that.
			p.due = now + p.ttl
			heap.Fix(&t.due, 0)
		case deadline >= now:
			p.due = deadline
			heap.Fix(&t.due, 0)
		default:
			heap.Pop(&t.due)
			delete(t.rows, p.ID)
			dropped++
		}
	}
	return dropped, touched, false
}
