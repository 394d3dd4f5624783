package cpu

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/pitstop-llm/pitstop/models/gguf"
	"github.com/pitstop-llm/pitstop/models/kernel"
	"github.com/pitstop-llm/pitstop/models/llama"
)

// TestQuantizedForward runs a model loaded from Q8_0 and Q4_0 GGUF files
// through the paged forward pass (prefill chunks and decodes in one
// batch) and checks the logits against the reference forward of the same
// weights dequantized.
func TestQuantizedForward(t *testing.T) {
	c := tinyConfig("llama")
	c.HiddenSize, c.IntermediateSize, c.HeadDim, c.RopeScaling = 64, 96, 16, nil
	src := llama.NewDummy(c, 9)
	scale(src.Embed, 8)
	for i := range src.Layers {
		l := &src.Layers[i]
		for _, w := range [][]float32{l.WQKV, l.WO, l.WGateUp, l.WDown} {
			scale(w, 8)
		}
	}
	for _, qt := range []gguf.TensorType{gguf.Q8_0, gguf.Q4_0, 0} {
		path := filepath.Join(t.TempDir(), "m.gguf")
		if qt == 0 {
			path = mixedGGUF(t, src) // attn_v Q8_0 beside Q4_0 attn_q, attn_k
		} else if err := src.WriteGGUF(path, llama.GGUFOptions{Quant: qt}); err != nil {
			t.Fatal(err)
		}
		f, err := gguf.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		m, err := llama.LoadGGUF(f)
		if err != nil {
			t.Fatal(err)
		}
		if qkv := m.Layers[0].Quant.WQKV; qt == 0 && (qkv.Next == nil || qkv.Type != kernel.Q4_0 || qkv.Next.Type != kernel.Q8_0) {
			t.Fatalf("mixed file: QKV not in a Q4_0 and a Q8_0 part: %+v", qkv)
		}
		ref := m.Dequantized()
		x, err := New(m, Options{NumBlocks: 32, BlockSize: 4, Workers: 2})
		if err != nil {
			t.Fatal(err)
		}
		seqs := [][]int32{make([]int32, 23), make([]int32, 17)}
		for i, s := range seqs {
			for j := range s {
				s[j] = int32((j*7 + i*13) % c.VocabSize)
			}
		}
		want := make([][][]float32, len(seqs))
		for i, s := range seqs {
			if want[i], err = ref.Reference(s); err != nil {
				t.Fatal(err)
			}
		}
		checked := 0
		x.onLogits = func(it *item, pos int, logits []float32) {
			if d := maxDiff(logits, want[it.id][pos-1]); d > 1e-3 {
				t.Errorf("%v: sequence %d position %d: logits differ from the dequantized reference by %g", qt, it.id, pos-1, d)
			}
			checked++
		}
		blocks := [][]int32{{0, 1, 2, 3, 4, 5}, {6, 7, 8, 9, 10}}
		// A prefill chunk of 20 (as GEMMs) with a short one, then decodes.
		if err := x.fw.run(x, []item{{id: 0, tokens: seqs[0], blocks: blocks[0], n: 20, sample: true}, {id: 1, tokens: seqs[1], blocks: blocks[1], n: 5, sample: true}}); err != nil {
			t.Fatal(err)
		}
		for p := 20; p < 23; p++ { // decodes, the second sequence's prefill finishing alongside
			items := []item{{id: 0, tokens: seqs[0], blocks: blocks[0], start: p, n: 1, sample: true}}
			if p == 20 {
				items = append(items, item{id: 1, tokens: seqs[1], blocks: blocks[1], start: 5, n: 12, sample: true})
			}
			if err := x.fw.run(x, items); err != nil {
				t.Fatal(err)
			}
		}
		if checked < 5 {
			t.Fatalf("%v: %d rows checked", qt, checked)
		}
	}
}

// mixedGGUF writes src as a Q4_0 file whose attn_v tensors are Q8_0, as
// the mixed files of llama.cpp's _M quantizations are.
func mixedGGUF(t *testing.T, src *llama.Model) string {
	dir := t.TempDir()
	var files [2]*gguf.File
	for i, qt := range []gguf.TensorType{gguf.Q4_0, gguf.Q8_0} {
		p := filepath.Join(dir, qt.String()+".gguf")
		if err := src.WriteGGUF(p, llama.GGUFOptions{Quant: qt}); err != nil {
			t.Fatal(err)
		}
		f, err := gguf.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		files[i] = f
	}
	ts := slices.Clone(files[0].Tensors)
	for i := range ts {
		if strings.HasSuffix(ts[i].Name, ".attn_v.weight") {
			v, _ := files[1].Tensor(ts[i].Name)
			ts[i] = *v
		}
	}
	out := filepath.Join(dir, "mixed.gguf")
	if err := gguf.Write(out, files[0].Metadata, ts); err != nil {
		t.Fatal(err)
	}
	return out
}
