package llama

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sync"

	"github.com/pitstop-llm/pitstop/models/kernel"
	"github.com/pitstop-llm/pitstop/models/safetensors"
)

// Layer is one decoder layer's weights, float32, row-major with HF's [out, in]
// layout (y = x·Wᵀ). Projections that read the same input are fused at load.
type Layer struct {
	AttnNorm []float32 // [hidden]
	WQKV     []float32 // [(q+2·kv) × hidden]: q_proj rows, then k_proj, then v_proj
	BQKV     []float32 // [q+2·kv] or nil
	WO       []float32 // [hidden × q]
	BO       []float32 // [hidden] or nil
	MLPNorm  []float32 // [hidden]
	WGateUp  []float32 // [2·intermediate × hidden]: gate_proj rows, then up_proj
	WDown    []float32 // [hidden × intermediate]
	// Quant holds the projections kept quantized (GGUF Q8_0, Q4_0): a
	// non-nil matrix there replaces the float32 slice of the same name,
	// which is then nil.
	Quant QuantLayer
}

// QuantLayer are a layer's quantized projections, fused as the float32
// ones are.
type QuantLayer struct {
	WQKV, WO, WGateUp, WDown *kernel.QMatrix
}

// Model is a loaded model.
type Model struct {
	Config Config
	Embed  []float32 // [vocab × hidden]
	Layers []Layer
	Norm   []float32 // [hidden]
	LMHead []float32 // [vocab × hidden]; the same slice as Embed when tied
	// QLMHead replaces LMHead when the output projection is quantized.
	QLMHead *kernel.QMatrix
	Source  string // where the weights came from: a directory, or "dummy"
}

// Load formats.
const (
	FormatAuto        = "auto"        // safetensors (the only stored format supported)
	FormatSafetensors = "safetensors" // HF safetensors, one file or sharded
	FormatDummy       = "dummy"       // deterministic random weights from config.json alone (vLLM's --load-format dummy)
)

// LoadOptions tunes Load.
type LoadOptions struct {
	// LoadFormat is FormatAuto (""), FormatSafetensors or FormatDummy.
	LoadFormat string
	// Seed of dummy weights.
	Seed uint64
}

// Load reads dir/config.json and the model's weights. Errors name the file
// and tensor at fault: a missing or truncated weight file, an unsupported
// architecture, a tensor whose shape disagrees with the config.
func Load(dir string, opt LoadOptions) (*Model, error) {
	cfg, err := LoadConfig(dir)
	if err != nil {
		return nil, err
	}
	switch opt.LoadFormat {
	case FormatDummy:
		return NewDummy(*cfg, opt.Seed), nil
	case "", FormatAuto, FormatSafetensors:
	default:
		return nil, fmt.Errorf("llama: unknown load format %q (valid: auto, safetensors, dummy)", opt.LoadFormat)
	}
	a, err := safetensors.Open(dir)
	if err != nil {
		return nil, fmt.Errorf("llama: weights of %s: %w", dir, err)
	}
	defer a.Close()
	m, err := fromArchive(*cfg, a)
	if err != nil {
		return nil, fmt.Errorf("llama: weights of %s: %w", dir, err)
	}
	m.Source = dir
	return m, nil
}

// tensor names and shapes the config implies.
type spec struct {
	name  string
	shape []int
	dst   *[]float32
	off   int // row offset into a fused destination
	rows  int // rows of the fused destination (0: not fused)
}

