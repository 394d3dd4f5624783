// Forgetting idle programs in O(expired) work per hold of the router's
// lock.

package remote

import (
	"time"
)

// A program's rank and home stay ProgramTTL after its last generation.
// The router held 2.4–4 ms scans of all of them under its lock, which
// every call's pick and rank take, at 100,000 programs. Programs wait
// instead in a heap by the earliest time they can go (programUse.due): a
// generation only moves the program's last use, and the expiry pops the
// programs due, filing again at their new due time those used since,
// expireBatch at a time per hold of the lock.

// expireBatch is how many due programs one hold of the router's lock looks
// at, at most.
const expireBatch = 256

// keptUses is how many forgotten programs' records the router keeps for
// reuse: a call without a program id is a program of its own, made and
// forgotten per call.
const keptUses = 1024

// programUse is when a program was last used, and its place in the heap.
type programUse struct {
	program string
	last    time.Time // its last generation's end
	due     time.Time // the earliest it can go
	idx     int       // its index in Router.due
}

// DueBefore and SetDueIndex place a program in the router's heap
// (dueheap.Item).
func (u *programUse) DueBefore(o *programUse) bool { return u.due.Before(o.due) }
func (u *programUse) SetDueIndex(i int)            { u.idx = i }

// usedLocked records a program's generation ending at now (r.mu held).
func (r *Router) usedLocked(program string, now time.Time) {
	u := r.used[program]
	if u == nil {
		if n := len(r.free); n > 0 {
			u, r.free = r.free[n-1], r.free[:n-1]
		} else {
			u = &programUse{}
		}
		u.program = program
		u.due = now.Add(r.cfg.ProgramTTL)
		r.used[program] = u
		r.due.Push(u)
	}
	u.last = now
}

// dropUseLocked takes a program out of the heap and the map (r.mu held).
func (r *Router) dropUseLocked(program string) {
	u := r.used[program]
	if u == nil {
		return
	}
	r.due.Remove(u.idx)
	delete(r.used, program)
	if len(r.free) < keptUses {
		*u = programUse{}
		r.free = append(r.free, u)
	}
}

// expireLoop forgets idle programs until Close. It looks only at the
// programs due, so it ticks often, apart from the health checks (which
// wait up to HealthTimeout): a program is forgotten within a sixteenth of
// ProgramTTL, at most a second, after its TTL.
func (r *Router) expireLoop() {
	defer close(r.expired)
	t := time.NewTicker(min(max(r.cfg.ProgramTTL/16, 10*time.Millisecond), time.Second))
	defer t.Stop()
	for {
		select {
		case <-r.stop:
			return
		case now := <-t.C:
			r.expirePrograms(now)
		}
	}
}

// expirePrograms forgets the programs idle for longer than ProgramTTL at
// now, a batch per hold of the router's lock, and returns how many.
func (r *Router) expirePrograms(now time.Time) int {
	n := 0
	for {
		forgot, _, more := r.expireStep(now)
		n += forgot
		if !more {
			return n
		}
	}
}

// expireStep is one hold of the router's lock: it looks at expireBatch
// due programs at most (touched), forgets the idle ones and files the
// others again at their new due time. more reports that due programs may
// be left.
func (r *Router) expireStep(now time.Time) (forgot, touched int, more bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	touched, more = r.due.Expire(expireBatch, func(u *programUse) bool { return u.due.Before(now) }, func(u *programUse) bool {
		if deadline := u.last.Add(r.cfg.ProgramTTL); !deadline.Before(now) {
			u.due = deadline
			return true
		}
		r.forgetLocked(u.program) // takes u out of the heap itself
		forgot++
		return false
	})
	return forgot, touched, more
}
