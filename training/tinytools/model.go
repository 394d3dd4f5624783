package tinytools

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"

	"github.com/pitstop-llm/pitstop/models/safetensors"
)

// Config is the model's shape: a Llama decoder (RMSNorm, RoPE, multi-head or
// grouped-query attention, SwiGLU MLP) with tied input and output
// embeddings.
type Config struct {
	Vocab     int     `json:"vocab"`
	Dim       int     `json:"dim"`
	Layers    int     `json:"layers"`
	Heads     int     `json:"heads"`
	KVHeads   int     `json:"kv_heads"`
	FF        int     `json:"ff"`
	MaxPos    int     `json:"max_pos"`
	RopeTheta float64 `json:"rope_theta"`
	NormEps   float64 `json:"norm_eps"`
}

// DefaultConfig is the shipped model's shape (vocab is the tokenizer's).
func DefaultConfig(vocab int) Config {
	return Config{Vocab: vocab, Dim: 192, Layers: 3, Heads: 6, KVHeads: 6, FF: 512, MaxPos: 2048, RopeTheta: 10000, NormEps: 1e-5}
}

// HeadDim is the width of one attention head.
func (c Config) HeadDim() int { return c.Dim / c.Heads }

// QDim is the width of the query projection.
func (c Config) QDim() int { return c.Heads * c.HeadDim() }

// KVDim is the width of the key and value projections.
func (c Config) KVDim() int { return c.KVHeads * c.HeadDim() }

// Validate checks the shape.
func (c Config) Validate() error {
	switch {
	case c.Vocab <= 0 || c.Dim <= 0 || c.Layers <= 0 || c.Heads <= 0 || c.KVHeads <= 0 || c.FF <= 0 || c.MaxPos <= 0:
		return fmt.Errorf("tinytools: config %+v: sizes must be positive", c)
	case c.Dim%c.Heads != 0 || c.HeadDim()%2 != 0:
		return fmt.Errorf("tinytools: config: dim %d must split into %d heads of even width", c.Dim, c.Heads)
	case c.Heads%c.KVHeads != 0:
		return fmt.Errorf("tinytools: config: %d heads is not a multiple of %d kv heads", c.Heads, c.KVHeads)
	case !(c.RopeTheta > 0) || !(c.NormEps > 0):
		return fmt.Errorf("tinytools: config: rope_theta and norm_eps must be positive")
	}
	return nil
}

// layer holds one decoder layer's tensors, views into a flat buffer. Linear
// weights are stored input-major ([in][out], y = x·W), the transpose of the
// Hugging Face layout.
type layer struct {
	attnNorm, q, k, v, o, mlpNorm, gate, up, down []float32
}

// Weights is every parameter of the model in one flat buffer, so that the
// optimizer and gradient sums run over one slice.
type Weights struct {
	Cfg    Config
	Flat   []float32
	embed  []float32 // [vocab][dim]
	layers []layer
	norm   []float32
}

// tensorSpec names one parameter for export.
type tensorSpec struct {
	hfName string
	view   func(w *Weights) []float32
	in     int // rows of the stored matrix (1 for a vector)
	out    int
	decay  bool // weight decay applies (matrices)
}

func (c Config) specs() []tensorSpec {
	d, qd, kvd, ff := c.Dim, c.QDim(), c.KVDim(), c.FF
	specs := []tensorSpec{{"model.embed_tokens.weight", func(w *Weights) []float32 { return w.embed }, c.Vocab, d, true}}
	for l := range c.Layers {
		p := fmt.Sprintf("model.layers.%d.", l)
		specs = append(specs,
			tensorSpec{p + "input_layernorm.weight", func(w *Weights) []float32 { return w.layers[l].attnNorm }, 1, d, false},
			tensorSpec{p + "self_attn.q_proj.weight", func(w *Weights) []float32 { return w.layers[l].q }, d, qd, true},
			tensorSpec{p + "self_attn.k_proj.weight", func(w *Weights) []float32 { return w.layers[l].k }, d, kvd, true},
			tensorSpec{p + "self_attn.v_proj.weight", func(w *Weights) []float32 { return w.layers[l].v }, d, kvd, true},
			tensorSpec{p + "self_attn.o_proj.weight", func(w *Weights) []float32 { return w.layers[l].o }, qd, d, true},
			tensorSpec{p + "post_attention_layernorm.weight", func(w *Weights) []float32 { return w.layers[l].mlpNorm }, 1, d, false},
			tensorSpec{p + "mlp.gate_proj.weight", func(w *Weights) []float32 { return w.layers[l].gate }, d, ff, true},
			tensorSpec{p + "mlp.up_proj.weight", func(w *Weights) []float32 { return w.layers[l].up }, d, ff, true},
			tensorSpec{p + "mlp.down_proj.weight", func(w *Weights) []float32 { return w.layers[l].down }, ff, d, true},
		)
	}
	specs = append(specs, tensorSpec{"model.norm.weight", func(w *Weights) []float32 { return w.norm }, 1, d, false})
	return specs
}

