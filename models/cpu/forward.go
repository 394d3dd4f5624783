package cpu

import (
	"fmt"
	"math"
	"sync"
	"sync/atomic"

	"github.com/pitstop-llm/pitstop/engine"
	"github.com/pitstop-llm/pitstop/models/kernel"
	"github.com/pitstop-llm/pitstop/models/llama"
)

// forward is the batched, paged forward pass and its reusable scratch.
type forward struct {
	m       *llama.Model
	c       *llama.Config
	bs      int
	workers int
	mm      *kernel.Kernels // matrix products, on at most workers goroutines
	inv     []float64
	qkvW    int // width of a qkv row: q + 2·kv
	// KV block layout: [layer][K|V][kv head][token][head dim]
	headStride  int // bs·head_dim
	layerStride int // 2·kv heads·headStride

	// per-step scratch, grown as needed
	tokItem    []int32 // batch item of each token row
	tokPos     []int32 // position of each token row in its sequence
	rows       []int   // token rows to sample: the last of each sampling item
	x, hb      []float32
	qkv        []float32
	att        []float32
	gu, act    []float32
	cos        []float64 // [T × head_dim/2]
	sin        []float64
	fin        []float32
	logits     []float32
	scores     [][]float32 // per worker, [max context]
	its        []item
	unitRows   []int32   // token rows attended row by row
	kbuf, vbuf []float32 // gathered K and V of one kv head (chunk attention)
	sbuf       []float32 // scores of one head (chunk attention)
}

func (f *forward) init(m *llama.Model, bs, workers int) {
	f.m, f.c, f.bs, f.workers = m, &m.Config, bs, workers
	f.mm = kernel.New(workers)
	f.inv = f.c.InvFreq()
	f.qkvW = f.c.QDim() + 2*f.c.KVDim()
	f.headStride = bs * f.c.HeadDim
	f.layerStride = 2 * f.c.NumKVHeads * f.headStride
	f.scores = make([][]float32, workers)
}

func grow[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n, n+n/4)
	}
	return s[:n]
}

// item is one batch item as the forward pass sees it.
type item struct {
	seq    *engine.Sequence // nil in unit tests
	id     uint64           // for errors
	tokens []int32          // the sequence's tokens, at least start+n
	blocks []int32          // its block table
	start  int
	n      int
	sample bool
	samp   engine.Sampling
	token  int32 // sampled
}

// items converts an engine batch.
func (f *forward) items(b *engine.Batch) ([]item, error) {
	f.its = f.its[:0]
	for i := range b.Items {
		it := &b.Items[i]
		if it.Seq == nil {
			return nil, fmt.Errorf("cpu: batch item %d has no sequence", i)
		}
		f.its = append(f.its, item{seq: it.Seq, id: uint64(it.Seq.ID()), tokens: it.Seq.Tokens(), blocks: it.Seq.Blocks(),
			start: it.Start, n: it.Len, sample: it.Sample, samp: it.Sampling})
	}
	return f.its, nil
}

// prepare validates the items and lays out their token rows.
func (f *forward) prepare(x *Executor, items []item) (tokens, maxCtx int, err error) {
	for i := range items {
		it := &items[i]
		if it.n <= 0 || it.start < 0 {
			return 0, 0, fmt.Errorf("cpu: sequence %d: bad batch item (start %d, len %d)", it.id, it.start, it.n)
		}
		end := it.start + it.n
		if end > len(it.tokens) {
			return 0, 0, fmt.Errorf("cpu: sequence %d: batch asks for tokens [%d, %d), it has %d", it.id, it.start, end, len(it.tokens))
		}
		need := (end + f.bs - 1) / f.bs
		if len(it.blocks) < need {
			return 0, 0, fmt.Errorf("cpu: sequence %d: %d tokens need %d KV blocks, its block table has %d", it.id, end, need, len(it.blocks))
		}
		for _, id := range it.blocks[:need] {
			if id < 0 || int(id) >= len(x.kv) {
				return 0, 0, fmt.Errorf("cpu: sequence %d: block %d out of range (%d blocks)", it.id, id, len(x.kv))
			}
		}
		tokens += it.n
		maxCtx = max(maxCtx, end)
	}
	f.tokItem = grow(f.tokItem, tokens)
	f.tokPos = grow(f.tokPos, tokens)
	f.rows = f.rows[:0]
	t := 0
	for i := range items {
		it := &items[i]
		for p := it.start; p < it.start+it.n; p++ {
			f.tokItem[t], f.tokPos[t] = int32(i), int32(p)
			t++
		}
		if it.sample {
			f.rows = append(f.rows, t-1)
		}
	}
	return tokens, maxCtx, nil
}

