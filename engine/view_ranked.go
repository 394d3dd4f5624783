package engine

import "iter"

// Ranked yields the runnable calls in the order of the iteration's batch
// walk (the policy's last ranking): the calls on the device and those
// waiting to join it, as fillBatch meets them. Asked from Shape it sees the
// ranking the batch is about to be filled in. O(queue); nothing in a View
// made by hand.
func (v *View) Ranked() iter.Seq[*Sequence] {
	return func(yield func(*Sequence) bool) {
		if v.eng == nil {
			return
		}
		q := &v.eng.queue
		for i := range q.entries {
			ent := &q.entries[i]
			if !q.valid(ent) || !ent.s.Runnable() {
				continue
			}
			if !yield(ent.s) {
				return
			}
		}
	}
}
