package engine

import (
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
// runtime and its router keep tables of their own on the same heap
// (internal/dueheap), on wall-clock time under their locks; this one runs on
// the engine's clock and goroutine.

// ExpireBatch is how many due rows one Expire looks at, at most: the
// longest it holds up the engine's loop.
const ExpireBatch = 256

// DueBefore and SetDueIndex place a row in the table's heap
// (dueheap.Item).
func (p *ProgramStats) DueBefore(o *ProgramStats) bool { return p.due < o.due }
func (p *ProgramStats) SetDueIndex(i int)              { p.idx = i }

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
		t.due.Push(p)
	case due < p.due:
		p.due = due
		t.due.Fix(p.idx)
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
	touched, more = t.due.Expire(ExpireBatch, func(p *ProgramStats) bool { return p.due < now }, func(p *ProgramStats) bool {
		if p.ttl <= 0 {
			return false // its latest call asked to keep it: out of the heap, not the table
		}
		next := p.LastFinish + p.ttl
		if p.Active > 0 {
			next = now + p.ttl // in use: it ends after now, and stays a TTL after that
		} else if next < now {
			delete(t.rows, p.ID)
			dropped++
			return false
		}
		p.due = next
		return true
	})
	return dropped, touched, more
}
