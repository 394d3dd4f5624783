package llama

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/pitstop-llm/pitstop/models/safetensors"
)

func tiny(modelType string) Config {
	c := Config{
		ModelType: modelType, HiddenSize: 32, IntermediateSize: 48, NumLayers: 2,
		NumHeads: 4, NumKVHeads: 2, HeadDim: 8, VocabSize: 50, MaxPositions: 256,
		RMSNormEps: 1e-5, RopeTheta: 10000, BOSTokenID: -1,
	}
	switch modelType {
	case "qwen2":
		c.Architecture, c.QKVBias, c.TieEmbeddings = "Qwen2ForCausalLM", true, true
	case "mistral":
		c.Architecture, c.SlidingWindow = "MistralForCausalLM", 6
	default:
		c.Architecture = "LlamaForCausalLM"
		c.RopeScaling = &RopeScaling{Type: "llama3", Factor: 8, LowFreqFactor: 1, HighFreqFactor: 4, OriginalMaxPositions: 64}
	}
	return c
}

func TestParseConfigs(t *testing.T) {
	qwen := `{"architectures":["Qwen2ForCausalLM"],"model_type":"qwen2","hidden_size":896,"intermediate_size":4864,
	"num_hidden_layers":24,"num_attention_heads":14,"num_key_value_heads":2,"max_position_embeddings":32768,
	"rms_norm_eps":1e-06,"rope_theta":1000000.0,"sliding_window":32768,"use_sliding_window":false,
	"tie_word_embeddings":true,"vocab_size":151936,"eos_token_id":151645,"bos_token_id":151643,"hidden_act":"silu","torch_dtype":"bfloat16"}`
	c, err := ParseConfig([]byte(qwen))
	if err != nil {
		t.Fatal(err)
	}
	if c.HeadDim != 64 || !c.QKVBias || c.OBias || !c.TieEmbeddings || c.SlidingWindow != 0 || c.RopeTheta != 1e6 || !slices.Equal(c.EOSTokenIDs, []int32{151645}) {
		t.Fatalf("qwen2 config parsed as %+v", c)
	}
	if p := c.Params(); p < 490e6 || p > 500e6 { // Qwen2.5-0.5B: 494M
		t.Fatalf("Qwen2.5-0.5B has %d parameters, want ~494M", p)
	}
	llama := `{"architectures":["LlamaForCausalLM"],"hidden_size":4096,"intermediate_size":14336,"num_hidden_layers":32,
	"num_attention_heads":32,"num_key_value_heads":8,"rms_norm_eps":1e-05,"rope_theta":500000.0,"vocab_size":128256,
	"rope_scaling":{"factor":8.0,"low_freq_factor":1.0,"high_freq_factor":4.0,"original_max_position_embeddings":8192,"rope_type":"llama3"},
	"eos_token_id":[128001,128008,128009],"max_position_embeddings":131072}`
	c, err = ParseConfig([]byte(llama))
	if err != nil {
		t.Fatal(err)
	}
	if c.ModelType != "llama" || c.RopeScaling == nil || c.RopeScaling.Type != "llama3" || len(c.EOSTokenIDs) != 3 || c.KVBytesPerToken() != 32*2*1024*4 {
		t.Fatalf("llama config parsed as %+v", c)
	}
	if p := c.Params(); p < 8.0e9 || p > 8.1e9 {
		t.Fatalf("Llama-3.1-8B has %d parameters, want ~8.03B", p)
	}
	inv := c.InvFreq()
	base := (&Config{HeadDim: 128, RopeTheta: 500000}).InvFreq()
	if inv[0] != base[0] || math.Abs(inv[63]-base[63]/8) > 1e-18 {
		t.Fatalf("llama3 scaling: inv[0] %g (base %g), inv[63] %g (base/8 %g)", inv[0], base[0], inv[63], base[63]/8)
	}
	for i := range inv { // scaled frequencies lie between base/8 and base
		if inv[i] > base[i]*(1+1e-12) || inv[i] < base[i]/8*(1-1e-12) {
			t.Fatalf("inv[%d] = %g outside [%g, %g]", i, inv[i], base[i]/8, base[i])
		}
	}
	mistral := `{"model_type":"mistral","hidden_size":64,"intermediate_size":128,"num_hidden_layers":1,"num_attention_heads":4,
	"num_key_value_heads":1,"vocab_size":10,"sliding_window":4096}`
	if c, err = ParseConfig([]byte(mistral)); err != nil || c.Architecture != "MistralForCausalLM" || c.SlidingWindow != 4096 {
		t.Fatalf("mistral: %+v, %v", c, err)
	}
}

