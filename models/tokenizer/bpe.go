package tokenizer

import "sync"

// merge is one BPE merge rule: the pair's rank and the token it makes.
type merge struct {
	rank int32
	id   int32
}

func pairKey(a, b int32) uint64 { return uint64(uint32(a))<<32 | uint64(uint32(b)) }

// bpeCacheMax bounds the per-tokenizer cache of encoded pre-tokens.
const (
	bpeCacheMax      = 1 << 16
	bpeCacheMaxBytes = 64 // longer pieces are not cached
)

type bpeCache struct {
	mu sync.RWMutex
	m  map[string][]int32
}

func (c *bpeCache) get(k string) ([]int32, bool) {
	c.mu.RLock()
	v, ok := c.m[k]
	c.mu.RUnlock()
	return v, ok
}

func (c *bpeCache) put(k string, v []int32) {
	c.mu.Lock()
	if c.m == nil || len(c.m) >= bpeCacheMax {
		c.m = make(map[string][]int32, 1024)
	}
	c.m[k] = v
	c.mu.Unlock()
}

// mergeItem is a candidate merge of the symbol at pos with its right
// neighbour. Lower rank first, then leftmost, as Hugging Face's BPE does.
type mergeItem struct {
	rank, pos, id int32
}

func (a mergeItem) less(b mergeItem) bool {
	if a.rank != b.rank {
		return a.rank < b.rank
	}
	return a.pos < b.pos
}

type mergeHeap []mergeItem

func (h *mergeHeap) push(x mergeItem) {
	*h = append(*h, x)
	s := *h
	i := len(s) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !s[i].less(s[p]) {
			break
		}
		s[i], s[p] = s[p], s[i]
		i = p
	}
}

func (h *mergeHeap) pop() mergeItem {
	s := *h
	top := s[0]
	n := len(s) - 1
	s[0] = s[n]
	s = s[:n]
	i := 0
	for {
		l, r, m := 2*i+1, 2*i+2, i
		if l < n && s[l].less(s[m]) {
			m = l
		}
		if r < n && s[r].less(s[m]) {
			m = r
		}
		if m == i {
			break
		}
		s[i], s[m] = s[m], s[i]
		i = m
	}
	*h = s
	return top
}

// bpe appends the ids of one pre-token (raw bytes) to out.
func (t *Tokenizer) bpe(piece string, out []int32) []int32 {
	if piece == "" {
		return out
	}
	if t.ignoreMerges {
		vocab := t.rawVocab
		if t.pieces {
			vocab = t.vocab
		}
		if id, ok := vocab[piece]; ok {
			return append(out, id)
		}
	}
	cacheable := len(piece) <= bpeCacheMaxBytes
	if cacheable {
		if ids, ok := t.cache.get(piece); ok {
			return append(out, ids...)
		}
	}
	var ids []int32
	if t.pieces {
		ids = t.mergePieces(piece)
	} else {
		ids = t.mergeWord(piece)
	}
	if cacheable {
		t.cache.put(piece, ids)
	}
	return append(out, ids...)
}

// mergeWord is byte-level BPE: one symbol per byte, then the merges.
func (t *Tokenizer) mergeWord(piece string) []int32 {
	n := len(piece)
	ids := make([]int32, 0, n)
	for i := 0; i < n; i++ {
		id := t.byteID[piece[i]]
		if id < 0 {
			// A byte the vocabulary lacks: the unknown token if there is one
			// (fused when fuse_unk), else dropped, as Hugging Face does.
			if t.unkID < 0 || (t.fuseUnk && len(ids) > 0 && ids[len(ids)-1] == t.unkID) {
				continue
			}
			id = t.unkID
		}
		ids = append(ids, id)
	}
	return t.applyMerges(ids)
}

// applyMerges merges adjacent symbols by rank, lowest first, then leftmost.
func (t *Tokenizer) applyMerges(ids []int32) []int32 {
	n := len(ids)
	if n < 2 {
		return ids
	}
	prev := make([]int32, n)
	next := make([]int32, n)
	dead := make([]bool, n)
	h := make(mergeHeap, 0, n)
	for i := 0; i < n; i++ {
		prev[i] = int32(i - 1)
		next[i] = int32(i + 1)
		if i+1 < n {
			if m, ok := t.merges[pairKey(ids[i], ids[i+1])]; ok {
				h.push(mergeItem{m.rank, int32(i), m.id})
			}
		}
	}
	next[n-1] = -1
	for len(h) > 0 {
		top := h.pop()
		p := top.pos
		if dead[p] {
			continue
		}
		nx := next[p]
		if nx < 0 {
			continue
		}
		if m, ok := t.merges[pairKey(ids[p], ids[nx])]; !ok || m.id != top.id {
			continue // stale entry
		}
		ids[p] = top.id
		dead[nx] = true
		next[p] = next[nx]
		if next[nx] >= 0 {
			prev[next[nx]] = p
		}
		if q := prev[p]; q >= 0 {
			if m, ok := t.merges[pairKey(ids[q], ids[p])]; ok {
				h.push(mergeItem{m.rank, q, m.id})
			}
		}
		if r := next[p]; r >= 0 {
			if m, ok := t.merges[pairKey(ids[p], ids[r])]; ok {
				h.push(mergeItem{m.rank, p, m.id})
			}
		}
	}
	out := make([]int32, 0, n)
	for i := int32(0); i >= 0; i = next[i] {
		out = append(out, ids[i])
	}
	return out
}
