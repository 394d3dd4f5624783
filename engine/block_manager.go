package engine

import (
	"fmt"
)

// BlockManager owns the device KV blocks: fixed-size blocks with reference
// counts, a free queue in LRU order, and a prefix cache keyed by chained block
// hashes. A freed block keeps its hash until it is reused, so a later call with
// the same prefix (the next call of a program, a recompute after discard, a
// swap-in) finds it without computing or copying it again. A discarded call's
// partial last block is kept the same way under a tail hash (CommitTail), so
// that a call whose full blocks survive comes back with nothing to recompute.
type BlockManager struct {
	blockSize   int
	prefixCache bool
	blocks      []block
	free        freeQueue
	cached      map[uint64]int32 // chained hash → block holding it
	evicted     int64            // cached full blocks reused for other KV so far
	tails       TailStats
	// secondChance is Config.CacheEviction's CacheSecondChance
	// (cache_eviction.go).
	secondChance bool
	// coldTail is the last block of the free queue's cold segment, -1 when
	// it is empty: blocks released as RetainLow, kept at the head so they
	// are evicted before every other free block, least recently freed
	// first (cache_hint.go).
	coldTail int32
	// beforeEvict, when set, is called before a cached block is evicted; it
	// reports whether it changed the free queue (the engine's rescue).
	beforeEvict func(id int32) bool
}

// TailStats counts the partial last blocks kept through discards.
type TailStats struct {
	Kept    int64 // tails committed at a discard
	Reused  int64 // taken back by their call on re-admission
	Evicted int64 // reused for other KV before their call came back
}

type block struct {
	ref     int32
	hash    uint64
	hashed  bool
	tail    bool  // hash is a tail hash (CommitTail): a partial block, never shared
	prev    int32 // free-queue links, -1 at the ends
	next    int32
	inQueue bool
	reused  bool // matched as a cached prefix since it last had a second chance (CacheSecondChance)
	cold    bool // in the free queue's cold segment (RetainLow)
}

// freeQueue is an intrusive doubly-linked list of blocks with ref 0: freed
// blocks go to the tail, allocation takes the head (least recently freed).
type freeQueue struct {
	head, tail int32
	n          int
}

// NewBlockManager makes a pool of numBlocks blocks of blockSize tokens.
func NewBlockManager(numBlocks, blockSize int, prefixCache bool) *BlockManager {
	if numBlocks <= 0 || blockSize <= 0 {
		panic(fmt.Sprintf("engine: block manager needs positive sizes, got %d blocks of %d tokens", numBlocks, blockSize))
	}
	m := &BlockManager{
		blockSize:   blockSize,
		prefixCache: prefixCache,
		blocks:      make([]block, numBlocks),
		free:        freeQueue{head: -1, tail: -1},
		cached:      make(map[uint64]int32),
		coldTail:    -1,
	}
	for i := range m.blocks {
		m.blocks[i].prev, m.blocks[i].next = -1, -1
		m.pushFree(int32(i))
	}
	return m
}

func (m *BlockManager) BlockSize() int    { return m.blockSize }
func (m *BlockManager) NumBlocks() int    { return len(m.blocks) }
func (m *BlockManager) FreeBlocks() int   { return m.free.n }
func (m *BlockManager) UsedBlocks() int   { return len(m.blocks) - m.free.n }
func (m *BlockManager) PrefixCache() bool { return m.prefixCache }

// Evicted is how many cached blocks have been taken for other KV so far:
// the prefix cache's evictions, whose rate says how long a freed block
// survives.
func (m *BlockManager) Evicted() int64 { return m.evicted }

// Tails counts the partial last blocks kept through discards.
func (m *BlockManager) Tails() TailStats { return m.tails }

// BlocksFor is the number of blocks that hold n tokens.
func (m *BlockManager) BlocksFor(n int) int { return (n + m.blockSize - 1) / m.blockSize }

func (m *BlockManager) pushFree(id int32) {
	b := &m.blocks[id]
	b.prev, b.next, b.inQueue = m.free.tail, -1, true
	if m.free.tail >= 0 {
		m.blocks[m.free.tail].next = id
	} else {
		m.free.head = id
	}
	m.free.tail = id
	m.free.n++
}

