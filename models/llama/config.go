// Package llama is the Llama family of decoder-only transformers as Hugging
// Face stores them (config.json + safetensors): Llama 2/3.x, Qwen2/2.5 and
// Mistral. It loads configurations and weights (or deterministic dummy
// weights for benchmarks) and has a plain single-sequence reference forward
// pass; the batched forward over paged KV blocks lives in models/cpu.
//
// Every computation is float32: weights stored as F16 or BF16 are converted at
// load.
package llama

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// ErrUnsupported is wrapped by errors about configurations this package does
// not implement (another architecture, an unknown RoPE scaling).
var ErrUnsupported = errors.New("unsupported model")

// Architectures lists the HF architecture names that load.
var Architectures = []string{"LlamaForCausalLM", "Qwen2ForCausalLM", "MistralForCausalLM"}

var modelTypes = map[string]string{"llama": "LlamaForCausalLM", "qwen2": "Qwen2ForCausalLM", "mistral": "MistralForCausalLM"}

// RopeScaling is config.json's rope_scaling.
type RopeScaling struct {
	Type                          string  // "linear" or "llama3"
	Factor                        float64 // both
	LowFreqFactor, HighFreqFactor float64 // llama3
	OriginalMaxPositions          int     // llama3
}

// Config is the subset of a HF config.json the forward pass needs.
type Config struct {
	Architecture     string // e.g. "Qwen2ForCausalLM"
	ModelType        string // "llama", "qwen2", "mistral"
	HiddenSize       int
	IntermediateSize int
	NumLayers        int
	NumHeads         int
	NumKVHeads       int
	HeadDim          int
	VocabSize        int
	MaxPositions     int
	RMSNormEps       float64
	RopeTheta        float64
	RopeScaling      *RopeScaling
	TieEmbeddings    bool
	// QKVBias: q, k and v projections have biases (Qwen2 always; Llama with
	// attention_bias, which also biases o_proj: OBias).
	QKVBias, OBias bool
	// SlidingWindow > 0 limits attention to the last SlidingWindow positions
	// (Mistral v0.1; Qwen2 only with use_sliding_window).
	SlidingWindow int
	EOSTokenIDs   []int32
	BOSTokenID    int32 // -1 when none
	TorchDType    string
}

type configJSON struct {
	Architectures     []string        `json:"architectures"`
	ModelType         string          `json:"model_type"`
	HiddenSize        int             `json:"hidden_size"`
	IntermediateSize  int             `json:"intermediate_size"`
	NumHiddenLayers   int             `json:"num_hidden_layers"`
	NumAttentionHeads int             `json:"num_attention_heads"`
	NumKeyValueHeads  *int            `json:"num_key_value_heads"`
	HeadDim           *int            `json:"head_dim"`
	VocabSize         int             `json:"vocab_size"`
	MaxPositions      int             `json:"max_position_embeddings"`
	RMSNormEps        *float64        `json:"rms_norm_eps"`
	RopeTheta         *float64        `json:"rope_theta"`
	RopeScaling       map[string]any  `json:"rope_scaling"`
	TieWordEmbeddings *bool           `json:"tie_word_embeddings"`
	AttentionBias     *bool           `json:"attention_bias"`
	MLPBias           bool            `json:"mlp_bias"`
	HiddenAct         string          `json:"hidden_act"`
	SlidingWindow     *int            `json:"sliding_window"`
	UseSlidingWindow  *bool           `json:"use_sliding_window"`
	EOSTokenID        json.RawMessage `json:"eos_token_id"`
	BOSTokenID        *int32          `json:"bos_token_id"`
	TorchDType        string          `json:"torch_dtype"`
}

// LoadConfig reads dir/config.json (or a path to a .json file).
func LoadConfig(path string) (*Config, error) {
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		path = filepath.Join(path, "config.json")
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("llama: config: %w", err)
	}
	c, err := ParseConfig(data)
	if err != nil {
		return nil, fmt.Errorf("llama: %s: %w", path, err)
	}
	return c, nil
}

