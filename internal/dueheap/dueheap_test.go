package dueheap

import (
	"math/rand/v2"
	"slices"
	"testing"
)

type row struct{ due, idx int }

func (r *row) DueBefore(o *row) bool { return r.due < o.due }
func (r *row) SetDueIndex(i int)     { r.idx = i }

// Items come out earliest first, know their index while in, and a fixed or
// removed item keeps the order.
func TestHeapOrderAndIndex(t *testing.T) {
	var h Heap[*row]
	rng := rand.New(rand.NewPCG(1, 2))
	var rows []*row
	for range 200 {
		r := &row{due: rng.IntN(1000)}
		rows = append(rows, r)
		h.Push(r)
	}
	for i, r := range h.items {
		if r.idx != i {
			t.Fatalf("item at %d says index %d", i, r.idx)
		}
	}
	rows[7].due = -1
	h.Fix(rows[7].idx)
	if h.First() != rows[7] {
		t.Fatalf("fixed item not first")
	}
	gone := h.Remove(rows[9].idx)
	if gone != rows[9] || gone.idx != -1 || h.Len() != 199 {
		t.Fatalf("removed %v (index %d), len %d", gone, gone.idx, h.Len())
	}
	var out []int
	for h.Len() > 0 {
		out = append(out, h.Pop().due)
	}
	if !slices.IsSorted(out) || len(out) != 199 {
		t.Fatalf("popped %d items, sorted %v", len(out), slices.IsSorted(out))
	}
}

// Expire looks at the due items only, batch at most, earliest first: the
// renewed ones are filed again at their new due time, the others go.
func TestExpireRenewsOrDrops(t *testing.T) {
	var h Heap[*row]
	for _, d := range []int{5, 1, 4, 2, 3, 9} {
		h.Push(&row{due: d})
	}
	now := 5 // due: 1, 2, 3, 4
	var seen []int
	due := func(r *row) bool { return r.due < now }
	renew := func(r *row) bool {
		seen = append(seen, r.due)
		if r.due%2 == 0 {
			r.due += 10 // renewed: due again at 12 and 14
			return true
		}
		return false
	}
	touched, more := h.Expire(3, due, renew)
	if touched != 3 || !more || !slices.Equal(seen, []int{1, 2, 3}) {
		t.Fatalf("first step looked at %v (touched %d, more %v), want 1 2 3, 3, true", seen, touched, more)
	}
	touched, more = h.Expire(3, due, renew)
	if touched != 1 || more || !slices.Equal(seen, []int{1, 2, 3, 4}) {
		t.Fatalf("second step looked at %v (touched %d, more %v), want 4 after 1 2 3, 1, false", seen, touched, more)
	}
	var left []int
	for h.Len() > 0 {
		r := h.Pop()
		if r.idx != -1 {
			t.Fatalf("popped item says index %d", r.idx)
		}
		left = append(left, r.due)
	}
	if !slices.Equal(left, []int{5, 9, 12, 14}) {
		t.Fatalf("left %v, want 5 9 12 14 (the odd due ones dropped, the even renewed)", left)
	}
}

// A renew that takes its item out itself (as the router's forget does) is
// not followed by a second removal: every other item stays.
func TestExpireRenewMayRemoveItself(t *testing.T) {
	var h Heap[*row]
	for _, d := range []int{5, 1, 4, 2, 3, 9} {
		h.Push(&row{due: d})
	}
	var seen []int
	touched, more := h.Expire(10, func(r *row) bool { return r.due < 4 }, func(r *row) bool {
		seen = append(seen, r.due)
		if r.due == 2 {
			r.due = 7
			return true
		}
		if h.Remove(r.idx) != r || r.idx != -1 {
			t.Fatalf("removed the wrong item for %d", r.due)
		}
		return false
	})
	if touched != 3 || more || !slices.Equal(seen, []int{1, 2, 3}) {
		t.Fatalf("looked at %v (touched %d, more %v), want 1 2 3, 3, false", seen, touched, more)
	}
	var left []int
	for h.Len() > 0 {
		left = append(left, h.Pop().due)
	}
	if !slices.Equal(left, []int{4, 5, 7, 9}) {
		t.Fatalf("left %v, want 4 5 7 9 (1 and 3 removed by renew, 2 renewed to 7)", left)
	}
}
