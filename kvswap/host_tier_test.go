package kvswap

import (
	"slices"
	"strings"
	"testing"
)

// mustPanic runs f and fails unless it panics with a message containing want.
func mustPanic(t *testing.T, want string, f func()) {
	t.Helper()
	defer func() {
		t.Helper()
		r := recover()
		if r == nil {
			t.Fatalf("no panic, want one containing %q", want)
		}
		msg, _ := r.(string)
		if !strings.Contains(msg, want) {
			t.Fatalf("panic %q, want one containing %q", r, want)
		}
	}()
	f()
}

func TestHostTierAccounting(t *testing.T) {
	for _, store := range []bool{false, true} {
		h := NewHostTier(10, 64, store)
		if h.Capacity() != 10 || h.BlockBytes() != 64 || h.Used() != 0 || h.Available() != 10 || h.StoresBytes() != store {
			t.Fatalf("store=%v: fresh tier: cap %d bb %d used %d avail %d", store, h.Capacity(), h.BlockBytes(), h.Used(), h.Available())
		}
		a, ok := h.Alloc(4)
		if !ok || len(a) != 4 || h.Used() != 4 {
			t.Fatalf("Alloc(4) = %v, %v; used %d", a, ok, h.Used())
		}
		if !slices.Equal(a, []int{0, 1, 2, 3}) {
			t.Errorf("fresh tier hands out %v, want ascending 0..3", a)
		}
		b, ok := h.Alloc(6)
		if !ok || h.Used() != 10 || h.Available() != 0 {
			t.Fatalf("Alloc(6) = %v, %v; used %d", b, ok, h.Used())
		}
		seen := map[int]bool{}
		for _, s := range append(slices.Clone(a), b...) {
			if seen[s] || s < 0 || s >= 10 || !h.Allocated(s) {
				t.Fatalf("slot %d repeated, out of range or not marked allocated", s)
			}
			seen[s] = true
		}
		h.Free(a)
		if h.Used() != 6 {
			t.Fatalf("after Free(4): used %d, want 6", h.Used())
		}
		for _, s := range a {
			if h.Allocated(s) {
				t.Fatalf("slot %d still allocated after Free", s)
			}
		}
		c, ok := h.Alloc(4)
		if !ok || !slices.Equal(c, a) {
			t.Errorf("realloc after Free = %v, want the freed slots in order %v", c, a)
		}
		h.Free(c)
		h.Free(b)
		if h.Used() != 0 || h.Available() != 10 {
			t.Fatalf("all freed: used %d avail %d", h.Used(), h.Available())
		}
		if z, ok := h.Alloc(0); !ok || len(z) != 0 || h.Used() != 0 {
			t.Fatalf("Alloc(0) = %v, %v", z, ok)
		}
		h.Free(nil)
	}
}

func TestHostTierAllocAllOrNothing(t *testing.T) {
	h := NewHostTier(5, 8, true)
	a, _ := h.Alloc(3)
	if s, ok := h.Alloc(3); ok || s != nil {
		t.Fatalf("Alloc(3) with 2 free = %v, %v; want nil, false", s, ok)
	}
	if h.Used() != 3 || h.Available() != 2 {
		t.Fatalf("failed Alloc changed accounting: used %d avail %d", h.Used(), h.Available())
	}
	b, ok := h.Alloc(2)
	if !ok || len(b) != 2 {
		t.Fatalf("Alloc(2) with 2 free = %v, %v", b, ok)
	}
	if _, ok := h.Alloc(1); ok {
		t.Fatal("Alloc(1) on a full tier succeeded")
	}
	h.Free(a)
	h.Free(b)

	empty := NewHostTier(0, 8, false)
	if _, ok := empty.Alloc(1); ok {
		t.Fatal("Alloc on a zero-capacity tier succeeded")
	}
	if _, ok := empty.Alloc(0); !ok {
		t.Fatal("Alloc(0) on a zero-capacity tier failed")
	}
}

func TestHostTierFreePanics(t *testing.T) {
	h := NewHostTier(4, 8, false)
	a, _ := h.Alloc(2)
	h.Free(a[:1])
	mustPanic(t, "double free of slot 0", func() { h.Free(a[:1]) })
	mustPanic(t, "double free of slot 3", func() { h.Free([]int{3}) }) // never allocated
	mustPanic(t, "unknown slot 4", func() { h.Free([]int{4}) })
	mustPanic(t, "unknown slot -1", func() { h.Free([]int{-1}) })
	mustPanic(t, "listed twice", func() { h.Free([]int{a[1], a[1]}) })
	// A panicking Free frees nothing: slot a[1] is still allocated.
	if !h.Allocated(a[1]) || h.Used() != 1 {
		t.Fatalf("panicking Free changed state: allocated %v used %d", h.Allocated(a[1]), h.Used())
	}
	mustPanic(t, "double free of slot", func() { h.Free([]int{a[1], 0}) })
	if !h.Allocated(a[1]) || h.Used() != 1 {
		t.Fatalf("panicking Free changed state: allocated %v used %d", h.Allocated(a[1]), h.Used())
	}
	h.Free(a[1:])
	if h.Used() != 0 {
		t.Fatalf("used %d, want 0", h.Used())
	}
	mustPanic(t, "negative count", func() { h.Alloc(-1) })
}

func TestHostTierSlot(t *testing.T) {
	h := NewHostTier(3, 16, true)
	s := h.Slot(1)
	if len(s) != 16 || cap(s) != 16 {
		t.Fatalf("Slot len %d cap %d, want 16/16", len(s), cap(s))
	}
	for i := range s {
		s[i] = 0xAB
	}
	if h.Slot(0)[15] != 0 || h.Slot(2)[0] != 0 {
		t.Fatal("writing slot 1 touched its neighbours")
	}
	mustPanic(t, "out of range", func() { h.Slot(3) })
	if NewHostTier(3, 16, false).Slot(0) != nil {
		t.Fatal("accounting-only tier returned bytes")
	}
}

func TestConstructorsPanic(t *testing.T) {
	mustPanic(t, "negative capacity", func() { NewHostTier(-1, 8, false) })
	mustPanic(t, "must be positive", func() { NewHostTier(1, 0, false) })
	mustPanic(t, "overflow", func() { NewHostTier(1<<40, 1<<40, true) })
	mustPanic(t, "must be positive", func() { NewMemoryDevice(1, 0) })
	mustPanic(t, "nil host", func() { NewMover(nil, nil, true) })
	mustPanic(t, "device is nil", func() { NewMover(nil, NewHostTier(1, 8, true), true) })
	mustPanic(t, "device blocks of 16 bytes, host slots of 8", func() {
		NewMover(NewMemoryDevice(1, 16), NewHostTier(1, 8, true), false)
	})
	NewMover(nil, NewHostTier(1, 8, false), true) // accounting only: no device needed
}