func (m *Model) specs() []spec {
	c := &m.Config
	h, q, kv, in := c.HiddenSize, c.QDim(), c.KVDim(), c.IntermediateSize
	s := []spec{
		{name: "model.embed_tokens.weight", shape: []int{c.VocabSize, h}, dst: &m.Embed},
		{name: "model.norm.weight", shape: []int{h}, dst: &m.Norm},
	}
	if !c.TieEmbeddings {
		s = append(s, spec{name: "lm_head.weight", shape: []int{c.VocabSize, h}, dst: &m.LMHead})
	}
	for i := range m.Layers {
		l := &m.Layers[i]
		p := fmt.Sprintf("model.layers.%d.", i)
		s = append(s,
			spec{name: p + "input_layernorm.weight", shape: []int{h}, dst: &l.AttnNorm},
			spec{name: p + "self_attn.q_proj.weight", shape: []int{q, h}, dst: &l.WQKV, off: 0, rows: q + 2*kv},
			spec{name: p + "self_attn.k_proj.weight", shape: []int{kv, h}, dst: &l.WQKV, off: q, rows: q + 2*kv},
			spec{name: p + "self_attn.v_proj.weight", shape: []int{kv, h}, dst: &l.WQKV, off: q + kv, rows: q + 2*kv},
			spec{name: p + "self_attn.o_proj.weight", shape: []int{h, q}, dst: &l.WO},
			spec{name: p + "post_attention_layernorm.weight", shape: []int{h}, dst: &l.MLPNorm},
			spec{name: p + "mlp.gate_proj.weight", shape: []int{in, h}, dst: &l.WGateUp, off: 0, rows: 2 * in},
			spec{name: p + "mlp.up_proj.weight", shape: []int{in, h}, dst: &l.WGateUp, off: in, rows: 2 * in},
			spec{name: p + "mlp.down_proj.weight", shape: []int{h, in}, dst: &l.WDown},
		)
		if c.QKVBias {
			s = append(s,
				spec{name: p + "self_attn.q_proj.bias", shape: []int{q}, dst: &l.BQKV, off: 0, rows: q + 2*kv},
				spec{name: p + "self_attn.k_proj.bias", shape: []int{kv}, dst: &l.BQKV, off: q, rows: q + 2*kv},
				spec{name: p + "self_attn.v_proj.bias", shape: []int{kv}, dst: &l.BQKV, off: q + kv, rows: q + 2*kv},
			)
		}
		if c.OBias {
			s = append(s, spec{name: p + "self_attn.o_proj.bias", shape: []int{h}, dst: &l.BO})
		}
	}
	return s
}

// cols is the width of a row of the spec's tensor (1 for vectors).
func (s *spec) cols() int {
	if len(s.shape) == 2 {
		return s.shape[1]
	}
	return 1
}

// alloc makes the spec's destination if it does not exist yet.
func (s *spec) alloc() {
	if *s.dst != nil {
		return
	}
	n := s.shape[0] * s.cols()
	if s.rows > 0 {
		n = s.rows * s.cols()
	}
	*s.dst = kernel.AllocWeights(n).Floats // 2 MiB pages where allowed; kept for the process's life
}

func (s *spec) target() []float32 {
	c := s.cols()
	return (*s.dst)[s.off*c : (s.off+s.shape[0])*c]
}

func fromArchive(cfg Config, a *safetensors.Archive) (*Model, error) {
	m := &Model{Config: cfg, Layers: make([]Layer, cfg.NumLayers)}
	specs := m.specs()
	for i := range specs { // check every shape before converting anything
		s := &specs[i]
		info, ok := a.Info(s.name)
		if !ok {
			return nil, fmt.Errorf("tensor %s is missing (config: %s, %d layers)", s.name, cfg.Architecture, cfg.NumLayers)
		}
		if !slices.Equal(info.Shape, s.shape) {
			return nil, fmt.Errorf("tensor %s has shape %v, the config implies %v", s.name, info.Shape, s.shape)
		}
		if !info.DType.Float() {
			return nil, fmt.Errorf("tensor %s has dtype %s (supported: F32, F16, BF16)", s.name, info.DType)
		}
	}
	var mu sync.Mutex
	var firstErr error
	parallel(len(specs), func(i int) {
		s := &specs[i]
		v, _, err := a.Float32(s.name)
		mu.Lock()
		defer mu.Unlock()
		if err != nil {
			if firstErr == nil {
				firstErr = err
			}
			return
		}
		s.alloc()
		copy(s.target(), v)
	})
	if firstErr != nil {
		return nil, firstErr
	}
	if cfg.TieEmbeddings {
		m.LMHead = m.Embed
	}
	return m, nil
}

