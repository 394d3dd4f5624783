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