// run computes the items' KV and samples their tokens.
func (f *forward) run(x *Executor, items []item) error {
	T, maxCtx, err := f.prepare(x, items)
	if err != nil {
		return err
	}
	c := f.c
	H, Q, KV, I, hd := c.HiddenSize, c.QDim(), c.KVDim(), c.IntermediateSize, c.HeadDim
	half := hd / 2
	f.x = grow(f.x, T*H)
	f.hb = grow(f.hb, T*H)
	f.qkv = grow(f.qkv, T*f.qkvW)
	f.att = grow(f.att, T*Q)
	f.gu = grow(f.gu, T*2*I)
	f.act = grow(f.act, T*I)
	f.cos = grow(f.cos, T*half)
	f.sin = grow(f.sin, T*half)
	for w := range f.scores {
		f.scores[w] = grow(f.scores[w], maxCtx*(c.NumHeads/c.NumKVHeads))
	}

	// Embeddings and the rotation angles of every token row.
	t := 0
	for i := range items {
		it := &items[i]
		for _, tok := range it.tokens[it.start : it.start+it.n] {
			id := int(tok)
			if id < 0 || id >= c.VocabSize {
				if !x.opt.WrapTokens {
					return fmt.Errorf("cpu: sequence %d: token %d is outside the vocabulary (%d)", it.id, tok, c.VocabSize)
				}
				id = ((id % c.VocabSize) + c.VocabSize) % c.VocabSize
			}
			copy(f.x[t*H:(t+1)*H], f.m.Embed[id*H:(id+1)*H])
			pos := float64(f.tokPos[t])
			for j := range half {
				f.sin[t*half+j], f.cos[t*half+j] = math.Sincos(pos * f.inv[j])
			}
			t++
		}
	}

	for li := range f.m.Layers {
		l := &f.m.Layers[li]
		for t := range T {
			rmsNorm(f.hb[t*H:(t+1)*H], f.x[t*H:(t+1)*H], l.AttnNorm, c.RMSNormEps)
		}
		f.matmulW(T, f.qkvW, H, f.hb, l.WQKV, l.Quant.WQKV, 0, f.qkv)
		for t := range T {
			row := f.qkv[t*f.qkvW : (t+1)*f.qkvW]
			if l.BQKV != nil {
				for j, v := range l.BQKV {
					row[j] += v
				}
			}
			cs, sn := f.cos[t*half:(t+1)*half], f.sin[t*half:(t+1)*half]
			for h := range c.NumHeads + c.NumKVHeads { // q heads, then k heads
				rope(row[h*hd:(h+1)*hd], cs, sn)
			}
			f.storeKV(x, items, li, t, row[Q:Q+KV], row[Q+KV:])
		}
		f.attention(x, items, li, T)
		f.matmulW(T, H, Q, f.att, l.WO, l.Quant.WO, 1, f.x) // x += attn·Woᵀ
		if l.BO != nil {
			for t := range T {
				addTo(f.x[t*H:(t+1)*H], l.BO)
			}
		}
		for t := range T {
			rmsNorm(f.hb[t*H:(t+1)*H], f.x[t*H:(t+1)*H], l.MLPNorm, c.RMSNormEps)
		}
		f.matmulW(T, 2*I, H, f.hb, l.WGateUp, l.Quant.WGateUp, 0, f.gu)
		for t := range T {
			g, u, a := f.gu[t*2*I:t*2*I+I], f.gu[t*2*I+I:(t+1)*2*I], f.act[t*I:(t+1)*I]
			for j := range a {
				gj := float64(g[j])
				a[j] = float32(gj / (1 + math.Exp(-gj)) * float64(u[j]))
			}
		}
		f.matmulW(T, H, I, f.act, l.WDown, l.Quant.WDown, 1, f.x) // x += act·Wdownᵀ
	}

	// Logits of the sampled rows only.
	S := len(f.rows)
	if S == 0 {
		return nil
	}
	f.fin = grow(f.fin, S*H)
	for r, t := range f.rows {
		rmsNorm(f.fin[r*H:(r+1)*H], f.x[t*H:(t+1)*H], f.m.Norm, c.RMSNormEps)
	}
	V := c.VocabSize
	f.logits = grow(f.logits, S*V)
	f.matmulW(S, V, H, f.fin, f.m.LMHead, f.m.QLMHead, 0, f.logits)
	r := 0
	for i := range items {
		it := &items[i]
		if !it.sample {
			continue
		}
		logits := f.logits[r*V : (r+1)*V]
		r++
		pos := it.start + it.n // the position of the token drawn
		if x.opt.OnLogits != nil && it.seq != nil {
			x.opt.OnLogits(it.seq, pos, logits)
		}
		if x.onLogits != nil {
			x.onLogits(it, pos, logits)
		}
		if it.samp.Temperature > 0 {
			x.pcg.Seed(it.samp.Seed, uint64(pos))
		}
		it.token = x.samp.sample(logits, it.samp, x.rng)
	}
	return nil
}

