package engine

import (
	"testing"
	"time"
)

// hintedPool fills a pool of n one-block tables with hashes 1..n and
// releases them in order, those in low as RetainLow; it returns the pool.
func hintedPool(t *testing.T, n int, low map[uint64]bool) *BlockManager {
	t.Helper()
	m := NewBlockManager(n, 16, true)
	tables := make([][]int32, n)
	for i := range tables {
		if !m.Grow(&tables[i], 16) {
			t.Fatal("pool too small")
		}
		m.Commit(tables[i][0], uint64(i+1))
	}
	for i, tb := range tables {
		r := RetainLRU
		if low[uint64(i+1)] {
			r = RetainLow
		}
		m.ReleaseAs(tb, r)
		if err := m.Check(tables[i+1:]); err != nil {
			t.Fatal(err)
		}
	}
	return m
}

// evictedOrder allocates every block of m one at a time and returns the
// hashes in the order they were evicted.
func evictedOrder(t *testing.T, m *BlockManager, n int) []uint64 {
	t.Helper()
	var lost []uint64
	var held [][]int32
	for range n {
		var tb []int32
		if !m.Grow(&tb, 16) {
			t.Fatal("no free block")
		}
		held = append(held, tb)
		for h := uint64(1); h <= uint64(n); h++ {
			if _, ok := m.Lookup(h); !ok && !contains(lost, h) {
				lost = append(lost, h)
			}
		}
		if err := m.Check(held); err != nil {
			t.Fatal(err)
		}
	}
	return lost
}

func TestRetainLowIsEvictedFirstLeastRecentlyFreedFirst(t *testing.T) {
	// Freed in the order 1..5, 2 and 4 as RetainLow: they go first (2
	// before 4), then the rest in LRU order.
	m := hintedPool(t, 5, map[uint64]bool{2: true, 4: true})
	if got := m.ColdBlocks(); got != 2 {
		t.Fatalf("cold segment holds %d blocks, want 2", got)
	}
	if got, want := evictedOrder(t, m, 5), []uint64{2, 4, 1, 3, 5}; !equalHashes(got, want) {
		t.Errorf("evicted %v, want %v", got, want)
	}
}

func TestWithoutHintsTheOrderIsLRU(t *testing.T) {
	if got, want := evictedOrder(t, hintedPool(t, 4, nil), 4), []uint64{1, 2, 3, 4}; !equalHashes(got, want) {
		t.Errorf("evicted %v, want %v", got, want)
	}
}

func TestAMatchedColdBlockLeavesTheSegment(t *testing.T) {
	// 1 and 2 are cold; 1 is matched again and freed as RetainLRU: it
	// joins the tail, so 2 goes first and 1 last.
	m := hintedPool(t, 3, map[uint64]bool{1: true, 2: true})
	hit := m.MatchPrefix([]uint64{1})
	if len(hit) != 1 {
		t.Fatalf("h1 not matched: %v", hit)
	}
	if err := m.Check([][]int32{hit}); err != nil {
		t.Fatal(err)
	}
	m.ReleaseAs(hit, RetainLRU)
	if got, want := evictedOrder(t, m, 3), []uint64{2, 3, 1}; !equalHashes(got, want) {
		t.Errorf("evicted %v, want %v", got, want)
	}
}

func TestReleaseAsKeepsATablesPrefixLongerInTheSegment(t *testing.T) {
	// One table of three blocks released as RetainLow: tail first, as
	// Release orders it, so its last block is evicted first.
	m := NewBlockManager(3, 16, true)
	var tb []int32
	m.Grow(&tb, 48)
	for i, id := range tb {
		m.Commit(id, uint64(i+1))
	}
	m.ReleaseAs(tb, RetainLow)
	if got, want := evictedOrder(t, m, 3), []uint64{3, 2, 1}; !equalHashes(got, want) {
		t.Errorf("evicted %v, want %v", got, want)
	}
}

func TestRetentionString(t *testing.T) {
	for r, want := range map[Retention]string{RetainLRU: "lru", RetainLow: "low", RetainWatch: "watch", 7: "Retention(7)"} {
		if got := r.String(); got != want {
			t.Errorf("%d: %q, want %q", r, got, want)
		}
	}
}

func TestDemoteMovesOnlyFreeBlocksStillHoldingTheirPrefix(t *testing.T) {
	// Freed 1..4 in LRU order. Demote 3 and 4, but 4 is held again and
	// the hash recorded for 2 is stale: only 3 moves to the cold segment.
	m := hintedPool(t, 4, nil)
	id := func(h uint64) int32 { b, _ := m.Lookup(h); return b }
	held := m.MatchPrefix([]uint64{4})
	m.Demote([]int32{id(2), id(3), held[0]}, []uint64{99, 3, 4})
	if err := m.Check([][]int32{held}); err != nil {
		t.Fatal(err)
	}
	if got := m.ColdBlocks(); got != 1 {
		t.Fatalf("cold segment holds %d blocks, want 1", got)
	}
	m.Release(held)
	if got, want := evictedOrder(t, m, 4), []uint64{3, 1, 2, 4}; !equalHashes(got, want) {
		t.Errorf("evicted %v, want %v", got, want)
	}
}

// watchPolicy watches every finished call's context and names every
// program it watches cold at the next iteration.
type watchPolicy struct {
	hookPolicy
	watching []string
	named    [][]string
}

func (p *watchPolicy) Retain(_ *View, s *Sequence) Retention {
	p.watching = append(p.watching, s.Program())
	return RetainWatch
}

func (p *watchPolicy) Cold(*View) []string {
	cold := p.watching
	p.watching = nil
	if cold != nil {
		p.named = append(p.named, cold)
	}
	return cold
}

// The engine keeps a watched context's blocks under its program and moves
// them to the cold segment when the policy names the program; a context
// whose program was never named stays in LRU order.
func TestWatchedContextGoesColdWhenNamed(t *testing.T) {
	p := &watchPolicy{hookPolicy: hookPolicy{traits: Traits{PrefixCache: true}}}
	plans := []plan{{prompt: 17, after: 3}, {prompt: 9, after: 2, at: time.Second}}
	r := runHooks(t, baseConfig(), p, plans)
	if len(p.named) != 1 || len(p.named[0]) != 1 {
		t.Fatalf("named %v, want the first call's program once", p.named)
	}
	// The first call held 17+3-1 = 19 computed tokens: 4 full blocks of 4,
	// moved to the head; the second call's 9-token prompt took 3 of them
	// (the cold segment goes first, even before never-used blocks: the
	// policy names none before the cache evicts).
	if got, ev := r.e.Blocks().ColdBlocks(), r.e.Blocks().Evicted(); got != 1 || ev != 3 {
		t.Errorf("cold segment holds %d blocks and %d were evicted, want 1 and 3 of the first call's 4", got, ev)
	}
	if _, ok := r.e.watched[p.named[0][0]]; ok {
		t.Error("the named program is still watched")
	}
	if len(r.e.watched) != 1 {
		t.Errorf("%d programs watched, want the second call's", len(r.e.watched))
	}
}
