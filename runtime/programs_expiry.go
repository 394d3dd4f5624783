package runtime

import (
	"time"
)

// A program's row stays ProgramTTL after its last call or invoke ends
// (AnonymousProgramTTL for a call without a program id). Rows come and go
// at the call rate (30,000–37,500 anonymous ones at 1,000 calls/s), and a
// scan of the whole table held its lock, which every call takes three to
// four times, for 7–15 ms at 40,000 rows. Rows wait instead in a heap by
// the earliest time they can go (program.due): a call that touches a row
// leaves it where it is, and the expiry pops only the rows due, filing
// again at their new due time those seen since (or in use), expireBatch at
// a time per hold of the lock. A row costs one heap push when it is made
// and one pop or re-filing per TTL it lives.

// expireBatch is how many due rows one hold of the table's lock looks at,
// at most.
const expireBatch = 256

// DueBefore and SetDueIndex place a row in the table's heap
// (dueheap.Item).
func (p *program) DueBefore(o *program) bool { return p.due.Before(o.due) }
func (p *program) SetDueIndex(i int)         { p.idx = i }

// ttlOf is how long the row stays once idle.
func (t *programTable) ttlOf(p *program) time.Duration {
	if p.info.Anonymous {
		return t.anonTTL
	}
	return t.ttl
}

// file puts a new row in the heap, due a TTL after now (t.mu held); a row
// already there stays where it is.
func (t *programTable) file(p *program, now time.Time) {
	if p.idx >= 0 {
		return
	}
	p.due = now.Add(t.ttlOf(p))
	t.due.Push(p)
}

// expire drops the rows idle (no active call, no invoke) for longer than
// their TTL at now, a batch per hold of the lock, and returns how many.
func (t *programTable) expire(now time.Time) int {
	n := 0
	for {
		dropped, _, more := t.expireStep(now)
		n += dropped
		if !more {
			return n
		}
	}
}

// expireStep is one hold of the lock: it looks at expireBatch due rows at
// most (touched), drops the idle ones and files the others again at their
// new due time. more reports that due rows may be left.
func (t *programTable) expireStep(now time.Time) (dropped, touched int, more bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	touched, more = t.due.Expire(expireBatch, func(p *program) bool { return p.due.Before(now) }, func(p *program) bool {
		ttl := t.ttlOf(p)
		next := p.info.LastSeen.Add(ttl)
		if p.info.Active > 0 || p.invokeRun > 0 {
			next = now.Add(ttl) // in use: it ends after now, and stays a TTL after that
		} else if next.Before(now) {
			delete(t.rows, p.key)
			dropped++
			return false
		}
		p.due = next
		return true
	})
	return dropped, touched, more
}
