package kvswap

import (
	"fmt"
	"math"
)

// HostTier is a pool of host-memory slots, one KV block each, with a fixed
// capacity in blocks. Slots are ints 0..Capacity()-1.
//
// Allocation is last-freed-first and hands out slots in ascending order from a
// fresh tier, so the slots of one Alloc are often consecutive; Mover uses that
// to gather straight into the tier without a staging copy.
type HostTier struct {
	capacity   int
	blockBytes int
	store      bool
	data       []byte // capacity*blockBytes when store, else nil
	free       []int  // stack of free slots; the top is handed out first
	used       []bool // used[i]: slot i is allocated
	nUsed      int
}

// NewHostTier returns a tier of capacityBlocks slots of blockBytes each. With
// storeBytes the tier holds the bytes in one backing array (allocated lazily by
// the OS: untouched pages cost no resident memory); without it the tier only
// counts slots, as the simulator needs. It panics on a negative capacity, a
// non-positive block size or a byte size that overflows int.
func NewHostTier(capacityBlocks, blockBytes int, storeBytes bool) *HostTier {
	if capacityBlocks < 0 {
		panic(fmt.Sprintf("kvswap: NewHostTier: negative capacity %d", capacityBlocks))
	}
	if blockBytes <= 0 {
		panic(fmt.Sprintf("kvswap: NewHostTier: block size %d bytes must be positive", blockBytes))
	}
	if storeBytes && capacityBlocks > math.MaxInt/blockBytes {
		panic(fmt.Sprintf("kvswap: NewHostTier: %d blocks of %d bytes overflow int", capacityBlocks, blockBytes))
	}
	h := &HostTier{
		capacity:   capacityBlocks,
		blockBytes: blockBytes,
		store:      storeBytes,
		free:       make([]int, capacityBlocks),
		used:       make([]bool, capacityBlocks),
	}
	for i := range h.free {
		h.free[i] = capacityBlocks - 1 - i // slot 0 on top
	}
	if storeBytes {
		h.data = make([]byte, capacityBlocks*blockBytes)
	}
	return h
}

// Alloc reserves n slots, all or nothing. It returns false, and changes
// nothing, when fewer than n slots are free; the engine then discards instead.
// Alloc(0) returns an empty slice and true. A negative n panics. Slot bytes
// are not cleared: a new slot holds whatever its last user left.
func (h *HostTier) Alloc(n int) ([]int, bool) {
	if n < 0 {
		panic(fmt.Sprintf("kvswap: HostTier.Alloc(%d): negative count", n))
	}
	if n > len(h.free) {
		return nil, false
	}
	slots := make([]int, n)
	top := len(h.free)
	for i := range slots {
		s := h.free[top-1-i]
		slots[i] = s
		h.used[s] = true
	}
	h.free = h.free[:top-n]
	h.nUsed += n
	return slots, true
}

// Free returns slots to the tier. A slot out of range, not allocated, or listed
// twice is an engine bug: Free panics with a message naming the slot, and frees
// none of the slots given.
func (h *HostTier) Free(slots []int) {
	for _, s := range slots {
		if s < 0 || s >= h.capacity {
			panic(fmt.Sprintf("kvswap: HostTier.Free: unknown slot %d (capacity %d)", s, h.capacity))
		}
		if !h.used[s] {
			panic(fmt.Sprintf("kvswap: HostTier.Free: double free of slot %d (not allocated)", s))
		}
	}
	for i, s := range slots {
		if !h.used[s] { // listed twice in this call: undo, then report
			for _, t := range slots[:i] {
				h.used[t] = true
			}
			panic(fmt.Sprintf("kvswap: HostTier.Free: double free of slot %d (listed twice)", s))
		}
		h.used[s] = false
	}
	// Push in reverse so the next Alloc hands the slots back in the same order.
	for i := len(slots) - 1; i >= 0; i-- {
		h.free = append(h.free, slots[i])
	}
	h.nUsed -= len(slots)
}

// Used is the number of allocated slots.
func (h *HostTier) Used() int { return h.nUsed }

// Available is the number of free slots.
func (h *HostTier) Available() int { return h.capacity - h.nUsed }

// Capacity is the number of slots.
func (h *HostTier) Capacity() int { return h.capacity }

// BlockBytes is the size of one slot in bytes.
func (h *HostTier) BlockBytes() int { return h.blockBytes }

// StoresBytes reports whether the tier holds bytes (false: accounting only).
func (h *HostTier) StoresBytes() bool { return h.store }

// Allocated reports whether slot i is allocated. It panics when i is out of
// range.
func (h *HostTier) Allocated(i int) bool {
	h.check(i, "Allocated")
	return h.used[i]
}

// Slot returns the bytes of slot i (length and capacity BlockBytes()), or nil
// when the tier does not store bytes. It panics when i is out of range.
func (h *HostTier) Slot(i int) []byte {
	h.check(i, "Slot")
	if !h.store {
		return nil
	}
	return h.span(i, 1)
}

// span returns n consecutive slots starting at first as one slice.
func (h *HostTier) span(first, n int) []byte {
	lo, hi := first*h.blockBytes, (first+n)*h.blockBytes
	return h.data[lo:hi:hi]
}

func (h *HostTier) check(i int, op string) {
	if i < 0 || i >= h.capacity {
		panic(fmt.Sprintf("kvswap: HostTier.%s: slot %d out of range (capacity %d)", op, i, h.capacity))
	}
}
