package cpu

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/pitstop-llm/pitstop/engine"
	"github.com/pitstop-llm/pitstop/models/llama"
	"github.com/pitstop-llm/pitstop/models/safetensors"
)

// tinyConfig is a small model of each supported family.
func tinyConfig(modelType string) llama.Config {
	c := llama.Config{
		ModelType: modelType, HiddenSize: 32, IntermediateSize: 48, NumLayers: 2,
		NumHeads: 4, NumKVHeads: 2, HeadDim: 8, VocabSize: 64, MaxPositions: 512,
		RMSNormEps: 1e-5, RopeTheta: 10000, BOSTokenID: -1,
	}
	switch modelType {
	case "qwen2":
		c.Architecture, c.QKVBias, c.TieEmbeddings = "Qwen2ForCausalLM", true, true
	case "mistral":
		c.Architecture, c.SlidingWindow, c.NumKVHeads = "MistralForCausalLM", 9, 1
	default:
		c.Architecture = "LlamaForCausalLM"
		c.RopeScaling = &llama.RopeScaling{Type: "llama3", Factor: 8, LowFreqFactor: 1, HighFreqFactor: 4, OriginalMaxPositions: 16}
	}
	return c
}

// tinyModel writes a random model of the family as config.json and
// safetensors into a temporary directory and loads it back.
func tinyModel(t testing.TB, modelType string, dtype safetensors.DType, shards int) *llama.Model {
	t.Helper()
	dir := t.TempDir()
	m := llama.NewDummy(tinyConfig(modelType), 11)
	// Scale the matrices up (std 0.02 -> 0.16) so that logits are O(1) and
	// attention far from uniform: a 1e-4 tolerance then means something.
	scale(m.Embed, 8)
	if !m.Config.TieEmbeddings {
		scale(m.LMHead, 8)
	}
	for i := range m.Layers {
		l := &m.Layers[i]
		for _, w := range [][]float32{l.WQKV, l.BQKV, l.WO, l.WGateUp, l.WDown} {
			scale(w, 8)
		}
	}
	if err := m.Save(dir, dtype, shards); err != nil {
		t.Fatal(err)
	}
	m, err := llama.Load(dir, llama.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func scale(w []float32, f float32) {
	for i := range w {
		w[i] *= f
	}
}

func maxDiff(a, b []float32) float64 {
	d := 0.0
	for i := range a {
		d = max(d, math.Abs(float64(a[i])-float64(b[i])))
	}
	return d
}

// TestPagedMatchesReference runs several sequences through random schedules
// of prefill chunks and decodes mixed in one batch, over random block tables
// of small blocks, and checks every sampled row's logits against the plain
// single-sequence reference forward.
func TestPagedMatchesReference(t *testing.T) {
	for _, c := range []struct {
		family string
		dtype  safetensors.DType
		shards int
	}{{"llama", safetensors.F32, 1}, {"qwen2", safetensors.BF16, 2}, {"mistral", safetensors.F16, 1}} {
		t.Run(c.family, func(t *testing.T) {
			m := tinyModel(t, c.family, c.dtype, c.shards)
			r := rand.New(rand.NewPCG(5, uint64(len(c.family))))
			const numBlocks, bs, nseq = 140, 4, 7
			x, err := New(m, Options{NumBlocks: numBlocks, BlockSize: bs, Workers: 3})
			if err != nil {
				t.Fatal(err)
			}
			type seqState struct {
				tokens   []int32
				prompt   int
				arrive   int
				blocks   []int32
				computed int
				ref      [][]float32
			}
			perm := r.Perm(numBlocks)
			seqs := make([]*seqState, nseq)
			for i := range seqs {
				n := 32 + r.IntN(40)
				s := &seqState{tokens: make([]int32, n), prompt: n/2 + r.IntN(n/2-4), arrive: r.IntN(25)}
				for j := range s.tokens {
					s.tokens[j] = int32(r.IntN(m.Config.VocabSize))
				}
				s.blocks = make([]int32, (n+bs-1)/bs)
				for j := range s.blocks {
					s.blocks[j] = int32(perm[0])
					perm = perm[1:]
				}
				if s.ref, err = m.Reference(s.tokens); err != nil {
					t.Fatal(err)
				}
				seqs[i] = s
			}
			checked, worst, rms := 0, 0.0, 0.0
			x.onLogits = func(it *item, pos int, logits []float32) {
				for _, v := range logits {
					rms += float64(v) * float64(v) / float64(len(logits))
				}
				d := maxDiff(logits, seqs[it.id].ref[pos-1])
				worst = max(worst, d)
				if d > 1e-4 {
					t.Errorf("sequence %d: logits at position %d differ from the reference by %g", it.id, pos-1, d)
				}
				checked++
			}
			mixed, gemmChunks := 0, 0
			for step := 0; step < 200; step++ {
				var items []item
				prefills, decodes := 0, 0
				for _, i := range r.Perm(nseq) {
					s := seqs[i]
					if step < s.arrive || s.computed == len(s.tokens) || r.IntN(4) == 0 {
						continue
					}
					it := item{id: uint64(i), tokens: s.tokens, blocks: s.blocks, start: s.computed}
					if s.computed < s.prompt {
						left := s.prompt - s.computed
						it.n = min(1+r.IntN(4), left)
						if left >= prefillGEMM && (r.IntN(2) == 0 || s.computed == 0) {
							it.n = prefillGEMM + r.IntN(min(8, left-prefillGEMM+1)) // attention as GEMMs
						}
						if it.n >= prefillGEMM {
							gemmChunks++
						}
						it.sample = s.computed+it.n == s.prompt || r.IntN(3) == 0
						prefills++
					} else {
						it.n, it.sample = 1, true
						decodes++
					}
					s.computed += it.n
					items = append(items, it)
				}
				if prefills > 0 && decodes > 0 {
					mixed++
				}
				if len(items) == 0 {
					continue
				}
				if err := x.fw.run(x, items); err != nil {
					t.Fatal(err)
				}
			}
			for i, s := range seqs {
				if s.computed != len(s.tokens) {
					t.Fatalf("sequence %d computed %d of %d tokens", i, s.computed, len(s.tokens))
				}
			}
			if mixed < 5 || checked < 50 || gemmChunks < 6 {
				t.Fatalf("weak schedule: %d mixed steps, %d rows checked, %d long chunks", mixed, checked, gemmChunks)
			}
			t.Logf("%s: %d rows checked over %d mixed steps (%d chunks as GEMMs), logits RMS %.2f, worst difference %.2g", c.family, checked, mixed, gemmChunks, math.Sqrt(rms/float64(checked)), worst)
		})
	}
}

func TestBadBatches(t *testing.T) {
	m := tinyModel(t, "llama", safetensors.F32, 1)
	x, _ := New(m, Options{NumBlocks: 4, BlockSize: 4})
	toks := []int32{1, 2, 3, 4, 5, 6}
	cases := map[string]item{
		"past the end":     {tokens: toks, blocks: []int32{0, 1}, start: 4, n: 3},
		"short table":      {tokens: toks, blocks: []int32{0}, start: 0, n: 6},
		"bad block":        {tokens: toks, blocks: []int32{0, 9}, start: 0, n: 6},
		"out of vocab":     {tokens: []int32{1, 99}, blocks: []int32{0}, start: 0, n: 2},
		"negative start":   {tokens: toks, blocks: []int32{0, 1}, start: -1, n: 2},
		"empty item chunk": {tokens: toks, blocks: []int32{0, 1}, start: 0, n: 0},
	}
	for name, it := range cases {
		if err := x.fw.run(x, []item{it}); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	x.opt.WrapTokens = true
	if err := x.fw.run(x, []item{cases["out of vocab"]}); err != nil {
		t.Errorf("wrapped token: %v", err)
	}
}

func TestSampling(t *testing.T) {
	var sp sampler
	logits := []float32{0.1, 2, -1, 2, 0.5}
	if got := sp.sample(logits, engine.Sampling{}, nil); got != 1 {
		t.Fatalf("greedy picked %d, want 1 (first of the ties)", got)
	}
	r := rand.New(rand.NewPCG(1, 2))
	counts := make([]int, len(logits))
	for range 4000 {
		counts[sp.sample(logits, engine.Sampling{Temperature: 1, TopP: 0.7}, r)]++
	}
	// p ∝ e^l: the two tokens at 2 hold 0.77 of the mass: top-p 0.7 keeps only them.
	if counts[0]+counts[2]+counts[4] != 0 || counts[1] < 1800 || counts[3] < 1800 {
		t.Fatalf("top-p 0.7 counts %v, want only tokens 1 and 3, evenly", counts)
	}
	clear(counts)
	for range 20000 {
		counts[sp.sample(logits, engine.Sampling{Temperature: 1}, r)]++
	}
	z := 0.0
	for _, l := range logits {
		z += math.Exp(float64(l))
	}
	for i, l := range logits {
		want := math.Exp(float64(l)) / z
		if got := float64(counts[i]) / 20000; math.Abs(got-want) > 0.015 {
			t.Fatalf("token %d drawn with frequency %.3f, want %.3f", i, got, want)
		}
	}
}
