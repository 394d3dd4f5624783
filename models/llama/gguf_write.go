package llama

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/pitstop-llm/pitstop/models/gguf"
	"github.com/pitstop-llm/pitstop/models/kernel"
)

// GGUFOptions choose how WriteGGUF stores the weights.
type GGUFOptions struct {
	// Quant is the type of the projections and the embedding: gguf.F32,
	// F16, Q8_0 or Q4_0. Norms and biases stay F32.
	Quant gguf.TensorType
	// Metadata is written after the model's (tokenizer, chat template).
	Metadata []gguf.KV
	// Name is general.name.
	Name string
}

// WriteGGUF writes the model as a GGUF file in llama.cpp's layout.
func (m *Model) WriteGGUF(path string, opt GGUFOptions) error {
	c := &m.Config
	arch := ggufArch(c.ModelType)
	meta := []gguf.KV{
		{Key: "general.architecture", Value: arch},
		{Key: "general.name", Value: opt.Name},
		{Key: "general.file_type", Value: uint32(opt.Quant)},
		{Key: arch + ".context_length", Value: uint32(c.MaxPositions)},
		{Key: arch + ".embedding_length", Value: uint32(c.HiddenSize)},
		{Key: arch + ".block_count", Value: uint32(c.NumLayers)},
		{Key: arch + ".feed_forward_length", Value: uint32(c.IntermediateSize)},
		{Key: arch + ".attention.head_count", Value: uint32(c.NumHeads)},
		{Key: arch + ".attention.head_count_kv", Value: uint32(c.NumKVHeads)},
		{Key: arch + ".attention.key_length", Value: uint32(c.HeadDim)},
		{Key: arch + ".attention.value_length", Value: uint32(c.HeadDim)},
		{Key: arch + ".rope.dimension_count", Value: uint32(c.HeadDim)},
		{Key: arch + ".rope.freq_base", Value: float32(c.RopeTheta)},
		{Key: arch + ".attention.layer_norm_rms_epsilon", Value: float32(c.RMSNormEps)},
		{Key: arch + ".vocab_size", Value: uint32(c.VocabSize)},
	}
	if c.RopeScaling != nil {
		return fmt.Errorf("llama: GGUF: rope scaling %q is not written yet", c.RopeScaling.Type)
	}
	meta = append(meta, opt.Metadata...)
	specs := m.specs()
	var ts []gguf.Tensor
	for i := range specs {
		s := &specs[i]
		src := s.target()
		rows, cols := s.shape[0], s.cols()
		if heads, ok := ropePermuted(s.name, arch); ok {
			perm := permuteRows(rows, heads(c))
			p := make([]float32, len(src))
			for r := range rows {
				copy(p[perm[r]*cols:(perm[r]+1)*cols], src[r*cols:(r+1)*cols])
			}
			src = p
		}
		t := gguf.Tensor{Name: ggufName(s.name), Type: gguf.F32, Dims: []uint64{uint64(rows)}}
		if len(s.shape) == 2 {
			t.Dims = []uint64{uint64(cols), uint64(rows)}
		}
		typ := gguf.F32
		if len(s.shape) == 2 && (isMatmul(s.name) || s.name == "model.embed_tokens.weight") {
			typ = opt.Quant
		}
		switch typ {
		case gguf.F32:
			t.Data = make([]byte, 4*len(src))
			for j, v := range src {
				binary.LittleEndian.PutUint32(t.Data[4*j:], math.Float32bits(v))
			}
		case gguf.F16:
			t.Type = gguf.F16
			t.Data = make([]byte, 2*len(src))
			for j, v := range src {
				binary.LittleEndian.PutUint16(t.Data[2*j:], kernel.F32ToF16(v))
			}
		case gguf.Q8_0, gguf.Q4_0:
			q, err := kernel.Quantize(kernel.QType(typ), rows, cols, src)
			if err != nil {
				return fmt.Errorf("llama: GGUF: tensor %s: %w", s.name, err)
			}
			t.Type, t.Data = typ, q.Data
		default:
			return fmt.Errorf("llama: GGUF: cannot write %v tensors (valid: F32, F16, Q8_0, Q4_0)", typ)
		}
		ts = append(ts, t)
	}
	return gguf.Write(path, meta, ts)
}
