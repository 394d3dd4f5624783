package kvswap

import (
	"math"
	"testing"
)

func TestBudget(t *testing.T) {
	b := NewBudget(10)
	if b.Left() != 10 || b.Limit() != 10 || b.Used() != 0 {
		t.Fatalf("fresh: left %d limit %d used %d", b.Left(), b.Limit(), b.Used())
	}
	if !b.Take(4) || b.Left() != 6 || b.Used() != 4 {
		t.Fatalf("Take(4): left %d used %d", b.Left(), b.Used())
	}
	if b.Take(7) {
		t.Fatal("Take(7) with 6 left succeeded")
	}
	if b.Left() != 6 {
		t.Fatalf("failed Take changed Left to %d", b.Left())
	}
	if !b.Take(6) || b.Left() != 0 {
		t.Fatalf("Take(6) with 6 left: left %d", b.Left())
	}
	if !b.Take(0) {
		t.Fatal("Take(0) on an exhausted budget failed")
	}
	if b.Take(1) {
		t.Fatal("Take(1) on an exhausted budget succeeded")
	}
	b.Reset()
	if b.Left() != 10 || b.Used() != 0 {
		t.Fatalf("after Reset: left %d used %d", b.Left(), b.Used())
	}
	if b.Take(11) {
		t.Fatal("Take beyond the whole limit succeeded")
	}
	// Moving a call larger than the limit over several iterations.
	rest, iters := 25, 0
	for rest > 0 {
		b.Reset()
		k := min(rest, b.Left())
		if !b.Take(k) {
			t.Fatal("Take(min(rest, Left())) failed")
		}
		rest -= k
		iters++
	}
	if iters != 3 {
		t.Fatalf("25 blocks at 10 per iteration took %d iterations, want 3", iters)
	}
	mustPanic(t, "negative count", func() { b.Take(-1) })
}

func TestBudgetUnlimited(t *testing.T) {
	for _, n := range []int{0, -5} {
		b := NewBudget(n)
		if b.Limit() != 0 || b.Left() != math.MaxInt {
			t.Fatalf("NewBudget(%d): limit %d left %d", n, b.Limit(), b.Left())
		}
		if !b.Take(1<<40) || !b.Take(1<<40) || b.Used() != 1<<41 {
			t.Fatalf("unlimited Take failed or used %d", b.Used())
		}
		if b.Left() != math.MaxInt {
			t.Fatalf("unlimited Left %d after Take", b.Left())
		}
		b.Reset()
		if b.Used() != 0 {
			t.Fatal("Reset did not clear Used")
		}
	}
}

func TestByteBudget(t *testing.T) {
	b, err := NewByteBudget(1000, 300)
	if err != nil || b.Limit() != 3 {
		t.Fatalf("NewByteBudget(1000, 300) = limit %v, %v; want 3 blocks", b, err)
	}
	if b, err := NewByteBudget(0, 300); err != nil || b.Left() != math.MaxInt {
		t.Fatalf("NewByteBudget(0) = %v, %v; want unlimited", b, err)
	}
	if _, err := NewByteBudget(299, 300); err == nil {
		t.Fatal("byte budget below one block: no error")
	}
	if _, err := NewByteBudget(1000, 0); err == nil {
		t.Fatal("zero block size: no error")
	}
}
