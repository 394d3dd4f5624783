package llama

import (
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/pitstop-llm/pitstop/models/chat/hfref"
	"github.com/pitstop-llm/pitstop/models/gguf"
	"github.com/pitstop-llm/pitstop/models/kernel"
	"github.com/pitstop-llm/pitstop/models/tokenizer"
)

// ggufConfig is a small model whose rows are whole quantization blocks.
func ggufConfig(modelType string) Config {
	c := tiny(modelType)
	c.HiddenSize, c.IntermediateSize, c.HeadDim, c.VocabSize, c.RopeScaling = 64, 96, 16, 64, nil
	if modelType == "llama" {
		c.NumKVHeads = 2 // grouped: K has its own permutation
	}
	return c
}

// TestGGUFRoundTripF32: a model written as F32 GGUF loads back bit for bit
// (Q and K rows permuted as llama.cpp does and back), with its config.
func TestGGUFRoundTripF32(t *testing.T) {
	for _, family := range []string{"llama", "qwen2"} {
		m := NewDummy(ggufConfig(family), 3)
		path := filepath.Join(t.TempDir(), "m.gguf")
		if err := m.WriteGGUF(path, GGUFOptions{Quant: gguf.F32, Name: "t"}); err != nil {
			t.Fatal(err)
		}
		f, err := gguf.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		if family == "llama" {
			// llama.cpp's layout, not Hugging Face's: row 1 of blk.0.attn_q is HF row hd/2.
			q, _ := f.Tensor("blk.0.attn_q.weight")
			var got [4]byte
			copy(got[:], q.Data[64*4:])
			if want := math.Float32bits(m.Layers[0].WQKV[(16/2)*64]); uint32(got[0])|uint32(got[1])<<8|uint32(got[2])<<16|uint32(got[3])<<24 != want {
				t.Fatalf("attn_q row 1 is not HF row %d", 16/2)
			}
		}
		back, err := LoadGGUF(f)
		if err != nil {
			t.Fatal(err)
		}
		c := back.Config
		c.TorchDType, c.EOSTokenIDs = m.Config.TorchDType, m.Config.EOSTokenIDs
		if c.Architecture != m.Config.Architecture || c.HiddenSize != 64 || c.NumKVHeads != m.Config.NumKVHeads || c.TieEmbeddings != m.Config.TieEmbeddings || c.QKVBias != m.Config.QKVBias {
			t.Fatalf("%s: config %+v, wrote %+v", family, back.Config, m.Config)
		}
		for i := range m.Layers {
			a, b := m.Layers[i], back.Layers[i]
			for _, p := range [][2][]float32{{a.WQKV, b.WQKV}, {a.BQKV, b.BQKV}, {a.WO, b.WO}, {a.WGateUp, b.WGateUp}, {a.WDown, b.WDown}, {a.AttnNorm, b.AttnNorm}} {
				if !slices.Equal(p[0], p[1]) {
					t.Fatalf("%s: layer %d differs after the round trip", family, i)
				}
			}
		}
		if !slices.Equal(m.Embed, back.Embed) || !slices.Equal(m.LMHead, back.LMHead) || !slices.Equal(m.Norm, back.Norm) {
			t.Fatalf("%s: embedding, head or norm differs", family)
		}
	}
}

// TestGGUFQuantized: Q8_0 and Q4_0 projections load as quantized matrices
// (never dequantized), equal to quantizing the original rows.
func TestGGUFQuantized(t *testing.T) {
	m := NewDummy(ggufConfig("llama"), 4)
	for _, qt := range []gguf.TensorType{gguf.Q8_0, gguf.Q4_0} {
		path := filepath.Join(t.TempDir(), "m.gguf")
		if err := m.WriteGGUF(path, GGUFOptions{Quant: qt}); err != nil {
			t.Fatal(err)
		}
		f, err := gguf.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		back, err := LoadGGUF(f)
		if err != nil {
			t.Fatal(err)
		}
		l := back.Layers[1]
		if l.WQKV != nil || l.Quant.WQKV == nil || l.Quant.WDown == nil || back.LMHead != nil || back.QLMHead == nil {
			t.Fatalf("%v: projections not kept quantized", qt)
		}
		c := &m.Config
		want, _ := kernel.Quantize(kernel.QType(qt), c.QDim()+2*c.KVDim(), c.HiddenSize, m.Layers[1].WQKV)
		if !slices.Equal(want.Data, l.Quant.WQKV.Data) {
			t.Fatalf("%v: fused QKV differs from quantizing the HF rows", qt)
		}
		if len(back.Embed) != c.VocabSize*c.HiddenSize {
			t.Fatalf("%v: embedding table not dequantized for lookups", qt)
		}
	}
}

