package cpu

import (
	"fmt"
	"testing"

	"github.com/pitstop-llm/pitstop/models/builtin"
	"github.com/pitstop-llm/pitstop/models/llama"
)

// qwen2Half is Qwen2-0.5B's shape (its config.json): 494M parameters, 896
// wide, 24 layers, 14 query and 2 KV heads of 64, MLP 4864, a 151,936-token
// tied embedding; served here with dummy weights.
var qwen2Half = llama.Config{
	Architecture: "Qwen2ForCausalLM", ModelType: "qwen2",
	HiddenSize: 896, IntermediateSize: 4864, NumLayers: 24, NumHeads: 14, NumKVHeads: 2, HeadDim: 64,
	VocabSize: 151936, MaxPositions: 32768, RMSNormEps: 1e-6, RopeTheta: 1000000, TieEmbeddings: true,
	QKVBias: true, BOSTokenID: -1,
}

// matmulFLOPs is the floating-point work of the projections of one forward
// step over tokens token rows of which sampled reach the LM head (attention
// and elementwise work left out: they are small beside it at these contexts).
func matmulFLOPs(c *llama.Config, tokens, sampled int) float64 {
	H, I := c.HiddenSize, c.IntermediateSize
	perLayer := H*(c.QDim()+2*c.KVDim()) + c.QDim()*H + H*2*I + I*H
	return 2 * (float64(tokens)*float64(c.NumLayers*perLayer) + float64(sampled)*float64(H*c.VocabSize))
}

// servingStep builds an executor over m with batch sequences whose first ctx
// tokens are in the KV cache, and returns a step that runs n more tokens of
// each (n = 1: a decode step; larger: a prefill chunk).
func servingStep(b *testing.B, m *llama.Model, batch, ctx, n int) func() {
	const bs = 16
	per := (ctx + n + bs - 1) / bs
	x, err := New(m, Options{NumBlocks: batch * per, BlockSize: bs, KeepSamples: -1})
	if err != nil {
		b.Fatal(err)
	}
	// Any finite KV times the same as a real prefill's (and touching every
	// page keeps the kernel's shared zero page out of the measurement).
	for _, blk := range x.kv {
		for j := range blk {
			blk[j] = float32(j%97) / 97
		}
	}
	items := make([]item, batch)
	for i := range items {
		toks := make([]int32, ctx+n)
		for j := range toks {
			toks[j] = int32((i*131 + j*17) % m.Config.VocabSize)
		}
		blocks := make([]int32, per)
		for j := range blocks {
			blocks[j] = int32(i*per + j)
		}
		items[i] = item{id: uint64(i), tokens: toks, blocks: blocks, start: ctx, n: n, sample: true}
	}
	return func() {
		if err := x.fw.run(x, items); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkServing measures the executor's forward pass as serving runs it,
// on the built-in tiny tool-calling model (its real weights) and on a
// Qwen2-0.5B-shaped model (dummy weights): decode steps of 1 and 8
// sequences at a 128-token context, and a 256-token prefill chunk. tok/s is
// tokens per step time, tok/CPU-s per CPU-second of the step (all
// goroutines); GFLOP/s counts the projections' work (matmulFLOPs).
func BenchmarkServing(b *testing.B) {
	dir, err := builtin.Dir(builtin.TinyTools)
	if err != nil {
		b.Fatal(err)
	}
	tiny, err := llama.Load(dir, llama.LoadOptions{})
	if err != nil {
		b.Fatal(err)
	}
	models := []struct {
		name string
		load func() *llama.Model
	}{
		{"tiny-tools", func() *llama.Model { return tiny }},
		{"qwen2-0.5b", func() *llama.Model { return llama.NewDummy(qwen2Half, 1) }},
	}
	const ctx = 128
	for _, md := range models {
		var m *llama.Model
		for _, shape := range []struct {
			name         string
			batch, start int
			n            int
		}{{"decode/batch=1", 1, ctx, 1}, {"decode/batch=8", 8, ctx, 1}, {"prefill/n=256", 1, 0, 256}} {
			b.Run(fmt.Sprintf("%s/%s", md.name, shape.name), func(b *testing.B) {
				if m == nil {
					m = md.load()
				}
				s, cpu := timeSteps(b, servingStep(b, m, shape.batch, shape.start, shape.n))
				tokens := shape.batch * shape.n
				b.ReportMetric(float64(tokens)/s, "tok/s")
				if cpu > 0 {
					b.ReportMetric(float64(tokens)/cpu, "tok/CPU-s")
				}
				b.ReportMetric(matmulFLOPs(&m.Config, tokens, shape.batch)/s/1e9, "GFLOP/s")
			})
		}
	}
}
