package engine

import "fmt"

// CacheEviction is the order in which the prefix cache gives up free
// blocks that still hold a cached prefix (Config.CacheEviction). It is the
// engine's, the same for every policy.
//
//   - CacheLRU (the default, vLLM's): the least recently freed block goes
//     first.
//   - CacheSecondChance: the CLOCK algorithm over the same queue. A block
//     taken again by a prefix match since it last entered the queue is not
//     evicted when it reaches the head: it loses the mark and goes to the
//     tail, once. A context that has been reused (a conversation's earlier
//     turns, a program's shared prefix) is the likelier to be reused again,
//     so it outlives the blocks computed once and never matched (the last
//     turn of a finished program, a new prompt's private tail). No
//     parameter: the mark is one bit, cleared as it is spent, and each
//     move to the tail is paid for by the match that set the mark, so an
//     allocation stays O(1) amortized. Measured (docs/results-policies.md,
//     session 14): every policy's mean falls on mixed, and rises on react,
//     where a finished chain's blocks all carry the mark and outlive the
//     live chains' newest ones; so it is not the default.
type CacheEviction string

const (
	CacheLRU          CacheEviction = "lru"
	CacheSecondChance CacheEviction = "second-chance"
)

// CacheEvictions lists the valid values of Config.CacheEviction.
func CacheEvictions() []string { return []string{string(CacheLRU), string(CacheSecondChance)} }

// ParseCacheEviction reads a CacheEviction; "" is CacheLRU.
func ParseCacheEviction(s string) (CacheEviction, error) {
	switch CacheEviction(s) {
	case "", CacheLRU:
		return CacheLRU, nil
	case CacheSecondChance:
		return CacheSecondChance, nil
	}
	return "", fmt.Errorf("unknown prefix-cache eviction %q (valid: lru, second-chance)", s)
}

// SetEviction picks the order in which cached free blocks are evicted.
func (m *BlockManager) SetEviction(e CacheEviction) { m.secondChance = e == CacheSecondChance }

// giveSecondChances moves each marked cached block at the head of the free
// queue to its tail, clearing its mark, until the head is one to evict (at
// most one pass over the queue).
func (m *BlockManager) giveSecondChances() {
	for n := m.free.n; n > 0; n-- {
		id := m.free.head
		b := &m.blocks[id]
		if !b.reused || !b.hashed {
			return
		}
		b.reused = false
		m.unlinkFree(id)
		m.pushFree(id)
	}
}