// NewDummy makes a model with deterministic random weights (vLLM's dummy
// load format): matrices uniform with standard deviation 0.02, norm weights
// 1, biases small. Equal configs and seeds give bit-identical weights.
func NewDummy(cfg Config, seed uint64) *Model {
	m := &Model{Config: cfg, Layers: make([]Layer, cfg.NumLayers), Source: FormatDummy}
	specs := m.specs()
	for i := range specs {
		specs[i].alloc()
	}
	parallel(len(specs), func(i int) {
		s := &specs[i]
		dst := s.target()
		r := rand.New(rand.NewPCG(seed, uint64(i)*0x9e3779b97f4a7c15+1))
		switch {
		case len(s.shape) == 1 && suffix(s.name) == "weight": // norms
			for j := range dst {
				dst[j] = 1 + 0.1*(r.Float32()-0.5)
			}
		default:
			scale := float32(0.02 * math.Sqrt(3) * 2)
			for j := range dst {
				dst[j] = (r.Float32() - 0.5) * scale
			}
		}
	})
	if cfg.TieEmbeddings {
		m.LMHead = m.Embed
	}
	return m
}

func suffix(name string) string {
	for i := len(name) - 1; i >= 0; i-- {
		if name[i] == '.' {
			return name[i+1:]
		}
	}
	return name
}

func maxProcs() int { return runtime.GOMAXPROCS(0) }

// parallel runs fn(0..n-1) on up to GOMAXPROCS goroutines.
func parallel(n int, fn func(i int)) {
	var wg sync.WaitGroup
	next := make(chan int)
	for range min(n, maxProcs()) {
		wg.Go(func() {
			for i := range next {
				fn(i)
			}
		})
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
}

// Save writes the model as a HF checkpoint: config.json and its weights in
// dtype (F32, F16 or BF16), in one file or shards files with an index.
func (m *Model) Save(dir string, dtype safetensors.DType, shards int) error {
	if err := m.Config.Save(filepath.Join(dir, "config.json")); err != nil {
		return err
	}
	specs := m.specs()
	ts := make([]safetensors.Tensor, 0, len(specs))
	for i := range specs {
		s := &specs[i]
		t, err := safetensors.FromF32(s.name, dtype, s.shape, s.target())
		if err != nil {
			return err
		}
		ts = append(ts, t)
	}
	if shards <= 1 {
		return safetensors.WriteFile(filepath.Join(dir, safetensors.SingleName), ts, map[string]string{"format": "pt"})
	}
	return safetensors.WriteSharded(dir, ts, shards)
}

// Save writes the config as a HF config.json.
func (c *Config) Save(path string) error {
	j := map[string]any{
		"architectures":           []string{c.Architecture},
		"model_type":              c.ModelType,
		"hidden_size":             c.HiddenSize,
		"intermediate_size":       c.IntermediateSize,
		"num_hidden_layers":       c.NumLayers,
		"num_attention_heads":     c.NumHeads,
		"num_key_value_heads":     c.NumKVHeads,
		"head_dim":                c.HeadDim,
		"vocab_size":              c.VocabSize,
		"max_position_embeddings": c.MaxPositions,
		"rms_norm_eps":            c.RMSNormEps,
		"rope_theta":              c.RopeTheta,
		"tie_word_embeddings":     c.TieEmbeddings,
		"hidden_act":              "silu",
		"torch_dtype":             c.TorchDType,
	}
	if c.ModelType != "qwen2" {
		j["attention_bias"] = c.QKVBias
	}
	if c.SlidingWindow > 0 {
		j["sliding_window"] = c.SlidingWindow
		if c.ModelType == "qwen2" {
			j["use_sliding_window"] = true
		}
	}
	if rs := c.RopeScaling; rs != nil {
		r := map[string]any{"rope_type": rs.Type, "factor": rs.Factor}
		if rs.Type == "llama3" {
			r["low_freq_factor"] = rs.LowFreqFactor
			r["high_freq_factor"] = rs.HighFreqFactor
			r["original_max_position_embeddings"] = rs.OriginalMaxPositions
		}
		j["rope_scaling"] = r
	}
	if len(c.EOSTokenIDs) > 0 {
		j["eos_token_id"] = c.EOSTokenIDs
	}
	if c.BOSTokenID >= 0 {
		j["bos_token_id"] = c.BOSTokenID
	}
	data, err := json.MarshalIndent(j, "", "  ")
	if err != nil {
		return fmt.Errorf("llama: %w", err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		return fmt.Errorf("llama: %w", err)
	}
	return nil
}
