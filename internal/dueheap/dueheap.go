// Package dueheap is the min-heap the program tables expire from (engine,
// runtime, runtime/remote): each element knows its index, so a row that is
// used again is fixed, or one that ends is removed, in O(log n). It wraps
// container/heap once, so the tables do not each carry its five-method
// adapter.
package dueheap

import "container/heap"

// Item is what a Heap holds: a pointer to a row that orders itself against
// another (DueBefore) and is told its index (SetDueIndex; -1 once out).
type Item[T any] interface {
	DueBefore(T) bool
	SetDueIndex(int)
}

// Heap is a min-heap of T by DueBefore; the zero value is empty and ready.
type Heap[T Item[T]] struct{ items []T }

// Len is the number of items.
func (h *Heap[T]) Len() int { return len(h.items) }

// First is the earliest item; the heap must not be empty.
func (h *Heap[T]) First() T { return h.items[0] }

// Push adds x.
func (h *Heap[T]) Push(x T) { heap.Push((*adapter[T])(h), x) }

// Pop removes and returns the earliest item.
func (h *Heap[T]) Pop() T { return heap.Pop((*adapter[T])(h)).(T) }

// Fix restores the order after the item at index i changed.
func (h *Heap[T]) Fix(i int) { heap.Fix((*adapter[T])(h), i) }

// Remove takes out the item at index i.
func (h *Heap[T]) Remove(i int) T { return heap.Remove((*adapter[T])(h), i).(T) }

// Expire is one step of a table's expiry: it looks at the items due (due
// says it of the earliest), batch at most, earliest first. For each, renew
// either sets its next due time and reports true, and the item is filed
// again there, or reports false, and it is taken out: by Expire, or by
// renew itself (Remove at its index, and no other change to the heap), as
// the router's forget does. touched is how many items it looked at; more
// reports that due items may be left.
func (h *Heap[T]) Expire(batch int, due, renew func(T) bool) (touched int, more bool) {
	for h.Len() > 0 && due(h.First()) {
		if touched == batch {
			return touched, true
		}
		touched++
		n := h.Len()
		if renew(h.First()) {
			h.Fix(0)
		} else if h.Len() == n {
			h.Pop()
		}
	}
	return touched, false
}

// adapter is Heap as container/heap's Interface.
type adapter[T Item[T]] Heap[T]

func (a *adapter[T]) Len() int           { return len(a.items) }
func (a *adapter[T]) Less(i, j int) bool { return a.items[i].DueBefore(a.items[j]) }
func (a *adapter[T]) Swap(i, j int) {
	a.items[i], a.items[j] = a.items[j], a.items[i]
	a.items[i].SetDueIndex(i)
	a.items[j].SetDueIndex(j)
}
func (a *adapter[T]) Push(x any) {
	it := x.(T)
	it.SetDueIndex(len(a.items))
	a.items = append(a.items, it)
}
func (a *adapter[T]) Pop() any {
	n := len(a.items) - 1
	it := a.items[n]
	var zero T
	a.items[n] = zero
	a.items = a.items[:n]
	it.SetDueIndex(-1)
	return it
}
