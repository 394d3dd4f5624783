package llama

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/pitstop-llm/pitstop/models/gguf"
	"github.com/pitstop-llm/pitstop/models/kernel"
)

// ConfigFromGGUF reads the model's configuration from a GGUF file's
// metadata (llama and qwen2 architectures).
func ConfigFromGGUF(f *gguf.File) (*Config, error) {
	arch := f.String("general.architecture")
	var modelType string
	switch arch {
	case "llama":
		modelType = "llama"
	case "qwen2":
		modelType = "qwen2"
	default:
		return nil, fmt.Errorf("general.architecture %q: %w (pitstop runs llama and qwen2 GGUF files)", arch, ErrUnsupported)
	}
	u := func(key string, def int) (int, error) {
		v, ok := f.Uint(arch + "." + key)
		if !ok {
			if def >= 0 {
				return def, nil
			}
			return 0, fmt.Errorf("metadata %s.%s is missing", arch, key)
		}
		return int(v), nil
	}
	c := &Config{Architecture: modelTypes[modelType], ModelType: modelType, BOSTokenID: -1, TorchDType: "gguf"}
	var err error
	for _, x := range []struct {
		key string
		dst *int
		def int
	}{
		{"embedding_length", &c.HiddenSize, -1}, {"feed_forward_length", &c.IntermediateSize, -1},
		{"block_count", &c.NumLayers, -1}, {"attention.head_count", &c.NumHeads, -1},
		{"context_length", &c.MaxPositions, 2048},
	} {
		if *x.dst, err = u(x.key, x.def); err != nil {
			return nil, err
		}
	}
	if c.NumKVHeads, err = u("attention.head_count_kv", c.NumHeads); err != nil {
		return nil, err
	}
	if c.NumHeads > 0 {
		if c.HeadDim, err = u("attention.key_length", c.HiddenSize/c.NumHeads); err != nil {
			return nil, err
		}
	}
	c.RMSNormEps, c.RopeTheta = 1e-5, 10000
	if v, ok := f.Float(arch + ".attention.layer_norm_rms_epsilon"); ok {
		c.RMSNormEps = float64(float32(v))
	}
	if v, ok := f.Float(arch + ".rope.freq_base"); ok {
		c.RopeTheta = v
	}
	emb, ok := f.Tensor("token_embd.weight")
	if !ok || len(emb.Dims) != 2 {
		return nil, fmt.Errorf("tensor token_embd.weight is missing or not a matrix")
	}
	c.VocabSize = int(emb.Dims[1])
	_, hasOut := f.Tensor("output.weight")
	c.TieEmbeddings = !hasOut
	_, c.QKVBias = f.Tensor("blk.0.attn_q.bias")
	_, c.OBias = f.Tensor("blk.0.attn_output.bias")
	if id, ok := f.Uint("tokenizer.ggml.eos_token_id"); ok {
		c.EOSTokenIDs = []int32{int32(id)}
	}
	if id, ok := f.Uint("tokenizer.ggml.bos_token_id"); ok {
		c.BOSTokenID = int32(id)
	}
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return c, nil
}

// LoadGGUF builds the model of a GGUF file. Q8_0, Q4_0, Q4_K and Q6_K
// projections stay quantized (Layer.Quant, QLMHead) and are multiplied block by block by
// kernel.QGemm; F32 and F16 tensors, norms and the embedding table (a
// lookup) are float32. Errors name the tensor at fault.
func LoadGGUF(f *gguf.File) (*Model, error) {
	cfg, err := ConfigFromGGUF(f)
	if err != nil {
		return nil, err
	}
	arch := ggufArch(cfg.ModelType)
	m := &Model{Config: *cfg, Layers: make([]Layer, cfg.NumLayers), Source: f.Path}
	specs := m.specs()
	quant := map[*[]float32][]piece{}
	for i := range specs {
		s := &specs[i]
		name := ggufName(s.name)
		t, ok := f.Tensor(name)
		if !ok {
			return nil, fmt.Errorf("tensor %s is missing", name)
		}
		rows, cols := s.shape[0], s.cols()
		if t.Elements() != rows*cols || (len(s.shape) == 2 && (len(t.Dims) != 2 || int(t.Dims[0]) != cols)) {
			return nil, fmt.Errorf("tensor %s has shape %v, the config wants [%d %d] (GGUF order)", name, t.Dims, cols, rows)
		}
		var perm []int
		if heads, ok := ropePermuted(s.name, arch); ok {
			perm = permuteRows(rows, heads(cfg))
		}
		switch t.Type {
		case gguf.Q8_0, gguf.Q4_0, gguf.Q4_K, gguf.Q6_K:
			if isMatmul(s.name) && cols%kernel.QType(t.Type).QBlock() == 0 {
				total := s.rows
				if total == 0 {
					total = rows
				}
				quant[s.dst] = append(quant[s.dst], piece{t: t, perm: perm, off: s.off, rows: rows, total: total})
				continue
			}
		case gguf.F32, gguf.F16:
		default:
			return nil, fmt.Errorf("tensor %s: %v tensors are not supported yet (pitstop reads F32, F16, Q8_0, Q4_0, Q4_K, Q6_K)", name, t.Type)
		}
		s.alloc()
		if err := decode(t, perm, rows, cols, s.target()); err != nil {
			return nil, fmt.Errorf("tensor %s: %w", name, err)
		}
	}
	for dst, pieces := range quant {
		qm, err := fuseQuant(pieces[0].total, pieces)
		if err != nil {
			return nil, err
		}
		m.setQuant(dst, qm)
	}
	if cfg.TieEmbeddings {
		t, _ := f.Tensor("token_embd.weight")
		if (t.Type == gguf.Q8_0 || t.Type == gguf.Q4_0 || t.Type == gguf.Q4_K || t.Type == gguf.Q6_K) && cfg.HiddenSize%kernel.QType(t.Type).QBlock() == 0 {
			m.QLMHead = &kernel.QMatrix{Type: kernel.QType(t.Type), Rows: cfg.VocabSize, Cols: cfg.HiddenSize, Data: t.Data}
		}
		m.LMHead = m.Embed
	}
	if m.QLMHead != nil && !cfg.TieEmbeddings {
		m.LMHead = nil
	}
	return m, nil
}

