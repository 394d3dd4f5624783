package kvswap

import (
	"fmt"
	"math"
)

// Budget limits swap traffic per iteration, in blocks (both directions
// together; keep two Budgets for separate limits). The engine calls Reset at
// the start of every iteration and Take before it schedules a swap.
//
// Take is all or nothing. A call with more blocks than the whole limit can then
// never move in one iteration; an engine that allows that moves it over several
// iterations with k := min(rest, b.Left()); b.Take(k).
type Budget struct {
	limit     int
	unlimited bool
	used      int
}

// NewBudget returns a budget of maxBlocksPerIter blocks per iteration; zero or
// less means unlimited.
func NewBudget(maxBlocksPerIter int) *Budget {
	return &Budget{limit: maxBlocksPerIter, unlimited: maxBlocksPerIter <= 0}
}

// NewByteBudget returns a budget of maxBytesPerIter bytes per iteration in
// whole blocks of blockBytes (rounded down); zero or less means unlimited. A
// positive limit below one block is an error: it could never move anything.
func NewByteBudget(maxBytesPerIter int64, blockBytes int) (*Budget, error) {
	if blockBytes <= 0 {
		return nil, fmt.Errorf("kvswap: byte budget: block size %d bytes must be positive", blockBytes)
	}
	if maxBytesPerIter <= 0 {
		return NewBudget(0), nil
	}
	blocks := maxBytesPerIter / int64(blockBytes)
	if blocks == 0 {
		return nil, fmt.Errorf("kvswap: byte budget of %d bytes is smaller than one block of %d bytes", maxBytesPerIter, blockBytes)
	}
	if blocks > math.MaxInt {
		blocks = math.MaxInt
	}
	return NewBudget(int(blocks)), nil
}

// Reset starts a new iteration: the whole limit is available again.
func (b *Budget) Reset() { b.used = 0 }

// Take reserves blocks from this iteration's budget, all or nothing, and
// reports whether it did. Take(0) always succeeds; a negative count panics.
func (b *Budget) Take(blocks int) bool {
	if blocks < 0 {
		panic(fmt.Sprintf("kvswap: Budget.Take(%d): negative count", blocks))
	}
	if !b.unlimited && blocks > b.limit-b.used {
		return false
	}
	b.used += blocks
	return true
}

// Left is the number of blocks still available this iteration (math.MaxInt
// when unlimited).
func (b *Budget) Left() int {
	if b.unlimited {
		return math.MaxInt
	}
	return b.limit - b.used
}

// Used is the number of blocks taken this iteration.
func (b *Budget) Used() int { return b.used }

// Limit is the per-iteration limit in blocks (0 when unlimited).
func (b *Budget) Limit() int {
	if b.unlimited {
		return 0
	}
	return b.limit
}