// ParseConfig decodes and validates a HF config.json.
func ParseConfig(data []byte) (*Config, error) {
	var j configJSON
	if err := json.Unmarshal(data, &j); err != nil {
		return nil, fmt.Errorf("bad config.json: %w", err)
	}
	c := &Config{
		ModelType:        j.ModelType,
		HiddenSize:       j.HiddenSize,
		IntermediateSize: j.IntermediateSize,
		NumLayers:        j.NumHiddenLayers,
		NumHeads:         j.NumAttentionHeads,
		VocabSize:        j.VocabSize,
		MaxPositions:     j.MaxPositions,
		RMSNormEps:       1e-6,
		RopeTheta:        10000,
		BOSTokenID:       -1,
		TorchDType:       j.TorchDType,
	}
	// Architecture: the architectures list when given, else model_type.
	switch {
	case len(j.Architectures) > 0:
		c.Architecture = j.Architectures[0]
		if len(j.Architectures) > 1 {
			return nil, fmt.Errorf("%w: config lists several architectures %v", ErrUnsupported, j.Architectures)
		}
	case modelTypes[j.ModelType] != "":
		c.Architecture = modelTypes[j.ModelType]
	default:
		return nil, fmt.Errorf("%w: config names no architecture and model_type %q (supported: %s)", ErrUnsupported, j.ModelType, strings.Join(Architectures, ", "))
	}
	if !slices.Contains(Architectures, c.Architecture) {
		return nil, fmt.Errorf("%w: architecture %q (model_type %q) is not a Llama-family model this engine runs (supported: %s)", ErrUnsupported, c.Architecture, j.ModelType, strings.Join(Architectures, ", "))
	}
	if c.ModelType == "" {
		for t, a := range modelTypes {
			if a == c.Architecture {
				c.ModelType = t
			}
		}
	}
	if j.HiddenAct != "" && j.HiddenAct != "silu" {
		return nil, fmt.Errorf("%w: hidden_act %q (only silu)", ErrUnsupported, j.HiddenAct)
	}
	if j.MLPBias {
		return nil, fmt.Errorf("%w: mlp_bias", ErrUnsupported)
	}
	c.NumKVHeads = c.NumHeads
	if j.NumKeyValueHeads != nil {
		c.NumKVHeads = *j.NumKeyValueHeads
	}
	if c.NumHeads > 0 {
		c.HeadDim = c.HiddenSize / c.NumHeads
	}
	if j.HeadDim != nil {
		c.HeadDim = *j.HeadDim
	}
	if j.RMSNormEps != nil {
		c.RMSNormEps = *j.RMSNormEps
	}
	if j.RopeTheta != nil {
		c.RopeTheta = *j.RopeTheta
	}
	if j.TieWordEmbeddings != nil {
		c.TieEmbeddings = *j.TieWordEmbeddings
	}
	switch c.ModelType {
	case "qwen2":
		c.QKVBias = true
		if j.SlidingWindow != nil && j.UseSlidingWindow != nil && *j.UseSlidingWindow {
			c.SlidingWindow = *j.SlidingWindow
		}
	case "mistral":
		if j.SlidingWindow != nil {
			c.SlidingWindow = *j.SlidingWindow
		}
	}
	if j.AttentionBias != nil && *j.AttentionBias {
		c.QKVBias = true
		if c.ModelType != "qwen2" {
			c.OBias = true
		}
	}
	if j.BOSTokenID != nil {
		c.BOSTokenID = *j.BOSTokenID
	}
	if len(j.EOSTokenID) > 0 && string(j.EOSTokenID) != "null" {
		var one int32
		if err := json.Unmarshal(j.EOSTokenID, &one); err == nil {
			c.EOSTokenIDs = []int32{one}
		} else if err := json.Unmarshal(j.EOSTokenID, &c.EOSTokenIDs); err != nil {
			return nil, fmt.Errorf("bad eos_token_id %s", j.EOSTokenID)
		}
	}
	if len(j.RopeScaling) > 0 {
		rs, err := parseRopeScaling(j.RopeScaling)
		if err != nil {
			return nil, err
		}
		c.RopeScaling = rs
	}
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return c, nil
}

func parseRopeScaling(m map[string]any) (*RopeScaling, error) {
	typ, _ := m["rope_type"].(string)
	if typ == "" {
		typ, _ = m["type"].(string)
	}
	num := func(k string) float64 {
		f, _ := m[k].(float64)
		return f
	}
	rs := &RopeScaling{Type: typ, Factor: num("factor")}
	switch typ {
	case "default", "":
		return nil, nil
	case "linear":
	case "llama3":
		rs.LowFreqFactor = num("low_freq_factor")
		rs.HighFreqFactor = num("high_freq_factor")
		rs.OriginalMaxPositions = int(num("original_max_position_embeddings"))
		if rs.LowFreqFactor <= 0 || rs.HighFreqFactor <= rs.LowFreqFactor || rs.OriginalMaxPositions <= 0 {
			return nil, fmt.Errorf("bad llama3 rope_scaling %v: need 0 < low_freq_factor < high_freq_factor and original_max_position_embeddings > 0", m)
		}
	default:
		return nil, fmt.Errorf("%w: rope_scaling type %q (supported: linear, llama3)", ErrUnsupported, typ)
	}
	if !(rs.Factor > 0) {
		return nil, fmt.Errorf("bad rope_scaling %v: factor must be positive", m)
	}
	return rs, nil
}