// piece is a quantized tensor that fills rows [off, off+rows) of a fused
// projection of total rows.
type piece struct {
	t                *gguf.Tensor
	perm             []int
	off, rows, total int
}

// fuseQuant concatenates the quantized pieces of one fused projection
// (Q, K, V rows; gate, up rows), un-permuting rows where llama.cpp
// permuted them.
func fuseQuant(total int, pieces []piece) (*kernel.QMatrix, error) {
	var head, tail *kernel.QMatrix
	covered := 0
	for i := 0; i < len(pieces); {
		// One part per run of pieces of one type (Q4_K_M files store some
		// attn_v in Q6_K next to Q4_K attn_q and attn_k).
		j, rows := i, 0
		for ; j < len(pieces) && pieces[j].t.Type == pieces[i].t.Type; j++ {
			rows += pieces[j].rows
		}
		part := &kernel.QMatrix{Type: kernel.QType(pieces[i].t.Type), Rows: rows, Cols: int(pieces[i].t.Dims[0])}
		rb := part.RowBytes()
		part.Data = make([]byte, rows*rb)
		at := 0
		for _, p := range pieces[i:j] {
			if p.off != covered {
				return nil, fmt.Errorf("tensor %s: a fused projection is part quantized, part not", p.t.Name)
			}
			for r := range p.rows {
				src := r
				if p.perm != nil {
					src = p.perm[r]
				}
				copy(part.Data[(at+r)*rb:(at+r+1)*rb], p.t.Data[src*rb:(src+1)*rb])
			}
			at += p.rows
			covered += p.rows
		}
		if head == nil {
			head = part
		} else {
			tail.Next = part
		}
		tail = part
		i = j
	}
	if covered != total {
		return nil, fmt.Errorf("tensor %s: a fused projection is part quantized, part not (%d of %d rows quantized)", pieces[0].t.Name, covered, total)
	}
	return head, nil
}

// setQuant puts a quantized projection in place of the float32 slice dst.
func (m *Model) setQuant(dst *[]float32, q *kernel.QMatrix) {
	if dst == &m.LMHead {
		m.QLMHead = q
		return
	}
	for i := range m.Layers {
		l := &m.Layers[i]
		switch dst {
		case &l.WQKV:
			l.Quant.WQKV = q
		case &l.WO:
			l.Quant.WO = q
		case &l.WGateUp:
			l.Quant.WGateUp = q
		case &l.WDown:
			l.Quant.WDown = q
		}
	}
}

// decode writes an F32, F16 or quantized tensor as float32 rows into dst,
// row r of the Hugging Face layout from row perm[r] of the file.
func decode(t *gguf.Tensor, perm []int, rows, cols int, dst []float32) error {
	row := func(r int) int {
		if perm != nil {
			return perm[r]
		}
		return r
	}
	switch t.Type {
	case gguf.F32:
		for r := range rows {
			src := t.Data[row(r)*cols*4:]
			for j := range cols {
				dst[r*cols+j] = math.Float32frombits(binary.LittleEndian.Uint32(src[4*j:]))
			}
		}
	case gguf.F16:
		for r := range rows {
			src := t.Data[row(r)*cols*2:]
			for j := range cols {
				dst[r*cols+j] = kernel.F16ToF32(binary.LittleEndian.Uint16(src[2*j:]))
			}
		}
	case gguf.Q8_0, gguf.Q4_0, gguf.Q4_K, gguf.Q6_K:
		q, err := kernel.NewQMatrix(kernel.QType(t.Type), rows, cols, t.Data)
		if err != nil {
			return err
		}
		for r := range rows {
			q.DequantizeRow(row(r), dst[r*cols:(r+1)*cols])
		}
	default:
		return fmt.Errorf("%v tensors are not supported", t.Type)
	}
	return nil
}
