package tokenizer

import (
	"container/heap"
	"encoding/json"
	"fmt"
)

// TrainOptions configures TrainWithOptions.
type TrainOptions struct {
	// VocabSize is the largest vocabulary to build, specials and the 256
	// byte symbols included. Training stops earlier when no pair is left
	// that occurs MinFrequency times.
	VocabSize int
	// Specials become added special tokens with ids 0, 1, ...; in the
	// corpus they are split out and never merged.
	Specials []string
	// Pattern is the pre-tokenizer split (default PatternLlama3).
	Pattern string
	// MinFrequency is the least count of a pair worth a merge (default 2).
	MinFrequency int
}

// Train builds a byte-level BPE tokenizer from corpus with at most vocabSize
// tokens (specials and the 256 byte symbols included), using the Llama 3
// pre-tokenizer split. specials get ids 0, 1, ... in order.
func Train(corpus []string, vocabSize int, specials []string) (*Tokenizer, error) {
	return TrainWithOptions(corpus, TrainOptions{VocabSize: vocabSize, Specials: specials})
}

type trainWord struct {
	syms  []int32
	count int64
}

type pairEntry struct {
	count int64
	key   uint64
}

type pairHeap struct {
	items []pairEntry
	toks  []string
}

func (h *pairHeap) Len() int { return len(h.items) }
func (h *pairHeap) Less(i, j int) bool {
	a, b := h.items[i], h.items[j]
	if a.count != b.count {
		return a.count > b.count
	}
	la, lb := h.toks[int32(a.key>>32)], h.toks[int32(b.key>>32)]
	if la != lb {
		return la < lb
	}
	return h.toks[int32(uint32(a.key))] < h.toks[int32(uint32(b.key))]
}
func (h *pairHeap) Swap(i, j int) { h.items[i], h.items[j] = h.items[j], h.items[i] }
func (h *pairHeap) Push(x any)    { h.items = append(h.items, x.(pairEntry)) }
func (h *pairHeap) Pop() any {
	x := h.items[len(h.items)-1]
	h.items = h.items[:len(h.items)-1]
	return x
}