func TestRejectsBadConfigs(t *testing.T) {
	cases := map[string]string{
		`{"architectures":["GPT2LMHeadModel"],"model_type":"gpt2","hidden_size":64}`: "GPT2LMHeadModel",
		`{"model_type":"phi3","hidden_size":64}`:                                     "phi3",
		`{"model_type":"llama","hidden_size":64,"intermediate_size":128,"num_hidden_layers":1,"num_attention_heads":4,"vocab_size":10,"rope_scaling":{"type":"yarn","factor":4}}`: "yarn",
		`{"model_type":"llama","hidden_size":64,"intermediate_size":128,"num_hidden_layers":1,"num_attention_heads":6,"num_key_value_heads":4,"vocab_size":10}`:                   "multiple",
		`{"model_type":"llama"`: "bad config.json",
	}
	for js, want := range cases {
		_, err := ParseConfig([]byte(js))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("config %s: error %v, want it to mention %q", js, err, want)
		}
	}
	_, err := ParseConfig([]byte(`{"architectures":["BertModel"]}`))
	if !errors.Is(err, ErrUnsupported) {
		t.Errorf("unsupported architecture does not wrap ErrUnsupported: %v", err)
	}
}

func TestSaveLoadRoundTrip(t *testing.T) {
	for _, mt := range []string{"llama", "qwen2", "mistral"} {
		m := NewDummy(tiny(mt), 7)
		for _, c := range []struct {
			dt     safetensors.DType
			shards int
		}{{safetensors.F32, 1}, {safetensors.BF16, 3}, {safetensors.F16, 1}} {
			dir := t.TempDir()
			if err := m.Save(dir, c.dt, c.shards); err != nil {
				t.Fatal(err)
			}
			got, err := Load(dir, LoadOptions{})
			if err != nil {
				t.Fatalf("%s %s: %v", mt, c.dt, err)
			}
			if !reflect.DeepEqual(got.Config, m.Config) {
				t.Fatalf("%s: config %+v after round trip, want %+v", mt, got.Config, m.Config)
			}
			tol := float32(0)
			if c.dt != safetensors.F32 {
				tol = 1.0 / 64
			}
			compare := func(name string, a, b []float32) {
				if len(a) != len(b) {
					t.Fatalf("%s %s %s: %d values, want %d", mt, c.dt, name, len(a), len(b))
				}
				for i := range a {
					if d := a[i] - b[i]; d > tol*max(1, abs(b[i])) || -d > tol*max(1, abs(b[i])) {
						t.Fatalf("%s %s %s[%d] = %g, want %g", mt, c.dt, name, i, a[i], b[i])
					}
				}
			}
			compare("embed", got.Embed, m.Embed)
			compare("lm_head", got.LMHead, m.LMHead)
			for i := range m.Layers {
				compare("qkv", got.Layers[i].WQKV, m.Layers[i].WQKV)
				compare("bias", got.Layers[i].BQKV, m.Layers[i].BQKV)
				compare("gateup", got.Layers[i].WGateUp, m.Layers[i].WGateUp)
				compare("down", got.Layers[i].WDown, m.Layers[i].WDown)
			}
			if m.Config.TieEmbeddings && &got.LMHead[0] != &got.Embed[0] {
				t.Fatal("tied embeddings loaded as two copies")
			}
		}
	}
}

func abs(x float32) float32 { return float32(math.Abs(float64(x))) }