// TestGGUFTokenizer: the built-in model's tokenizer written as GGUF
// metadata and rebuilt encodes and decodes as the original.
func TestGGUFTokenizer(t *testing.T) {
	dir := filepath.Join("..", "builtin", "tiny-tools")
	raw, err := os.ReadFile(filepath.Join(dir, "tokenizer.json"))
	if err != nil {
		t.Fatal(err)
	}
	orig, err := tokenizer.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	meta, err := TokenizerMetadata(raw, "{{ x }}", 2, -1)
	if err != nil {
		t.Fatal(err)
	}
	m := NewDummy(ggufConfig("llama"), 1)
	path := filepath.Join(t.TempDir(), "m.gguf")
	if err := m.WriteGGUF(path, GGUFOptions{Quant: gguf.F16, Metadata: meta}); err != nil {
		t.Fatal(err)
	}
	f, err := gguf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	tj, err := TokenizerJSON(f)
	if err != nil {
		t.Fatal(err)
	}
	back, err := tokenizer.Parse(tj)
	if err != nil {
		t.Fatal(err)
	}
	if f.String("tokenizer.chat_template") != "{{ x }}" || back.VocabSize() != orig.VocabSize() {
		t.Fatalf("template %q, vocab %d want %d", f.String("tokenizer.chat_template"), back.VocabSize(), orig.VocabSize())
	}
	for _, s := range []string{"What is 12*7?", "<|im_start|>user\nHello  world\n\n<|im_end|>", "naïve café 2026 <tool_call>{\"a\": 1}</tool_call>"} {
		a, b := orig.Encode(s, true), back.Encode(s, true)
		if !slices.Equal(a, b) {
			t.Fatalf("%q: %v, original %v", s, b, a)
		}
		if back.Decode(b) != s {
			t.Fatalf("%q decodes to %q", s, back.Decode(b))
		}
	}
	if _, err := TokenizerMetadata([]byte(strings.Replace(string(raw), `"BPE"`, `"WordPiece"`, 1)), "", 0, -1); err == nil {
		t.Fatal("a WordPiece tokenizer was written")
	}
}

// TestGGUFWriterMatchesHuggingFace: @huggingface/gguf reads our files'
// metadata and tensor table as our reader does (Q8_0, Q4_0, F16).
func TestGGUFWriterMatchesHuggingFace(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "builtin", "tiny-tools", "tokenizer.json"))
	if err != nil {
		t.Fatal(err)
	}
	meta, err := TokenizerMetadata(raw, "{{ messages }}", 2, -1)
	if err != nil {
		t.Fatal(err)
	}
	var reqs []map[string]any
	var files []*gguf.File
	for _, qt := range []gguf.TensorType{gguf.Q8_0, gguf.Q4_0, gguf.F16} {
		path := filepath.Join(t.TempDir(), qt.String()+".gguf")
		if err := NewDummy(ggufConfig("qwen2"), 2).WriteGGUF(path, GGUFOptions{Quant: qt, Metadata: meta, Name: "x"}); err != nil {
			t.Fatal(err)
		}
		f, err := gguf.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
		reqs = append(reqs, map[string]any{"op": "gguf", "path": path})
	}
	var got []struct {
		Metadata map[string]any `json:"metadata"`
		Tensors  []struct {
			Name   string   `json:"name"`
			Shape  []uint64 `json:"shape"`
			DType  uint32   `json:"dtype"`
			Offset uint64   `json:"offset"`
		} `json:"tensors"`
	}
	hfref.Run(t, reqs, &got)
	for i, f := range files {
		ref := got[i]
		if ref.Metadata["version"] != float64(3) || int(ref.Metadata["tensor_count"].(float64)) != len(f.Tensors) || int(ref.Metadata["kv_count"].(float64)) != len(f.Metadata) {
			t.Fatalf("%s: header %v", f.Path, ref.Metadata)
		}
		for _, kv := range f.Metadata {
			want := ref.Metadata[kv.Key]
			switch v := kv.Value.(type) {
			case string:
				if want != v {
					t.Errorf("%s: %s = %q, @huggingface/gguf reads %v", f.Path, kv.Key, v, want)
				}
			case uint32:
				if want != float64(v) {
					t.Errorf("%s: %s = %d, @huggingface/gguf reads %v", f.Path, kv.Key, v, want)
				}
			case float32:
				if want != float64(v) {
					t.Errorf("%s: %s = %g, @huggingface/gguf reads %v", f.Path, kv.Key, v, want)
				}
			case []string, []int32:
				n := reflectLen(v)
				if want != float64(n) {
					t.Errorf("%s: %s has %d entries, @huggingface/gguf reads %v", f.Path, kv.Key, n, want)
				}
			}
		}
		if len(ref.Tensors) != len(f.Tensors) {
			t.Fatalf("%s: %d tensors, @huggingface/gguf reads %d", f.Path, len(f.Tensors), len(ref.Tensors))
		}
		for j, tn := range f.Tensors {
			r := ref.Tensors[j]
			if r.Name != tn.Name || !slices.Equal(r.Shape, tn.Dims) || r.DType != uint32(tn.Type) || r.Offset != tn.Offset {
				t.Errorf("%s: tensor %d is %s %v %v @%d, @huggingface/gguf reads %+v", f.Path, j, tn.Name, tn.Dims, tn.Type, tn.Offset, r)
			}
		}
	}
}

