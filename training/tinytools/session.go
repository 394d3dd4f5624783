package tinytools

import (
	"fmt"
)

// Session is incremental inference with a KV cache: Feed appends tokens and
// returns the logits of the last one. It runs the same forward pass as
// training. A Session is not safe for concurrent use; Clone copies it.
type Session struct {
	m     *model
	wt    *transposed
	cache pastKV
	seg   segment
	logit []float32
}

// Model is a loaded model ready for inference.
type Model struct {
	m  *model
	wt *transposed
}

// NewModel prepares weights for inference.
func NewModel(w *Weights) *Model {
	m := newModel(w)
	return &Model{m: m, wt: w.transposed(nil)}
}

// Config returns the model's shape.
func (m *Model) Config() Config { return m.m.w.Cfg }

// NewSession returns an empty session.
func (m *Model) NewSession() *Session {
	c := m.m.w.Cfg
	s := &Session{m: m.m, wt: m.wt, cache: pastKV{k: make([][]float32, c.Layers), v: make([][]float32, c.Layers)}}
	return s
}

// Len is the number of tokens in the cache.
func (s *Session) Len() int { return s.cache.P }

// Clone returns an independent copy of the session.
func (s *Session) Clone() *Session {
	c := s.m.w.Cfg
	n := s.cache.P * c.KVDim()
	out := &Session{m: s.m, wt: s.wt, cache: pastKV{P: s.cache.P, k: make([][]float32, c.Layers), v: make([][]float32, c.Layers)}}
	for l := range c.Layers {
		out.cache.k[l] = append(make([]float32, 0, n+64*c.KVDim()), s.cache.k[l][:n]...)
		out.cache.v[l] = append(make([]float32, 0, n+64*c.KVDim()), s.cache.v[l][:n]...)
	}
	return out
}

// Feed runs tokens through the model after the cached ones and returns the
// logits of the last token (valid until the next call). With all, it
// returns the logits of every fed token, row-major.
func (s *Session) Feed(tokens []int32, all bool) ([]float32, error) {
	c := s.m.w.Cfg
	if len(tokens) == 0 {
		return nil, fmt.Errorf("tinytools: no tokens to feed")
	}
	if s.cache.P+len(tokens) > c.MaxPos {
		return nil, fmt.Errorf("tinytools: context of %d tokens exceeds max_position_embeddings %d", s.cache.P+len(tokens), c.MaxPos)
	}
	for _, t := range tokens {
		if t < 0 || int(t) >= c.Vocab {
			return nil, fmt.Errorf("tinytools: token %d out of vocabulary", t)
		}
	}
	var past *pastKV
	if s.cache.P > 0 {
		past = &s.cache
	}
	s.m.forward(&s.seg, tokens, s.cache.P, past, len(tokens) > 64)
	kvd := c.KVDim()
	for l := range c.Layers {
		s.cache.k[l] = append(s.cache.k[l][:s.cache.P*kvd], s.seg.layers[l].k...)
		s.cache.v[l] = append(s.cache.v[l][:s.cache.P*kvd], s.seg.layers[l].v...)
	}
	s.cache.P += len(tokens)
	d, V := c.Dim, c.Vocab
	rows, first := 1, len(tokens)-1
	if all {
		rows, first = len(tokens), 0
	}
	logit := grow(&s.logit, rows*V)
	gemm(s.m.mm1, rows, d, V, s.seg.hF[first*d:], d, s.wt.embedT, V, logit, V)
	return logit, nil
}

// argmax returns the index of the largest value (the first on ties).
func argmax(x []float32) int32 {
	best := 0
	for i, v := range x {
		if v > x[best] {
			best = i
		}
	}
	return int32(best)
}

// Generate decodes greedily from logits (of the last fed token) until a stop
// token or maxTokens, feeding each chosen token. The stop token is fed and
// returned too, as a server keeps it in the context.
func (s *Session) Generate(logits []float32, stop map[int32]bool, maxTokens int) ([]int32, error) {
	var out []int32
	for len(out) < maxTokens {
		t := argmax(logits)
		out = append(out, t)
		var err error
		logits, err = s.Feed([]int32{t}, false)
		if err != nil {
			return out, err
		}
		if stop[t] {
			break
		}
	}
	return out, nil
}
