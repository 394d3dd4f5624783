package engine

import (
	"cmp"
	"slices"
)

// Priority ranks a runnable call: lower Class first, then lower Key, then
// earlier submission. Two levels let a policy say "calls on the device
// first, then by time" or "queue, then score" without packing floats.
type Priority struct {
	Class float64
	Key   float64
}

// rankEntry is a call's place in the run queue. Entries are kept sorted in
// one contiguous slice so ordering never touches the calls themselves; an
// entry whose version no longer matches its call's is stale and skipped.
type rankEntry struct {
	p   Priority
	id  SeqID
	ver uint32
	s   *Sequence
}

func compareEntries(a, b *rankEntry) int {
	if c := cmp.Compare(a.p.Class, b.p.Class); c != 0 {
		return c
	}
	if c := cmp.Compare(a.p.Key, b.p.Key); c != 0 {
		return c
	}
	return cmp.Compare(a.id, b.id)
}

// RanksBefore reports whether s is ahead of o in the policy's order as
// last ranked: lower Priority, then earlier submission.
func (s *Sequence) RanksBefore(o *Sequence) bool {
	a, b := rankEntry{p: s.prio, id: s.id}, rankEntry{p: o.prio, id: o.id}
	return compareEntries(&a, &b) < 0
}

// runQueue holds the runnable calls in policy order. A call is re-ranked
// only when something about it changed (it arrived, ran, was preempted or
// resumed) or when the policy asks for a full refresh, so one iteration costs
// O(changed · log + merge) rather than touching every waiting call: with
// 10,000 waiting calls the engine stays far below a GPU iteration.
type runQueue struct {
	entries []rankEntry // sorted; may hold stale entries
	fresh   []rankEntry // pushed since the last settle, unsorted
	spare   []rankEntry
	live    int // calls in the queue
	stale   int // stale entries in entries and fresh
}

func (q *runQueue) valid(e *rankEntry) bool { return e.s.queued && e.s.ver == e.ver }

// push (re-)ranks a call; an older entry of it becomes stale.
func (q *runQueue) push(s *Sequence, p Priority) {
	if s.queued {
		if s.prio == p {
			return
		}
		q.stale++
	} else {
		q.live++
		s.queued = true
	}
	s.ver++
	s.prio = p
	q.fresh = append(q.fresh, rankEntry{p: p, id: s.id, ver: s.ver, s: s})
}

// remove takes a call out of the queue.
func (q *runQueue) remove(s *Sequence) {
	if !s.queued {
		return
	}
	s.queued = false
	s.ver++
	q.live--
	q.stale++
}

// settle merges the fresh entries into the sorted ones and drops stale
// entries once they outnumber live ones.
func (q *runQueue) settle() {
	if q.stale > q.live+64 {
		q.compact()
	}
	if len(q.fresh) == 0 {
		return
	}
	slices.SortFunc(q.fresh, func(a, b rankEntry) int { return compareEntries(&a, &b) })
	n := len(q.entries)
	if n == 0 || compareEntries(&q.entries[n-1], &q.fresh[0]) <= 0 {
		q.entries = append(q.entries, q.fresh...) // the common case for arrivals
	} else {
		// Merge from the first place a fresh entry goes; the prefix before it stays put.
		first, _ := slices.BinarySearchFunc(q.entries, q.fresh[0], func(e, t rankEntry) int { return compareEntries(&e, &t) })
		q.spare = append(q.spare[:0], q.entries[first:]...)
		q.entries = q.entries[:first]
		i, j := 0, 0
		for i < len(q.spare) && j < len(q.fresh) {
			if compareEntries(&q.spare[i], &q.fresh[j]) <= 0 {
				q.entries = append(q.entries, q.spare[i])
				i++
			} else {
				q.entries = append(q.entries, q.fresh[j])
				j++
			}
		}
		q.entries = append(q.entries, q.spare[i:]...)
		q.entries = append(q.entries, q.fresh[j:]...)
	}
	clear(q.fresh)
	q.fresh = q.fresh[:0]
}

// compact drops stale entries.
func (q *runQueue) compact() {
	q.entries = q.valids(q.entries)
	q.fresh = q.valids(q.fresh)
	q.stale = 0
}

// valids keeps es's valid entries, in order, in place; the tail it frees
// holds no sequence.
func (q *runQueue) valids(es []rankEntry) []rankEntry {
	keep := es[:0]
	for i := range es {
		if q.valid(&es[i]) {
			keep = append(keep, es[i])
		}
	}
	clear(es[len(keep):])
	return keep
}

// rerank asks for every live call's priority again (policies whose
// priorities drift with time call for it through Policy.Refresh).
func (q *runQueue) rerank(prio func(*Sequence) Priority) {
	q.compact()
	q.entries = append(q.entries, q.fresh...)
	clear(q.fresh)
	q.fresh = q.fresh[:0]
	for i := range q.entries {
		e := &q.entries[i]
		e.p = prio(e.s)
		e.s.prio = e.p
	}
	slices.SortFunc(q.entries, func(a, b rankEntry) int { return compareEntries(&a, &b) })
}