func reflectLen(v any) int {
	switch x := v.(type) {
	case []string:
		return len(x)
	case []int32:
		return len(x)
	}
	return -1
}

// TestGGUFUnsupportedType: a file with a tensor of a known type pitstop
// does not multiply (Q5_K) parses, and loading it names the tensor and the
// type.
func TestGGUFUnsupportedType(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.gguf")
	if err := NewDummy(ggufConfig("llama"), 5).WriteGGUF(path, GGUFOptions{Quant: gguf.F32}); err != nil {
		t.Fatal(err)
	}
	f, err := gguf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	ts := slices.Clone(f.Tensors)
	for i := range ts {
		if ts[i].Name == "blk.1.attn_v.weight" {
			n, _ := gguf.Q5_K.Size(ts[i].Elements())
			ts[i].Type, ts[i].Data = gguf.Q5_K, make([]byte, n)
		}
	}
	mixed := filepath.Join(t.TempDir(), "q5k.gguf")
	if err := gguf.Write(mixed, f.Metadata, ts); err != nil {
		t.Fatal(err)
	}
	g, err := gguf.Open(mixed)
	if err != nil {
		t.Fatalf("a file with a Q5_K tensor does not parse: %v", err)
	}
	if _, err := LoadGGUF(g); err == nil || !strings.Contains(err.Error(), "blk.1.attn_v.weight: Q5_K tensors are not supported") {
		t.Fatalf("error %v", err)
	}
}

// TestGGUFRealTokenizers: Llama 3.1's tokenizer (fetched with the Hugging
// Face references; the llama-bpe pre-tokenizer with ignore_merges), written
// as GGUF metadata and rebuilt, encodes as the original. (The qwen2
// pre-tokenizer is TestGGUFTokenizer's, on the built-in model.)
func TestGGUFRealTokenizers(t *testing.T) {
	texts := []string{"Hello, world! What's 12*7?", "<|im_start|>user\nnaïve café 東京 🚀<|im_end|>\n", "  x\n\n\ty_z 123456 <|begin_of_text|>"}
	for _, model := range []string{"llama3.1"} {
		dir := hfref.TokenizerDir(t, model)
		raw, err := os.ReadFile(filepath.Join(dir, "tokenizer.json"))
		if err != nil {
			t.Fatal(err)
		}
		orig, err := tokenizer.Load(dir)
		if err != nil {
			t.Fatal(err)
		}
		meta, err := TokenizerMetadata(raw, "", -1, -1)
		if err != nil {
			t.Fatalf("%s: %v", model, err)
		}
		path := filepath.Join(t.TempDir(), "m.gguf")
		if err := NewDummy(ggufConfig("qwen2"), 1).WriteGGUF(path, GGUFOptions{Quant: gguf.Q8_0, Metadata: meta}); err != nil {
			t.Fatal(err)
		}
		f, err := gguf.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		tj, err := TokenizerJSON(f)
		if err != nil {
			t.Fatal(err)
		}
		back, err := tokenizer.Parse(tj)
		if err != nil {
			t.Fatalf("%s: %v", model, err)
		}
		if back.VocabSize() != orig.VocabSize() {
			t.Fatalf("%s: vocabulary %d, original %d", model, back.VocabSize(), orig.VocabSize())
		}
		for _, s := range texts {
			if a, b := orig.Encode(s, true), back.Encode(s, true); !slices.Equal(a, b) {
				t.Fatalf("%s: %q: %v, original %v", model, s, b, a)
			}
		}
	}
}