// NumParams counts the parameters.
func (c Config) NumParams() int {
	d, qd, kvd, ff := c.Dim, c.QDim(), c.KVDim(), c.FF
	return c.Vocab*d + c.Layers*(2*d+d*qd+2*d*kvd+qd*d+3*d*ff) + d
}

// NewWeights allocates zero weights of shape c.
func NewWeights(c Config) (*Weights, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	w := &Weights{Cfg: c, Flat: make([]float32, c.NumParams())}
	w.bind()
	return w, nil
}

// bind points the tensor views into Flat.
func (w *Weights) bind() {
	c := w.Cfg
	d, qd, kvd, ff := c.Dim, c.QDim(), c.KVDim(), c.FF
	off := 0
	take := func(n int) []float32 {
		s := w.Flat[off : off+n : off+n]
		off += n
		return s
	}
	w.embed = take(c.Vocab * d)
	w.layers = make([]layer, c.Layers)
	for l := range w.layers {
		w.layers[l] = layer{
			attnNorm: take(d), q: take(d * qd), k: take(d * kvd), v: take(d * kvd), o: take(qd * d),
			mlpNorm: take(d), gate: take(d * ff), up: take(d * ff), down: take(ff * d),
		}
	}
	w.norm = take(d)
	if off != len(w.Flat) {
		panic("tinytools: parameter layout mismatch")
	}
}

// Init fills the weights as GPT-2/Llama training starts: normal(0, 0.02)
// matrices, residual output projections scaled by 1/sqrt(2·layers), norm
// gains 1.
func (w *Weights) Init(seed int64) {
	r := rand.New(rand.NewPCG(uint64(seed), 0x1217))
	fill := func(s []float32, std float64) {
		for i := range s {
			s[i] = float32(r.NormFloat64() * std)
		}
	}
	const std = 0.02
	resid := std / math.Sqrt(2*float64(w.Cfg.Layers))
	fill(w.embed, std)
	for _, l := range w.layers {
		for i := range l.attnNorm {
			l.attnNorm[i], l.mlpNorm[i] = 1, 1
		}
		fill(l.q, std)
		fill(l.k, std)
		fill(l.v, std)
		fill(l.o, resid)
		fill(l.gate, std)
		fill(l.up, std)
		fill(l.down, resid)
	}
	for i := range w.norm {
		w.norm[i] = 1
	}
}

// Clone returns a deep copy.
func (w *Weights) Clone() *Weights {
	c := &Weights{Cfg: w.Cfg, Flat: append([]float32(nil), w.Flat...)}
	c.bind()
	return c
}

// decayMask marks the parameters weight decay applies to.
func (w *Weights) decayMask() []bool {
	m := make([]bool, len(w.Flat))
	off := 0
	for _, s := range w.Cfg.specs() {
		n := s.in * s.out
		for i := off; i < off+n; i++ {
			m[i] = s.decay
		}
		off += n
	}
	return m
}

// transposed holds the weights in Hugging Face layout ([out][in]) for the
// backward pass, and the embedding transposed ([dim][vocab]) for the output
// head.
type transposed struct {
	embedT []float32
	layers []layer // q, k, v, o, gate, up, down as [out][in]
}

func (w *Weights) transposed(t *transposed) *transposed {
	c := w.Cfg
	d, qd, kvd, ff := c.Dim, c.QDim(), c.KVDim(), c.FF
	if t == nil {
		t = &transposed{embedT: make([]float32, c.Vocab*d), layers: make([]layer, c.Layers)}
		for l := range t.layers {
			t.layers[l] = layer{q: make([]float32, d*qd), k: make([]float32, d*kvd), v: make([]float32, d*kvd),
				o: make([]float32, qd*d), gate: make([]float32, d*ff), up: make([]float32, d*ff), down: make([]float32, ff*d)}
		}
	}
	transpose(t.embedT, w.embed, c.Vocab, d)
	for l, src := range w.layers {
		dst := t.layers[l]
		transpose(dst.q, src.q, d, qd)
		transpose(dst.k, src.k, d, kvd)
		transpose(dst.v, src.v, d, kvd)
		transpose(dst.o, src.o, qd, d)
		transpose(dst.gate, src.gate, d, ff)
		transpose(dst.up, src.up, d, ff)
		transpose(dst.down, src.down, ff, d)
	}
	return t
}

// HFConfig is the Hugging Face config.json of the model (LlamaConfig field
// names), with the token ids of the tokenizer.
type HFConfig struct {
	Architectures     []string `json:"architectures"`
	ModelType         string   `json:"model_type"`
	HiddenSize        int      `json:"hidden_size"`
	IntermediateSize  int      `json:"intermediate_size"`
	NumHiddenLayers   int      `json:"num_hidden_layers"`
	NumAttentionHeads int      `json:"num_attention_heads"`
	NumKeyValueHeads  int      `json:"num_key_value_heads"`
	HeadDim           int      `json:"head_dim"`
	VocabSize         int      `json:"vocab_size"`
	MaxPositions      int      `json:"max_position_embeddings"`
	RMSNormEps        float64  `json:"rms_norm_eps"`
	RopeTheta         float64  `json:"rope_theta"`
	TieWordEmbeddings bool     `json:"tie_word_embeddings"`
	HiddenAct         string   `json:"hidden_act"`
	AttentionBias     bool     `json:"attention_bias"`
	MLPBias           bool     `json:"mlp_bias"`
	BOSTokenID        *int32   `json:"bos_token_id"`
	EOSTokenID        []int32  `json:"eos_token_id"`
	PadTokenID        *int32   `json:"pad_token_id,omitempty"`
	TorchDType        string   `json:"torch_dtype"`
	// ChatTemplate names the models/chat template the model was trained
	// with (a pitstop field; Hugging Face ignores it).
	ChatTemplate string `json:"pitstop_chat_template,omitempty"`
}

