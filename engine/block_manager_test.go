package engine

import (
	"math/rand/v2"
	"testing"

	"github.com/pitstop-llm/pitstop/kvswap"
)

// bmModel drives a BlockManager and a host tier with random operations the
// way the engine does, keeping its own copy of who holds what.
type bmModel struct {
	t      testing.TB
	bm     *BlockManager
	host   *kvswap.HostTier
	seqs   []*bmSeq
	nextTk int32
	hinted bool // finishes with an odd argument release as RetainLow
}

type bmSeq struct {
	tokens []int32
	hashes []uint64
	blocks []int32
	host   []int
	done   int // tokens whose KV exists
}

func (m *bmModel) hashes(s *bmSeq) []uint64 {
	bs := m.bm.BlockSize()
	for i := len(s.hashes); i < len(s.tokens)/bs; i++ {
		var p uint64
		if i > 0 {
			p = s.hashes[i-1]
		}
		s.hashes = append(s.hashes, hashBlock(p, s.tokens[i*bs:(i+1)*bs]))
	}
	return s.hashes
}

func (m *bmModel) commit(s *bmSeq) {
	h := m.hashes(s)
	for j := 0; j < s.done/m.bm.BlockSize() && j < len(s.blocks); j++ {
		m.bm.Commit(s.blocks[j], h[j])
	}
}

// op applies one operation chosen by code; it never breaks invariants when
// the manager is correct.
func (m *bmModel) op(code byte, arg byte) {
	bs := m.bm.BlockSize()
	switch code % 7 {
	case 0: // allocate a new sequence, maybe sharing a prefix with another
		s := &bmSeq{}
		if len(m.seqs) > 0 && arg%2 == 0 {
			src := m.seqs[int(arg)%len(m.seqs)]
			s.tokens = append(s.tokens, src.tokens[:len(src.tokens)*int(arg%4)/4]...)
		}
		for range int(arg%40) + 1 {
			m.nextTk++
			s.tokens = append(s.tokens, m.nextTk)
		}
		h := m.hashes(s)
		s.blocks = m.bm.MatchPrefix(h[:min(len(h), (len(s.tokens)-1)/bs)])
		s.done = len(s.blocks) * bs
		if !m.bm.Grow(&s.blocks, len(s.tokens)) {
			m.bm.Release(s.blocks)
			return
		}
		s.done = len(s.tokens)
		m.commit(s)
		m.seqs = append(m.seqs, s)
	case 1: // append tokens (decode)
		if s := m.pick(arg); s != nil && len(s.blocks) > 0 {
			for range int(arg%20) + 1 {
				m.nextTk++
				s.tokens = append(s.tokens, m.nextTk)
			}
			if m.bm.Grow(&s.blocks, len(s.tokens)) {
				s.done = len(s.tokens)
				m.commit(s)
			} else {
				s.tokens = s.tokens[:s.done]
				s.hashes = s.hashes[:min(len(s.hashes), s.done/bs)]
			}
		}
	case 2: // free (finish)
		if len(m.seqs) > 0 {
			i := int(arg) % len(m.seqs)
			s := m.seqs[i]
			r := RetainLRU
			if m.hinted && arg&1 == 1 {
				r = RetainLow
			}
			m.bm.ReleaseAs(s.blocks, r)
			if len(s.host) > 0 {
				m.host.Free(s.host)
			}
			m.seqs = append(m.seqs[:i], m.seqs[i+1:]...)
		}
	case 3: // swap out
		if s := m.pick(arg); s != nil && len(s.blocks) > 0 {
			slots, ok := m.host.Alloc(len(s.blocks))
			if !ok {
				m.bm.Release(s.blocks) // host full: discard
				s.blocks, s.done = nil, 0
				return
			}
			m.bm.Release(s.blocks)
			s.blocks, s.host = nil, slots
		}
	case 4: // swap in, reusing cached blocks
		if s := m.pick(arg); s != nil && len(s.host) > 0 {
			h := m.hashes(s)
			cached := func(j int) (int32, bool) {
				if j < len(h) && (j+1)*bs <= s.done {
					return m.bm.Lookup(h[j])
				}
				return 0, false
			}
			need := 0
			for j := range s.host {
				if id, hit := cached(j); !hit || m.bm.Unused(id) {
					need++
				}
			}
			if !m.bm.CanGrow(need, 0) {
				return
			}
			// Take every hit before allocating, so no allocation evicts a block about to be hit.
			table := make([]int32, len(s.host))
			for j := range s.host {
				table[j] = -1
				if id, hit := cached(j); hit {
					m.bm.Acquire(id)
					table[j] = id
				}
			}
			for j := range table {
				if table[j] < 0 {
					table[j] = m.bm.Allocate()
				}
			}
			m.host.Free(s.host)
			s.host, s.blocks = nil, table
			m.commit(s)
		}
	case 5: // discard
		if s := m.pick(arg); s != nil {
			m.bm.Release(s.blocks)
			if len(s.host) > 0 {
				m.host.Free(s.host)
			}
			s.blocks, s.host, s.done = nil, nil, 0
		}
	case 6: // recompute a discarded sequence through the prefix cache
		if s := m.pick(arg); s != nil && len(s.blocks) == 0 && len(s.host) == 0 {
			h := m.hashes(s)
			s.blocks = m.bm.MatchPrefix(h[:min(len(h), (len(s.tokens)-1)/bs)])
			if !m.bm.Grow(&s.blocks, len(s.tokens)) {
				m.bm.Release(s.blocks)
				s.blocks = nil
				return
			}
			s.done = len(s.tokens)
			m.commit(s)
		}
	}
}