// Validate checks that the sizes are consistent.
func (c *Config) Validate() error {
	switch {
	case c.HiddenSize <= 0 || c.IntermediateSize <= 0 || c.NumLayers <= 0 || c.NumHeads <= 0 || c.VocabSize <= 0:
		return fmt.Errorf("config: hidden_size, intermediate_size, num_hidden_layers, num_attention_heads and vocab_size must be positive (got %d, %d, %d, %d, %d)",
			c.HiddenSize, c.IntermediateSize, c.NumLayers, c.NumHeads, c.VocabSize)
	case c.NumKVHeads <= 0 || c.NumHeads%c.NumKVHeads != 0:
		return fmt.Errorf("config: num_attention_heads %d is not a multiple of num_key_value_heads %d", c.NumHeads, c.NumKVHeads)
	case c.HeadDim <= 0 || c.HeadDim%2 != 0:
		return fmt.Errorf("config: head_dim %d must be positive and even (RoPE rotates pairs)", c.HeadDim)
	case !(c.RMSNormEps > 0) || !(c.RopeTheta > 0):
		return fmt.Errorf("config: rms_norm_eps and rope_theta must be positive")
	case c.SlidingWindow < 0:
		return fmt.Errorf("config: negative sliding_window")
	}
	return nil
}

// QDim is the width of the query projection (heads × head_dim).
func (c *Config) QDim() int { return c.NumHeads * c.HeadDim }

// KVDim is the width of the key and value projections.
func (c *Config) KVDim() int { return c.NumKVHeads * c.HeadDim }

// KVBytesPerToken is the float32 KV cache size of one token over all layers.
func (c *Config) KVBytesPerToken() int { return c.NumLayers * 2 * c.KVDim() * 4 }

// Params counts the model's parameters (tied embeddings counted once).
func (c *Config) Params() int64 {
	h, i := int64(c.HiddenSize), int64(c.IntermediateSize)
	q, kv := int64(c.QDim()), int64(c.KVDim())
	layer := h*(q+2*kv) + q*h + 3*h*i + 2*h
	if c.QKVBias {
		layer += q + 2*kv
	}
	if c.OBias {
		layer += h
	}
	n := int64(c.NumLayers)*layer + int64(c.VocabSize)*h + h
	if !c.TieEmbeddings {
		n += int64(c.VocabSize) * h
	}
	return n
}

// InvFreq returns RoPE's inverse frequencies (head_dim/2 of them), scaled as
// rope_scaling says.
func (c *Config) InvFreq() []float64 {
	half := c.HeadDim / 2
	inv := make([]float64, half)
	for i := range inv {
		inv[i] = 1 / math.Pow(c.RopeTheta, float64(2*i)/float64(c.HeadDim))
	}
	rs := c.RopeScaling
	if rs == nil {
		return inv
	}
	switch rs.Type {
	case "linear":
		for i := range inv {
			inv[i] /= rs.Factor
		}
	case "llama3": // transformers' _compute_llama3_parameters
		old := float64(rs.OriginalMaxPositions)
		lowWave, highWave := old/rs.LowFreqFactor, old/rs.HighFreqFactor
		for i, f := range inv {
			wave := 2 * math.Pi / f
			switch {
			case wave < highWave:
			case wave > lowWave:
				inv[i] = f / rs.Factor
			default:
				smooth := (old/wave - rs.LowFreqFactor) / (rs.HighFreqFactor - rs.LowFreqFactor)
				inv[i] = (1-smooth)*f/rs.Factor + smooth*f
			}
		}
	}
	return inv
}

// CheckTokenizer reports whether a tokenizer of tokenizerVocab ids (one more
// than its largest id, as tokenizer.Tokenizer.VocabSize gives) fits this
// model: every id must have an embedding row. A model's vocab_size may be
// larger (padded, as Qwen2's is), never smaller.
func (c *Config) CheckTokenizer(tokenizerVocab int) error {
	if tokenizerVocab <= 0 {
		return fmt.Errorf("llama: the tokenizer has no tokens")
	}
	if tokenizerVocab > c.VocabSize {
		return fmt.Errorf("llama: the tokenizer does not match the model: it has ids up to %d, the model's embedding has %d rows (vocab_size); is the tokenizer.json from another model?", tokenizerVocab-1, c.VocabSize)
	}
	return nil
}