// HF returns the config.json of c.
func (c Config) HF(eos []int32, pad *int32, template string) HFConfig {
	return HFConfig{
		Architectures: []string{"LlamaForCausalLM"}, ModelType: "llama",
		HiddenSize: c.Dim, IntermediateSize: c.FF, NumHiddenLayers: c.Layers,
		NumAttentionHeads: c.Heads, NumKeyValueHeads: c.KVHeads, HeadDim: c.HeadDim(),
		VocabSize: c.Vocab, MaxPositions: c.MaxPos, RMSNormEps: c.NormEps, RopeTheta: c.RopeTheta,
		TieWordEmbeddings: true, HiddenAct: "silu", EOSTokenID: eos, PadTokenID: pad,
		TorchDType: "float32", ChatTemplate: template,
	}
}

// ConfigFromHF reads the shape back from a config.json.
func ConfigFromHF(h HFConfig) (Config, error) {
	if h.ModelType != "llama" || !h.TieWordEmbeddings || h.AttentionBias || h.MLPBias || (h.HiddenAct != "" && h.HiddenAct != "silu") {
		return Config{}, fmt.Errorf("tinytools: config.json is not a tied-embedding Llama without biases (model_type %q)", h.ModelType)
	}
	c := Config{Vocab: h.VocabSize, Dim: h.HiddenSize, Layers: h.NumHiddenLayers, Heads: h.NumAttentionHeads,
		KVHeads: h.NumKeyValueHeads, FF: h.IntermediateSize, MaxPos: h.MaxPositions, RopeTheta: h.RopeTheta, NormEps: h.RMSNormEps}
	if c.KVHeads == 0 {
		c.KVHeads = c.Heads
	}
	if h.HeadDim != 0 && h.HeadDim*h.NumAttentionHeads != h.HiddenSize {
		return Config{}, fmt.Errorf("tinytools: head_dim %d × %d heads != hidden_size %d", h.HeadDim, h.NumAttentionHeads, h.HiddenSize)
	}
	return c, c.Validate()
}

// SaveSafetensors writes the weights with Hugging Face names and layout
// ([out][in] matrices), float32.
func (w *Weights) SaveSafetensors(path string, metadata map[string]string) error {
	var tensors []safetensors.Tensor
	for _, s := range w.Cfg.specs() {
		v := s.view(w)
		var shape []int
		data := v
		switch {
		case s.in == 1:
			shape = []int{s.out}
		case s.hfName == "model.embed_tokens.weight":
			shape = []int{s.in, s.out} // [vocab][dim], stored as is
		default:
			data = make([]float32, len(v))
			transpose(data, v, s.in, s.out)
			shape = []int{s.out, s.in}
		}
		t, err := safetensors.FromF32(s.hfName, safetensors.F32, shape, data)
		if err != nil {
			return err
		}
		tensors = append(tensors, t)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("tinytools: %w", err)
	}
	return safetensors.WriteFile(path, tensors, metadata)
}

// LoadSafetensors reads weights of shape c written by SaveSafetensors (or
// any Hugging Face Llama checkpoint of that shape with tied embeddings).
func LoadSafetensors(path string, c Config) (*Weights, error) {
	w, err := NewWeights(c)
	if err != nil {
		return nil, err
	}
	f, err := safetensors.OpenFile(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	for _, s := range c.specs() {
		v, shape, err := f.Float32(s.hfName)
		if err != nil {
			return nil, fmt.Errorf("tinytools: %s: %w", path, err)
		}
		dst := s.view(w)
		if len(v) != len(dst) {
			return nil, fmt.Errorf("tinytools: %s: tensor %s has shape %v, want %d elements", path, s.hfName, shape, len(dst))
		}
		switch {
		case s.in == 1 || s.hfName == "model.embed_tokens.weight":
			copy(dst, v)
		default:
			transpose(dst, v, s.out, s.in)
		}
	}
	return w, nil
}

// LoadModelDir reads config.json and model.safetensors from dir.
func LoadModelDir(dir string) (*Weights, error) {
	data, err := os.ReadFile(filepath.Join(dir, "config.json"))
	if err != nil {
		return nil, fmt.Errorf("tinytools: %w", err)
	}
	var h HFConfig
	if err := json.Unmarshal(data, &h); err != nil {
		return nil, fmt.Errorf("tinytools: %s/config.json: %w", dir, err)
	}
	c, err := ConfigFromHF(h)
	if err != nil {
		return nil, err
	}
	return LoadSafetensors(filepath.Join(dir, "model.safetensors"), c)
}