func (m *bmModel) pick(arg byte) *bmSeq {
	if len(m.seqs) == 0 {
		return nil
	}
	return m.seqs[int(arg)%len(m.seqs)]
}

func (m *bmModel) check() {
	m.t.Helper()
	tables := make([][]int32, len(m.seqs))
	hostUsed := 0
	for i, s := range m.seqs {
		tables[i] = s.blocks
		hostUsed += len(s.host)
	}
	if err := m.bm.Check(tables); err != nil {
		m.t.Fatal(err)
	}
	if hostUsed != m.host.Used() {
		m.t.Fatalf("host tier: %d used, sequences hold %d", m.host.Used(), hostUsed)
	}
}

func (m *bmModel) drain() {
	for len(m.seqs) > 0 {
		m.op(2, 0)
	}
	m.check()
	if m.bm.UsedBlocks() != 0 || m.host.Used() != 0 {
		m.t.Fatalf("after freeing everything: %d device blocks and %d host slots still used", m.bm.UsedBlocks(), m.host.Used())
	}
}

func runOps(t testing.TB, prefix bool, ops []byte) {
	runOpsWith(t, prefix, CacheLRU, ops)
}

// runOpsWith is runOps with the prefix cache's eviction order ev.
func runOpsWith(t testing.TB, prefix bool, ev CacheEviction, ops []byte) {
	runOpsHinted(t, prefix, ev, false, ops)
}

// runOpsHinted is runOpsWith where, when hinted, half the finishes release
// their blocks as RetainLow (cache_hint.go).
func runOpsHinted(t testing.TB, prefix bool, ev CacheEviction, hinted bool, ops []byte) {
	m := &bmModel{t: t, bm: NewBlockManager(24, 4, prefix), host: kvswap.NewHostTier(16, 1, false), hinted: hinted}
	m.bm.SetEviction(ev)
	for i := 0; i+1 < len(ops); i += 2 {
		m.op(ops[i], ops[i+1])
		m.check()
	}
	m.drain()
}

func TestBlockManagerRandomOps(t *testing.T) {
	for seed := range uint64(200) {
		r := rand.New(rand.NewPCG(seed, 7))
		ops := make([]byte, 400)
		for i := range ops {
			ops[i] = byte(r.UintN(256))
		}
		ev := CacheLRU
		if seed%4 == 0 {
			ev = CacheSecondChance
		}
		runOpsHinted(t, seed%2 == 0, ev, seed%3 == 0, ops)
	}
}

func FuzzBlockManager(f *testing.F) {
	f.Add(true, []byte{0, 10, 0, 2, 1, 5, 3, 0, 4, 0, 6, 1, 2, 0})
	f.Add(false, []byte{0, 39, 0, 39, 0, 39, 3, 1, 3, 2, 4, 1, 5, 0, 6, 0})
	f.Add(true, []byte{0, 8, 0, 8, 0, 8, 0, 8, 2, 1, 0, 2, 5, 3, 6, 3, 4, 4})
	f.Fuzz(func(t *testing.T, prefix bool, ops []byte) {
		if len(ops) > 2000 {
			ops = ops[:2000]
		}
		runOps(t, prefix, ops)
	})
}

func TestPrefixCacheReuse(t *testing.T) {
	bm := NewBlockManager(8, 4, true)
	s := &Sequence{tokens: []int32{1, 2, 3, 4, 5, 6, 7, 8, 9}}
	h := s.blockHashes(4)
	var table []int32
	if !bm.Grow(&table, 9) {
		t.Fatal("grow failed")
	}
	bm.Commit(table[0], h[0])
	bm.Commit(table[1], h[1])
	bm.Release(table)
	if got := bm.FreeBlocks(); got != 8 {
		t.Fatalf("free = %d, want 8", got)
	}
	hit := bm.MatchPrefix(h)
	if len(hit) != 2 || hit[0] != table[0] || hit[1] != table[1] {
		t.Fatalf("prefix hit = %v, want the two committed blocks %v", hit, table[:2])
	}
	// A different first block breaks the chain even if the second matches.
	o := &Sequence{tokens: []int32{9, 2, 3, 4, 5, 6, 7, 8}}
	if got := bm.MatchPrefix(o.blockHashes(4)); len(got) != 0 {
		t.Fatalf("unrelated prefix hit %v", got)
	}
	if err := bm.Check([][]int32{hit}); err != nil {
		t.Fatal(err)
	}
}