func TestLoadErrors(t *testing.T) {
	m := NewDummy(tiny("llama"), 1)
	save := func() string {
		dir := t.TempDir()
		if err := m.Save(dir, safetensors.F32, 1); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	// Missing weights.
	dir := save()
	os.Remove(filepath.Join(dir, safetensors.SingleName))
	if _, err := Load(dir, LoadOptions{}); err == nil || !strings.Contains(err.Error(), "no model.safetensors") {
		t.Errorf("missing weights: %v", err)
	}
	if _, err := Load(dir, LoadOptions{LoadFormat: FormatDummy}); err != nil {
		t.Errorf("dummy load needs only config.json: %v", err)
	}
	// Missing config.
	if _, err := Load(t.TempDir(), LoadOptions{}); err == nil || !strings.Contains(err.Error(), "config.json") {
		t.Errorf("missing config: %v", err)
	}
	// Truncated weights.
	dir = save()
	p := filepath.Join(dir, safetensors.SingleName)
	data, _ := os.ReadFile(p)
	os.WriteFile(p, data[:len(data)-100], 0o644)
	if _, err := Load(dir, LoadOptions{}); err == nil || !strings.Contains(err.Error(), "truncated") {
		t.Errorf("truncated weights: %v", err)
	}
	// Shape mismatch: the config claims a bigger intermediate size.
	dir = save()
	c := m.Config
	c.IntermediateSize = 64
	c.Save(filepath.Join(dir, "config.json"))
	if _, err := Load(dir, LoadOptions{}); err == nil || !strings.Contains(err.Error(), "mlp.gate_proj.weight has shape [48 32], the config implies [64 32]") {
		t.Errorf("shape mismatch: %v", err)
	}
	// Missing tensor: the config claims one more layer.
	dir = save()
	c = m.Config
	c.NumLayers = 3
	c.Save(filepath.Join(dir, "config.json"))
	if _, err := Load(dir, LoadOptions{}); err == nil || !strings.Contains(err.Error(), "model.layers.2.input_layernorm.weight is missing") {
		t.Errorf("missing tensor: %v", err)
	}
	// Unsupported architecture.
	dir = save()
	os.WriteFile(filepath.Join(dir, "config.json"), []byte(`{"architectures":["MixtralForCausalLM"],"model_type":"mixtral"}`), 0o644)
	if _, err := Load(dir, LoadOptions{}); !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), "MixtralForCausalLM") {
		t.Errorf("unsupported architecture: %v", err)
	}
}

func TestDummyDeterministic(t *testing.T) {
	a, b := NewDummy(tiny("qwen2"), 3), NewDummy(tiny("qwen2"), 3)
	if !slices.Equal(a.Layers[1].WGateUp, b.Layers[1].WGateUp) || !slices.Equal(a.Embed, b.Embed) {
		t.Fatal("dummy weights differ for one seed")
	}
	if c := NewDummy(tiny("qwen2"), 4); slices.Equal(a.Embed, c.Embed) {
		t.Fatal("dummy weights equal for two seeds")
	}
}

func TestReferenceIsCausal(t *testing.T) {
	for _, mt := range []string{"llama", "qwen2", "mistral"} {
		m := NewDummy(tiny(mt), 9)
		toks := []int32{1, 5, 9, 2, 7, 3, 3, 8, 4, 1, 0, 49}
		full, err := m.Reference(toks)
		if err != nil {
			t.Fatal(err)
		}
		part, _ := m.Reference(toks[:7])
		for p := range part {
			if !slices.Equal(part[p], full[p]) {
				t.Fatalf("%s: logits at %d depend on later tokens", mt, p)
			}
		}
		for _, l := range full {
			for _, v := range l {
				if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
					t.Fatalf("%s: non-finite logit", mt)
				}
			}
		}
		if _, err := m.Reference([]int32{50}); err == nil {
			t.Fatal("out-of-vocabulary token accepted")
		}
	}
}

func TestBuiltins(t *testing.T) {
	want := map[string][2]float64{"llama-100m": {95e6, 105e6}, "llama-5m": {4e6, 5e6}}
	for _, name := range BuiltinNames() {
		c, ok := Builtin(name)
		if !ok || c.Validate() != nil {
			t.Fatalf("builtin %s: %v", name, c.Validate())
		}
		if r, ok := want[name]; ok && (float64(c.Params()) < r[0] || float64(c.Params()) > r[1]) {
			t.Fatalf("%s has %d parameters, want %g..%g", name, c.Params(), r[0], r[1])
		}
	}
	if _, ok := Builtin("nope"); ok {
		t.Fatal("unknown builtin found")
	}
}

func TestCheckTokenizer(t *testing.T) {
	c := tiny("qwen2") // vocab 50
	if err := c.CheckTokenizer(50); err != nil {
		t.Fatal(err)
	}
	if err := c.CheckTokenizer(40); err != nil { // padded embedding: fine
		t.Fatal(err)
	}
	if err := c.CheckTokenizer(51); err == nil || !strings.Contains(err.Error(), "does not match the model") {
		t.Fatalf("tokenizer larger than the embedding: %v", err)
	}
}