// storeKV writes token row t's K and V into its sequence's block for its
// position.
func (f *forward) storeKV(x *Executor, items []item, layer, t int, k, v []float32) {
	hd := f.c.HeadDim
	pos := int(f.tokPos[t])
	blk := x.kv[items[f.tokItem[t]].blocks[pos/f.bs]]
	base := layer*f.layerStride + (pos%f.bs)*hd
	vbase := base + f.c.NumKVHeads*f.headStride
	for g := range f.c.NumKVHeads {
		copy(blk[base+g*f.headStride:base+g*f.headStride+hd], k[g*hd:(g+1)*hd])
		copy(blk[vbase+g*f.headStride:vbase+g*f.headStride+hd], v[g*hd:(g+1)*hd])
	}
}

// prefillGEMM is the chunk length from which an item's attention runs as
// GEMMs over its gathered K and V instead of row by row.
const prefillGEMM = 16

// attention computes f.att for every token row and query head, reading K and
// V from the blocks in place. Prefill chunks of at least prefillGEMM tokens
// run as GEMMs, one item at a time (each GEMM is parallel inside); the other
// rows (decodes, short chunks) are work units of (token row, kv head) shared
// out to the workers through an atomic counter.
func (f *forward) attention(x *Executor, items []item, layer, T int) {
	f.unitRows = f.unitRows[:0]
	t0 := 0
	for i := range items {
		it := &items[i]
		if it.n >= prefillGEMM {
			f.attendChunk(x, it, layer, t0)
		} else {
			for t := t0; t < t0+it.n; t++ {
				f.unitRows = append(f.unitRows, int32(t))
			}
		}
		t0 += it.n
	}
	kvh := f.c.NumKVHeads
	units := len(f.unitRows) * kvh
	workers := min(f.workers, units)
	if workers <= 1 {
		for u := range units {
			f.attendUnit(x, items, layer, int(f.unitRows[u/kvh]), u%kvh, f.scores[0])
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			scores := f.scores[w]
			for {
				u := int(next.Add(1) - 1)
				if u >= units {
					return
				}
				f.attendUnit(x, items, layer, int(f.unitRows[u/kvh]), u%kvh, scores)
			}
		})
	}
	wg.Wait()
}

// attendChunk is causal attention of a prefill chunk (token rows t0..t0+n-1)
// as GEMMs: per kv head, gather its K and V rows of the attended positions,
// then per query head S = Q·Kᵀ·scale, a masked softmax per row, O = S·V.
func (f *forward) attendChunk(x *Executor, it *item, layer, t0 int) {
	c := f.c
	hd, bs, L := c.HeadDim, f.bs, it.n
	group := c.NumHeads / c.NumKVHeads
	end := it.start + L
	c0 := 0 // first attended position of any row
	if c.SlidingWindow > 0 {
		c0 = max(0, it.start-c.SlidingWindow+1)
	}
	C := end - c0
	f.kbuf = grow(f.kbuf, C*hd)
	f.vbuf = grow(f.vbuf, C*hd)
	f.sbuf = grow(f.sbuf, L*C)
	scale := float32(1 / math.Sqrt(float64(hd)))
	Q := c.QDim()
	for g := range c.NumKVHeads {
		kOff := layer*f.layerStride + g*f.headStride
		vOff := kOff + c.NumKVHeads*f.headStride
		for p := c0; p < end; {
			bi := p / bs
			e := min(end, (bi+1)*bs)
			blk := x.kv[it.blocks[bi]]
			copy(f.kbuf[(p-c0)*hd:(e-c0)*hd], blk[kOff+(p-bi*bs)*hd:kOff+(e-bi*bs)*hd])
			copy(f.vbuf[(p-c0)*hd:(e-c0)*hd], blk[vOff+(p-bi*bs)*hd:vOff+(e-bi*bs)*hd])
			p = e
		}
		for h := g * group; h < (g+1)*group; h++ {
			q := f.qkv[t0*f.qkvW+h*hd:]
			f.mm.Gemm(kernel.NoTrans, kernel.Trans, L, C, hd, scale, q, f.qkvW, f.kbuf, hd, 0, f.sbuf, C)
			for r := range L {
				p := it.start + r
				lo := c0
				if c.SlidingWindow > 0 {
					lo = max(c0, p-c.SlidingWindow+1)
				}
				row := f.sbuf[r*C : (r+1)*C]
				softmaxRange(row, lo-c0, p-c0+1)
			}
			f.mm.Gemm(kernel.NoTrans, kernel.NoTrans, L, hd, C, 1, f.sbuf, C, f.vbuf, hd, 0, f.att[t0*Q+h*hd:], Q)
		}
	}
}

