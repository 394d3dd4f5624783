package engine

import "testing"

// evictionOrder fills a pool of three blocks with the prefixes h1, h2 and
// h3, h1 matched again (and freed) before h2 and h3 are freed, so that h1's
// block is the least recently freed but the only one reused; it then
// allocates three blocks and returns which hash each allocation evicted.
func evictionOrder(t *testing.T, ev CacheEviction) []uint64 {
	t.Helper()
	m := NewBlockManager(3, 16, true)
	m.SetEviction(ev)
	tables := make([][]int32, 3)
	for i := range tables {
		if !m.Grow(&tables[i], 16) {
			t.Fatal("pool too small")
		}
		m.Commit(tables[i][0], uint64(i+1))
	}
	m.Release(tables[0])
	if hit := m.MatchPrefix([]uint64{1}); len(hit) != 1 {
		t.Fatalf("h1 not matched: %v", hit)
	}
	m.Release(tables[0])
	m.Release(tables[1])
	m.Release(tables[2])
	var lost []uint64
	for range 3 {
		var held []int32
		m.Grow(&held, 16)
		for h := uint64(1); h <= 3; h++ {
			if _, ok := m.Lookup(h); !ok && !contains(lost, h) {
				lost = append(lost, h)
			}
		}
		if err := m.Check([][]int32{held}); err != nil {
			t.Fatal(err)
		}
		m.Release(held)
	}
	return lost
}

func contains(xs []uint64, x uint64) bool {
	for _, y := range xs {
		if x == y {
			return true
		}
	}
	return false
}

func TestCacheEvictionLRUEvictsTheLeastRecentlyFreed(t *testing.T) {
	if got, want := evictionOrder(t, CacheLRU), []uint64{1, 2, 3}; !equalHashes(got, want) {
		t.Errorf("lru evicted %v, want %v", got, want)
	}
}

func TestCacheEvictionSecondChanceKeepsAReusedPrefixOnePassLonger(t *testing.T) {
	// h1's block reaches the head marked: it goes to the tail instead,
	// h2 and h3 go first, and h1 (its mark spent) last.
	if got, want := evictionOrder(t, CacheSecondChance), []uint64{2, 3, 1}; !equalHashes(got, want) {
		t.Errorf("second-chance evicted %v, want %v", got, want)
	}
}

func TestCacheEvictionSecondChanceWithoutReuseIsLRU(t *testing.T) {
	// No block matched: the order is the LRU's, block for block.
	run := func(ev CacheEviction) []int32 {
		m := NewBlockManager(4, 16, true)
		m.SetEviction(ev)
		var a, b []int32
		m.Grow(&a, 32)
		m.Grow(&b, 32)
		for i, id := range append(append([]int32{}, a...), b...) {
			m.Commit(id, uint64(10+i))
		}
		m.Release(b)
		m.Release(a)
		var got []int32
		for range 4 {
			got = append(got, m.Allocate())
		}
		return got
	}
	lru, sc := run(CacheLRU), run(CacheSecondChance)
	for i := range lru {
		if lru[i] != sc[i] {
			t.Fatalf("allocation order lru %v, second-chance %v", lru, sc)
		}
	}
}

func equalHashes(a, b []uint64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestParseCacheEviction(t *testing.T) {
	for in, want := range map[string]CacheEviction{"": CacheLRU, "lru": CacheLRU, "second-chance": CacheSecondChance} {
		if got, err := ParseCacheEviction(in); err != nil || got != want {
			t.Errorf("ParseCacheEviction(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := ParseCacheEviction("lfu"); err == nil {
		t.Error("ParseCacheEviction(lfu): no error")
	}
	cfg := Config{NumBlocks: 4, BlockSize: 16, MaxBatchedTokens: 64, MaxSeqs: 4, CacheEviction: "lfu"}
	if err := cfg.validate(); err == nil {
		t.Error("Config with CacheEviction lfu validated")
	}
}