func (m *BlockManager) unlinkFree(id int32) {
	b := &m.blocks[id]
	if id == m.coldTail {
		m.coldTail = b.prev // the segment is a prefix of the queue: prev is cold or -1
	}
	b.cold = false
	if b.prev >= 0 {
		m.blocks[b.prev].next = b.next
	} else {
		m.free.head = b.next
	}
	if b.next >= 0 {
		m.blocks[b.next].prev = b.prev
	} else {
		m.free.tail = b.prev
	}
	b.prev, b.next, b.inQueue = -1, -1, false
	m.free.n--
}

// allocate takes the least recently freed block, evicting its cached hash.
func (m *BlockManager) allocate() int32 {
	if m.secondChance {
		m.giveSecondChances()
	}
	for m.beforeEvict != nil && m.blocks[m.free.head].hashed && m.beforeEvict(m.free.head) {
	}
	id := m.free.head
	m.unlinkFree(id)
	b := &m.blocks[id]
	if b.hashed {
		if m.cached[b.hash] == id {
			delete(m.cached, b.hash)
			if b.tail {
				m.tails.Evicted++
			} else {
				m.evicted++
			}
		}
		b.hashed, b.tail = false, false
	}
	b.ref, b.reused = 1, false
	return id
}

// release drops one reference; the last one returns the block to the free queue.
func (m *BlockManager) release(id int32) { m.releaseAs(id, RetainLRU) }

// releaseAs is release with a policy's hint: a block that reaches ref 0
// joins the free queue's tail, or with RetainLow its cold segment
// (cache_hint.go).
func (m *BlockManager) releaseAs(id int32, r Retention) {
	b := &m.blocks[id]
	if b.ref <= 0 {
		panic(fmt.Sprintf("engine: block %d released with refcount %d", id, b.ref))
	}
	b.ref--
	switch {
	case b.ref > 0:
	case r == RetainLow:
		m.pushCold(id)
	default:
		m.pushFree(id)
	}
}

// acquire takes a reference on a cached block (a prefix hit).
func (m *BlockManager) acquire(id int32) {
	b := &m.blocks[id]
	if b.ref == 0 {
		m.unlinkFree(id)
	}
	b.ref++
}

// CanGrow reports whether n more blocks can be allocated while keeping
// watermark blocks free.
func (m *BlockManager) CanGrow(n, watermark int) bool { return m.free.n-n >= watermark }

// Grow extends a block table so it covers tokens tokens. It allocates all
// needed blocks or none and reports whether it could.
func (m *BlockManager) Grow(table *[]int32, tokens int) bool {
	need := m.BlocksFor(tokens) - len(*table)
	if need <= 0 {
		return true
	}
	if need > m.free.n {
		return false
	}
	for range need {
		*table = append(*table, m.allocate())
	}
	return true
}

// Release frees a whole block table, tail first so that a sequence's shared
// prefix outlives its private tail in the free queue.
func (m *BlockManager) Release(table []int32) {
	for i := len(table) - 1; i >= 0; i-- {
		m.release(table[i])
	}
}

// MatchPrefix returns the cached blocks holding the longest prefix of hashes
// and takes a reference on each. hashes are chained block hashes of full
// blocks, in order.
func (m *BlockManager) MatchPrefix(hashes []uint64) []int32 {
	if !m.prefixCache {
		return nil
	}
	var hit []int32
	for _, h := range hashes {
		id, ok := m.cached[h]
		if !ok {
			break
		}
		m.acquire(id)
		m.blocks[id].reused = true
		hit = append(hit, id)
	}
	return hit
}

// Lookup reports whether a full block with this chained hash is cached on the device.
func (m *BlockManager) Lookup(h uint64) (int32, bool) {
	if !m.prefixCache {
		return 0, false
	}
	id, ok := m.cached[h]
	return id, ok
}

// Unused reports whether a block has no reference: acquiring it takes it
// off the free queue, so it costs a free block like an allocation does.
func (m *BlockManager) Unused(id int32) bool { return m.blocks[id].ref == 0 }

// Acquire takes a reference on a block found by Lookup.
func (m *BlockManager) Acquire(id int32) {
	m.acquire(id)
	m.blocks[id].reused = true
}