// softmaxRange turns row[lo:hi] into a softmax and zeroes the rest.
func softmaxRange(row []float32, lo, hi int) {
	clear(row[:lo])
	clear(row[hi:])
	s := row[lo:hi]
	mx := s[0]
	for _, v := range s {
		mx = max(mx, v)
	}
	sum := 0.0
	for i, v := range s {
		e := math.Exp(float64(v - mx))
		s[i] = float32(e)
		sum += e
	}
	inv := float32(1 / sum)
	for i := range s {
		s[i] *= inv
	}
}

// attendUnit is causal attention of token row t's query heads of kv head g,
// row by row over the blocks: K rows are read once for all the group's heads.
func (f *forward) attendUnit(x *Executor, items []item, layer, t, g int, scores []float32) {
	c := f.c
	hd, bs := c.HeadDim, f.bs
	group := c.NumHeads / c.NumKVHeads
	it := &items[f.tokItem[t]]
	pos := int(f.tokPos[t])
	lo := 0
	if c.SlidingWindow > 0 {
		lo = max(0, pos-c.SlidingWindow+1)
	}
	n := pos + 1 - lo
	kOff := layer*f.layerStride + g*f.headStride
	vOff := kOff + c.NumKVHeads*f.headStride
	scale := float32(1 / math.Sqrt(float64(hd)))
	Q := c.QDim()
	qs := f.qkv[t*f.qkvW+g*group*hd : t*f.qkvW+(g+1)*group*hd] // the group's query heads, adjacent
	s := scores[:group*n]                                      // [head][position]
	for p := lo; p <= pos; {
		bi := p / bs
		end := min(pos+1, (bi+1)*bs)
		kb := x.kv[it.blocks[bi]][kOff+(p-bi*bs)*hd : kOff+(end-bi*bs)*hd]
		for j := 0; p < end; p, j = p+1, j+hd {
			k := kb[j : j+hd]
			for h := range group {
				s[h*n+p-lo] = f.mm.Dot(qs[h*hd:(h+1)*hd], k) * scale
			}
		}
	}
	for h := range group {
		row := s[h*n : (h+1)*n]
		softmaxRange(row, 0, n)
		clear(f.att[t*Q+(g*group+h)*hd : t*Q+(g*group+h+1)*hd])
	}
	o := f.att[t*Q+g*group*hd : t*Q+(g+1)*group*hd]
	for p := lo; p <= pos; {
		bi := p / bs
		end := min(pos+1, (bi+1)*bs)
		vb := x.kv[it.blocks[bi]][vOff+(p-bi*bs)*hd : vOff+(end-bi*bs)*hd]
		for j := 0; p < end; p, j = p+1, j+hd {
			v := vb[j : j+hd]
			for h := range group {
				f.mm.Axpy(s[h*n+p-lo], v, o[h*hd:(h+1)*hd])
			}
		}
	}
}

// matmulT computes c[m×n] = a[m×k]·wᵀ + beta·c for w of shape [n×k], all
// row-major: activations times HF-layout weights.
func (f *forward) matmulT(m, n, k int, a, w []float32, beta float32, c []float32) {
	f.mm.Gemm(kernel.NoTrans, kernel.Trans, m, n, k, 1, a, k, w, k, beta, c, n)
}

// matmulW is matmulT with a weight that may be quantized (q non-nil, w
// nil): a GGUF model's projections.
func (f *forward) matmulW(m, n, k int, a, w []float32, q *kernel.QMatrix, beta float32, c []float32) {
	if q != nil {
		f.mm.QGemm(m, n, k, a, q, beta, c)
		return
	}
	f.matmulT(m, n, k, a, w, beta, c)
}

// rmsNorm is dst = x / sqrt(mean(x²) + eps) · w, the sum in float64.
func rmsNorm(dst, x, w []float32, eps float64) {
	ss := 0.0
	for _, v := range x {
		ss += float64(v) * float64(v)
	}
	r := 1 / math.Sqrt(ss/float64(len(x))+eps)
	for i, v := range x {
		dst[i] = float32(float64(v) * r * float64(w[i]))
	}
}

// rope rotates pairs (i, i+half) of one head (transformers' rotate_half).
func rope(v []float32, cos, sin []float64) {
	half := len(v) / 2
	for i := range half {
		x0, x1 := float64(v[i]), float64(v[i+half])
		v[i] = float32(x0*cos[i] - x1*sin[i])
		v[i+half] = float32(x1*cos[i] + x0*sin[i])
	}
}

func addTo(dst, src []float32) {
	for i, v := range src {
		dst[i] += v
	}
}