// TrainWithOptions is Train with every knob.
func TrainWithOptions(corpus []string, opts TrainOptions) (*Tokenizer, error) {
	if opts.Pattern == "" {
		opts.Pattern = PatternLlama3
	}
	if opts.MinFrequency <= 0 {
		opts.MinFrequency = 2
	}
	if opts.VocabSize < len(opts.Specials)+256 {
		return nil, fmt.Errorf("tokenizer: train: vocab size %d is smaller than the %d specials plus 256 byte symbols", opts.VocabSize, len(opts.Specials))
	}
	m, err := compilePattern(opts.Pattern)
	if err != nil {
		return nil, fmt.Errorf("tokenizer: train: %w", err)
	}
	steps := []preStep{splitStep{m: m, behavior: "Isolated"}, byteLevelStep{}}

	vocab := map[string]int32{}
	var toks []string
	var added []AddedToken
	for _, s := range opts.Specials {
		if s == "" {
			return nil, fmt.Errorf("tokenizer: train: empty special token")
		}
		if _, dup := vocab[s]; dup {
			return nil, fmt.Errorf("tokenizer: train: special token %q given twice", s)
		}
		id := int32(len(toks))
		vocab[s] = id
		toks = append(toks, s)
		added = append(added, AddedToken{ID: id, Content: s, Special: true})
	}
	var byteSym [256]int32
	for b := 0; b < 256; b++ {
		s := string(byteToRune[b])
		if id, ok := vocab[s]; ok { // a special spelled like a byte symbol
			byteSym[b] = id
			continue
		}
		byteSym[b] = int32(len(toks))
		vocab[s] = byteSym[b]
		toks = append(toks, s)
	}

	// Count pre-tokens.
	splitter := newAddedMatcher(added, true)
	counts := map[string]int64{}
	for _, doc := range corpus {
		for _, seg := range splitter.split(doc) {
			if seg.id >= 0 {
				continue
			}
			pieces := []string{seg.text}
			for _, st := range steps {
				pieces = st.split(pieces)
			}
			for _, p := range pieces {
				counts[p]++
			}
		}
	}
	words := make([]trainWord, 0, len(counts))
	for p, c := range counts {
		syms := make([]int32, len(p))
		for i := 0; i < len(p); i++ {
			syms[i] = byteSym[p[i]]
		}
		words = append(words, trainWord{syms, c})
	}

	pairCount := map[uint64]int64{}
	pairWords := map[uint64][]int32{}
	for wi, w := range words {
		for i := 0; i+1 < len(w.syms); i++ {
			k := pairKey(w.syms[i], w.syms[i+1])
			pairCount[k] += w.count
			pairWords[k] = append(pairWords[k], int32(wi))
		}
	}
	h := &pairHeap{toks: toks}
	for k, c := range pairCount {
		h.items = append(h.items, pairEntry{c, k})
	}
	heap.Init(h)

	var merges [][2]string
	stamp := make([]int, len(words))
	round := 0
	for len(toks) < opts.VocabSize && h.Len() > 0 {
		top := heap.Pop(h).(pairEntry)
		if pairCount[top.key] != top.count {
			continue // stale
		}
		if top.count < int64(opts.MinFrequency) {
			break
		}
		a, b := int32(top.key>>32), int32(uint32(top.key))
		newTok := toks[a] + toks[b]
		c, exists := vocab[newTok]
		if !exists {
			c = int32(len(toks))
			vocab[newTok] = c
			toks = append(toks, newTok)
			h.toks = toks
		}
		merges = append(merges, [2]string{toks[a], toks[b]})
		round++
		changed := map[uint64]struct{}{}
		for _, wi := range pairWords[top.key] {
			if stamp[wi] == round {
				continue
			}
			stamp[wi] = round
			w := &words[wi]
			merged := make([]int32, 0, len(w.syms))
			hit := false
			for i := 0; i < len(w.syms); i++ {
				if i+1 < len(w.syms) && w.syms[i] == a && w.syms[i+1] == b {
					merged = append(merged, c)
					i++
					hit = true
					continue
				}
				merged = append(merged, w.syms[i])
			}
			if !hit {
				continue
			}
			for i := 0; i+1 < len(w.syms); i++ {
				k := pairKey(w.syms[i], w.syms[i+1])
				pairCount[k] -= w.count
				changed[k] = struct{}{}
			}
			for i := 0; i+1 < len(merged); i++ {
				k := pairKey(merged[i], merged[i+1])
				pairCount[k] += w.count
				changed[k] = struct{}{}
				if merged[i] == c || merged[i+1] == c {
					pairWords[k] = append(pairWords[k], int32(wi))
				}
			}
			w.syms = merged
		}
		delete(pairWords, top.key)
		for k := range changed {
			if n := pairCount[k]; n > 0 {
				heap.Push(h, pairEntry{n, k})
			} else {
				delete(pairCount, k)
			}
		}
	}

	t, err := build(vocab, merges, added, "")
	if err != nil {
		return nil, fmt.Errorf("tokenizer: train: %w", err)
	}
	t.steps = steps
	pre, _ := json.Marshal(map[string]any{
		"type": "Sequence",
		"pretokenizers": []any{
			map[string]any{"type": "Split", "pattern": map[string]string{"Regex": opts.Pattern}, "behavior": "Isolated", "invert": false},
			map[string]any{"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true, "use_regex": false},
		},
	})
	t.raw = rawSections{
		version:      json.RawMessage(`"1.0"`),
		preTokenizer: pre,
		postProcess:  json.RawMessage(`{"type":"ByteLevel","add_prefix_space":true,"trim_offsets":false,"use_regex":true}`),
		decoder:      json.RawMessage(`{"type":"ByteLevel","add_prefix_space":true,"trim_offsets":true,"use_regex":true}`),
	}
	return t, nil
}
