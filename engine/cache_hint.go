package engine

import "fmt"

// Retention is a policy's hint of how likely a finished call's cached
// context is to be matched again, given to the block manager when the call
// frees its blocks (Retainer). The block manager owns the blocks and the
// order in which free ones are evicted; the hint only picks the segment of
// the free queue they join, as vLLM V1's scheduler passes the KV cache
// manager hints without owning blocks.
type Retention int8

const (
	// RetainLRU (the default): the blocks join the free queue's tail, as
	// any freed block (CacheLRU or CacheSecondChance).
	RetainLRU Retention = iota
	// RetainLow: the blocks join the cold segment at the queue's head and
	// are evicted before every block released as RetainLRU, least recently
	// freed first among themselves. Belady's rule with two classes: a
	// context unlikely ever to be matched again goes before any that is
	// likely to be.
	RetainLow
	// RetainWatch: as RetainLRU, and the engine keeps the blocks' ids
	// under the call's program, an opaque key, until the program's next
	// call arrives, so that the policy can name the program in Cold later,
	// when its context has become unlikely to be matched again.
	RetainWatch
)

func (r Retention) String() string {
	switch r {
	case RetainLRU:
		return "lru"
	case RetainLow:
		return "low"
	case RetainWatch:
		return "watch"
	}
	return fmt.Sprintf("Retention(%d)", int8(r))
}

// Retainer is asked once when a call finishes, before its blocks are freed:
// how likely its context is to be matched again. Default (BasePolicy):
// RetainLRU, so the free queue is exactly LRU.
type Retainer interface {
	Retain(v *View, s *Sequence) Retention
	// Cold names programs whose last context, released as RetainWatch, is
	// now unlikely to be matched again: its blocks that are still free and
	// hold the same prefix move to the cold segment, the private tail
	// first. Asked once per iteration while a context is watched. Default:
	// none.
	Cold(v *View) []string
}

// watchedCtx is a context released as RetainWatch: its blocks and the
// hashes they held when freed.
type watchedCtx struct {
	ids    []int32
	hashes []uint64
}

// watch keeps a finished call's freed blocks under its program's key.
func (e *Engine) watch(s *Sequence) {
	if !e.blocks.prefixCache || len(s.blocks) == 0 {
		return
	}
	if e.watched == nil {
		e.watched = make(map[string]watchedCtx)
	}
	w := watchedCtx{ids: make([]int32, 0, len(s.blocks)), hashes: make([]uint64, 0, len(s.blocks))}
	for _, id := range s.blocks {
		if b := &e.blocks.blocks[id]; b.hashed && !b.tail {
			w.ids, w.hashes = append(w.ids, id), append(w.hashes, b.hash)
		}
	}
	e.watched[s.req.Program] = w
}

// coldWatched asks the policy which watched contexts went cold and moves
// them to the cold segment.
func (e *Engine) coldWatched() {
	if len(e.watched) == 0 {
		return
	}
	for _, key := range e.policy.Cold(&e.view) {
		if w, ok := e.watched[key]; ok {
			e.blocks.Demote(w.ids, w.hashes)
			delete(e.watched, key)
		}
	}
}

// Demote moves the blocks ids, last first, to the cold segment where each
// is still free and still holds hashes[i] (not evicted and reused since).
func (m *BlockManager) Demote(ids []int32, hashes []uint64) {
	for i := len(ids) - 1; i >= 0; i-- {
		b := &m.blocks[ids[i]]
		if b.ref == 0 && b.inQueue && !b.cold && b.hashed && !b.tail && b.hash == hashes[i] {
			m.unlinkFree(ids[i])
			m.pushCold(ids[i])
		}
	}
}

// ReleaseAs frees a whole block table as Release does; with RetainLow the
// blocks that reach ref 0 join the cold segment, tail first as Release
// orders them, so the call's shared prefix outlives its private tail there
// too.
func (m *BlockManager) ReleaseAs(table []int32, r Retention) {
	for i := len(table) - 1; i >= 0; i-- {
		m.releaseAs(table[i], r)
	}
}

// ColdBlocks is the number of free blocks in the cold segment.
func (m *BlockManager) ColdBlocks() int {
	n := 0
	for i := m.free.head; i >= 0 && m.blocks[i].cold; i = m.blocks[i].next {
		n++
	}
	return n
}

// pushCold appends a free block to the cold segment: after its last block,
// or at the queue's head when it is empty.
func (m *BlockManager) pushCold(id int32) {
	if m.coldTail < 0 {
		b := &m.blocks[id]
		b.prev, b.next, b.inQueue, b.cold = -1, m.free.head, true, true
		if m.free.head >= 0 {
			m.blocks[m.free.head].prev = id
		} else {
			m.free.tail = id
		}
		m.free.head = id
		m.free.n++
		m.coldTail = id
		return
	}
	after := m.coldTail
	b := &m.blocks[id]
	b.prev, b.next, b.inQueue, b.cold = after, m.blocks[after].next, true, true
	if b.next >= 0 {
		m.blocks[b.next].prev = id
	} else {
		m.free.tail = id
	}
	m.blocks[after].next = id
	m.free.n++
	m.coldTail = id
}