// Commit records that block id now holds the full block with chained hash h.
func (m *BlockManager) Commit(id int32, h uint64) {
	if !m.prefixCache {
		return
	}
	b := &m.blocks[id]
	if b.hashed {
		return
	}
	b.hash, b.hashed = h, true
	if _, dup := m.cached[h]; !dup {
		m.cached[h] = id
	}
}

// CommitTail records that block id holds a partial last block whose
// tokens hash to h (a tail hash, see Engine.tailHash) before the block is
// released by a discard: it stays reusable, by TakeTail only, until an
// allocation evicts it.
func (m *BlockManager) CommitTail(id int32, h uint64) {
	if !m.prefixCache {
		return
	}
	b := &m.blocks[id]
	if b.hashed {
		return
	}
	if _, dup := m.cached[h]; dup {
		return
	}
	b.hash, b.hashed, b.tail = h, true, true
	m.cached[h] = id
	m.tails.Kept++
}

// TakeTail takes back the free block holding the tail with hash h, as the
// caller's own: its hash is dropped, since the caller goes on writing the
// block. It reports false when the tail was evicted.
func (m *BlockManager) TakeTail(h uint64) (int32, bool) {
	id, ok := m.cached[h]
	if !ok {
		return 0, false
	}
	b := &m.blocks[id]
	if !b.tail || b.ref != 0 {
		return 0, false
	}
	m.unlinkFree(id)
	delete(m.cached, h)
	b.hashed, b.tail, b.ref = false, false, 1
	m.tails.Reused++
	return id, true
}

// ForgetTail drops the tail hash h (its call finished, or came back without
// the full blocks before it): the block stays free, as any other.
func (m *BlockManager) ForgetTail(h uint64) {
	id, ok := m.cached[h]
	if !ok || !m.blocks[id].tail {
		return
	}
	delete(m.cached, h)
	m.blocks[id].hashed, m.blocks[id].tail = false, false
}

// Check verifies the invariants against the block tables of all live
// sequences: every block is either free (ref 0, in the free queue) or owned,
// refcounts equal the number of tables holding the block, and the cache maps
// only to blocks carrying that hash.
func (m *BlockManager) Check(tables [][]int32) error {
	want := make([]int32, len(m.blocks))
	for _, t := range tables {
		for _, id := range t {
			if id < 0 || int(id) >= len(m.blocks) {
				return fmt.Errorf("block table holds block %d outside the pool of %d", id, len(m.blocks))
			}
			want[id]++
		}
	}
	inQueue, inCold, coldEnd := 0, true, int32(-1)
	for i := m.free.head; i >= 0; i = m.blocks[i].next {
		if m.blocks[i].cold {
			if !inCold {
				return fmt.Errorf("cold block %d follows a warm one in the free queue", i)
			}
			coldEnd = i
		} else {
			inCold = false
		}
		inQueue++
		if inQueue > len(m.blocks) {
			return fmt.Errorf("free queue has a cycle")
		}
		if !m.blocks[i].inQueue {
			return fmt.Errorf("block %d is linked in the free queue but not marked", i)
		}
	}
	if coldEnd != m.coldTail {
		return fmt.Errorf("cold segment ends at block %d, coldTail says %d", coldEnd, m.coldTail)
	}
	if inQueue != m.free.n {
		return fmt.Errorf("free queue holds %d blocks, counter says %d", inQueue, m.free.n)
	}
	for i := range m.blocks {
		b := &m.blocks[i]
		if b.ref != want[i] {
			return fmt.Errorf("block %d has refcount %d but %d tables hold it", i, b.ref, want[i])
		}
		if (b.ref == 0) != b.inQueue {
			return fmt.Errorf("block %d: refcount %d, in free queue %v", i, b.ref, b.inQueue)
		}
	}
	for h, id := range m.cached {
		b := &m.blocks[id]
		if !b.hashed || b.hash != h {
			return fmt.Errorf("prefix cache maps hash %x to block %d which holds another", h, id)
		}
		if b.tail && b.ref != 0 {
			return fmt.Errorf("block %d is held by %d tables but still cached as a discarded call's tail", id, b.ref)
		}
	}
	return nil
}

// Allocate takes one free block; the caller has checked CanGrow.
func (m *BlockManager) Allocate() int32 {
	if m.free.n == 0 {
		panic("engine: Allocate with no free block")
	}
	return m.allocate()
}
