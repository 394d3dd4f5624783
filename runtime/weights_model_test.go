package runtime

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/pitstop-llm/pitstop/models/builtin"
	"github.com/pitstop-llm/pitstop/models/chat"
	"github.com/pitstop-llm/pitstop/models/llama"
	"github.com/pitstop-llm/pitstop/models/tokenizer"
)

func TestWeightsModelTiny(t *testing.T) {
	m, err := LoadWeightsModel("builtin:tiny-tools", WeightsOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if m.Name() != "tiny-tools" || m.Template().Name() != "qwen2.5" || m.MaxContext() != 2048 || m.Script(&Turn{}) != nil {
		t.Errorf("name %q, template %q, max context %d", m.Name(), m.Template().Name(), m.MaxContext())
	}
	// <|im_end|> (the template's end of turn, tokenizer_config's EOS) and
	// <|endoftext|> (the template's other stop string, config.json's eos).
	imEnd, _ := m.Tokenizer().TokenID("<|im_end|>")
	eot, _ := m.Tokenizer().TokenID("<|endoftext|>")
	if got := m.StopTokens(); !slices.Equal(got, []int32{imEnd, eot}) {
		t.Errorf("stop tokens %v, want [%d %d]", got, imEnd, eot)
	}
	if !strings.Contains(m.Describe(), "qwen2.5 (config.json pitstop_chat_template)") {
		t.Errorf("describe: %s", m.Describe())
	}
	// The runtime decodes the tiny tokenizer's <tool_call> (flagged
	// special) for the parser, and stops on both stop tokens.
	rt, err := New(Config{Model: m})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	call, _ := m.Tokenizer().TokenID("<tool_call>")
	if rt.markup[call] != "<tool_call>" || !rt.stop[imEnd] || !rt.stop[eot] || rt.ctxCap != 2048 || rt.cfg.MaxContextTokens != 2048 {
		t.Errorf("markup %v, stop %v, context cap %d, max context %d", rt.markup, rt.stop, rt.ctxCap, rt.cfg.MaxContextTokens)
	}
}

// modelDir writes a small model directory: the tiny model's tokenizer with
// the given config.json changes and tokenizer_config.json.
func modelDir(t *testing.T, cfg map[string]any, tokCfg map[string]any) string {
	t.Helper()
	src, err := builtin.Dir(builtin.TinyTools)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	tj, err := os.ReadFile(filepath.Join(src, "tokenizer.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "tokenizer.json"), tj, 0o644); err != nil {
		t.Fatal(err)
	}
	base := map[string]any{"architectures": []string{"LlamaForCausalLM"}, "model_type": "llama", "hidden_size": 32,
		"intermediate_size": 64, "num_hidden_layers": 1, "num_attention_heads": 2, "num_key_value_heads": 1,
		"vocab_size": 1024, "max_position_embeddings": 512, "rms_norm_eps": 1e-5, "tie_word_embeddings": true, "eos_token_id": 7}
	for k, v := range cfg {
		base[k] = v
	}
	write := func(name string, v any) {
		data, _ := json.Marshal(v)
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("config.json", base)
	if tokCfg != nil {
		write("tokenizer_config.json", tokCfg)
	}
	return dir
}

func TestWeightsModelTemplateChoice(t *testing.T) {
	qwenJinja := "{%- if messages[0]['role'] == 'system' %}{%- else %}<|im_start|>system\nYou are Qwen, created by Alibaba Cloud.<|im_end|>{%- endif %}<tool_call>"
	for _, c := range []struct {
		name     string
		cfg      map[string]any
		tokCfg   map[string]any
		override string
		want     string
	}{
		{"pitstop key", map[string]any{"pitstop_chat_template": "hermes"}, nil, "", "hermes"},
		{"own jinja", nil, map[string]any{"chat_template": qwenJinja}, "", "jinja"},
		{"broken qwen jinja", nil, map[string]any{"chat_template": "{% if %}" + qwenJinja}, "", "qwen2.5"},
		{"broken chatml jinja", nil, map[string]any{"chat_template": "{% for %}<|im_start|>{{ m }}<|im_end|>"}, "", "hermes"},
		{"jinja list", nil, map[string]any{"chat_template": []map[string]string{{"name": "tool_use", "template": "x"}, {"name": "default", "template": qwenJinja}}}, "", "jinja"},
		{"model_type qwen2", map[string]any{"architectures": []string{"Qwen2ForCausalLM"}, "model_type": "qwen2"}, nil, "", "qwen2.5"},
		{"ChatML tokens", nil, nil, "", "hermes"},
		{"override", map[string]any{"pitstop_chat_template": "hermes"}, nil, "qwen2.5", "qwen2.5"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := modelDir(t, c.cfg, c.tokCfg)
			m, err := LoadWeightsModel(dir, WeightsOptions{LoadFormat: llama.FormatDummy, Template: c.override})
			if err != nil {
				t.Fatal(err)
			}
			if m.Template().Name() != c.want {
				t.Errorf("template %s, want %s", m.Template().Name(), c.want)
			}
			// config.json's eos_token_id 7 is a stop token too.
			if !slices.Contains(m.StopTokens(), 7) || m.MaxContext() != 512 || m.Name() != filepath.Base(dir) {
				t.Errorf("stop %v, max context %d, name %s", m.StopTokens(), m.MaxContext(), m.Name())
			}
		})
	}
}

func TestRecognizeTemplate(t *testing.T) {
	for jinja, want := range map[string]string{
		"": "", "{{ bos_token }}[INST]": "",
		"<|start_header_id|>{{ role }}<|end_header_id|>{{ content }}<|eot_id|>": "llama3.1",
	} {
		if got := recognizeTemplate(jinja); got != want {
			t.Errorf("%q: %q, want %q", jinja, got, want)
		}
	}
	if _, err := chat.Lookup("llama3.1"); err != nil {
		t.Fatal(err)
	}
}

func TestWeightsModelErrors(t *testing.T) {
	noTok := t.TempDir()
	if err := os.WriteFile(filepath.Join(noTok, "config.json"), []byte(`{}`), 0o644); err != nil {
		t.Fatal(err)
	}
	badCfg := modelDir(t, map[string]any{"hidden_act": "gelu"}, nil)
	noWeights := modelDir(t, nil, nil)
	// A tokenizer without ChatML or Llama 3 tokens and a model_type that
	// names no template.
	mistral := modelDir(t, map[string]any{"architectures": []string{"MistralForCausalLM"}, "model_type": "mistral"}, nil)
	tok, err := tokenizer.Train([]string{"hello world"}, 300, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := tok.Save(filepath.Join(mistral, "tokenizer.json")); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ model, format, want string }{
		{"/nonexistent/model", "", "no such directory"},
		{"builtin:nope", "", "unknown built-in model"},
		{filepath.Join(noTok, "config.json"), "", "not a directory"},
		{t.TempDir(), "", "no config.json"},
		{noTok, "", "no tokenizer.json"},
		{badCfg, llama.FormatDummy, "hidden_act"},
		{noWeights, "", "safetensors"},
		{mistral, llama.FormatDummy, "--chat-template"},
		{noWeights, "gguf", "load format"},
	} {
		if c.model == noTok {
			if err := os.WriteFile(filepath.Join(noTok, "config.json"), []byte(`{}`), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		_, err := LoadWeightsModel(c.model, WeightsOptions{LoadFormat: c.format})
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s (%s): %v, want one line with %q", c.model, c.format, err, c.want)
		}
	}
}
