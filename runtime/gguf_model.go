package runtime

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/pitstop-llm/pitstop/models/chat"
	"github.com/pitstop-llm/pitstop/models/gguf"
	"github.com/pitstop-llm/pitstop/models/llama"
	"github.com/pitstop-llm/pitstop/models/safetensors"
	"github.com/pitstop-llm/pitstop/models/tokenizer"
)

// loadGGUFModel loads a GGUF file: weights (quantized projections stay
// quantized), the tokenizer and the chat template from its metadata.
// Errors are one line naming the file.
func loadGGUFModel(path string, opt WeightsOptions) (*WeightsModel, error) {
	if opt.LoadFormat != "" && opt.LoadFormat != llama.FormatAuto {
		return nil, fmt.Errorf("model %s: --load-format %s does not apply to a GGUF file", path, opt.LoadFormat)
	}
	f, err := gguf.Open(path)
	if err != nil {
		return nil, fmt.Errorf("model %s: %w", path, err)
	}
	w, err := llama.LoadGGUF(f)
	if err != nil {
		return nil, fmt.Errorf("model %s: %w", path, err)
	}
	tj, err := llama.TokenizerJSON(f)
	if err != nil {
		return nil, fmt.Errorf("model %s: %w", path, err)
	}
	tok, err := tokenizer.Parse(tj)
	if err != nil {
		return nil, fmt.Errorf("model %s: tokenizer: %w", path, err)
	}
	if err := w.Config.CheckTokenizer(tok.VocabSize()); err != nil {
		return nil, fmt.Errorf("model %s: %w", path, err)
	}
	m := &WeightsModel{dir: filepath.Dir(path), weights: w, tok: tok, maxContext: w.Config.MaxPositions}
	m.tmpl, m.tmplSource, err = ggufTemplate(f, tok, opt)
	if err != nil {
		return nil, fmt.Errorf("model %s: %w", path, err)
	}
	if _, ok := tok.TokenID(m.tmpl.EndOfTurn()); !ok {
		return nil, fmt.Errorf("model %s: chat template %s ends turns with %q, which is not a token of its tokenizer; pick another template", path, m.tmpl.Name(), m.tmpl.EndOfTurn())
	}
	m.stop = stopTokens(m.tmpl, tok, w.Config.EOSTokenIDs)
	m.name = opt.Name
	if m.name == "" {
		m.name = strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	}
	return m, nil
}

// ggufTemplate is opt.Template when given, else the file's
// tokenizer.chat_template.
func ggufTemplate(f *gguf.File, tok *tokenizer.Tokenizer, opt WeightsOptions) (chat.Template, string, error) {
	if opt.Template != "" {
		return chooseTemplate(filepath.Dir(f.Path), &llama.Config{}, tok, opt.Template, opt.ToolParser)
	}
	if name := f.String("pitstop.chat_template"); name != "" {
		t, err := chat.Lookup(name)
		return t, "the file's pitstop.chat_template", err
	}
	src := f.String("tokenizer.chat_template")
	if src == "" {
		return nil, "", fmt.Errorf("no tokenizer.chat_template in the file; name one with --chat-template (%s, or a FILE.jinja)", strings.Join(chat.Names(), ", "))
	}
	token := func(key string) string {
		if id, ok := f.Uint(key); ok && int(id) < tok.VocabSize() {
			return tok.Token(int32(id))
		}
		return ""
	}
	t, err := chat.NewJinja(src, chat.JinjaOptions{Name: "jinja", BOS: token("tokenizer.ggml.bos_token_id"),
		EOS: token("tokenizer.ggml.eos_token_id"), ToolParser: opt.ToolParser})
	if err != nil {
		return nil, "", fmt.Errorf("tokenizer.chat_template: %w", err)
	}
	return t, "the file's tokenizer.chat_template (Jinja)", nil
}

// WriteGGUF writes a model loaded from a directory as a GGUF file: its
// weights in quant, its tokenizer and its chat template (the Jinja source,
// or a built-in template's name under pitstop.chat_template).
func WriteGGUF(m *WeightsModel, path string, quant gguf.TensorType) error {
	if m.weights.Layers[0].Quant.WQKV != nil || m.weights.QLMHead != nil {
		return fmt.Errorf("convert: %s is already quantized; convert its original", m.name)
	}
	tj, err := os.ReadFile(filepath.Join(m.dir, "tokenizer.json"))
	if err != nil {
		return fmt.Errorf("convert: %w", err)
	}
	var jinjaSrc string
	if j, ok := m.tmpl.(*chat.Jinja); ok {
		jinjaSrc = j.Source()
	}
	eos, bos := int32(-1), m.weights.Config.BOSTokenID
	if len(m.stop) > 0 {
		eos = m.stop[0]
	}
	meta, err := llama.TokenizerMetadata(tj, jinjaSrc, eos, bos)
	if err != nil {
		return fmt.Errorf("convert %s: %w", m.dir, err)
	}
	if jinjaSrc == "" {
		meta = append(meta, gguf.KV{Key: "pitstop.chat_template", Value: m.tmpl.Name()})
	}
	return m.weights.WriteGGUF(path, llama.GGUFOptions{Quant: quant, Metadata: meta, Name: m.name})
}

// GGUFToHF writes a GGUF file as a Hugging Face model directory:
// config.json (with the file's pitstop.chat_template, when it has one),
// model.safetensors in float32 (quantized tensors dequantized: the weights
// the quantized model computes with), tokenizer.json, and
// tokenizer_config.json with the chat template and EOS token.
func GGUFToHF(path, dir string) error {
	f, err := gguf.Open(path)
	if err != nil {
		return err
	}
	m, err := llama.LoadGGUF(f)
	if err != nil {
		return fmt.Errorf("gguf %s: %w", path, err)
	}
	tj, err := llama.TokenizerJSON(f)
	if err != nil {
		return fmt.Errorf("gguf %s: %w", path, err)
	}
	tok, err := tokenizer.Parse(tj)
	if err != nil {
		return fmt.Errorf("gguf %s: tokenizer: %w", path, err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := m.Dequantized().Save(dir, safetensors.F32, 1); err != nil {
		return err
	}
	if name := f.String("pitstop.chat_template"); name != "" {
		cfgPath := filepath.Join(dir, "config.json")
		raw, err := os.ReadFile(cfgPath)
		if err != nil {
			return err
		}
		var cfg map[string]any
		if err := json.Unmarshal(raw, &cfg); err != nil {
			return err
		}
		cfg["pitstop_chat_template"] = name
		if raw, err = json.MarshalIndent(cfg, "", "  "); err != nil {
			return err
		}
		if err := os.WriteFile(cfgPath, raw, 0o644); err != nil {
			return err
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "tokenizer.json"), tj, 0o644); err != nil {
		return err
	}
	tc := map[string]any{}
	if s := f.String("tokenizer.chat_template"); s != "" {
		tc["chat_template"] = s
	}
	if id, ok := f.Uint("tokenizer.ggml.eos_token_id"); ok && int(id) < tok.VocabSize() {
		tc["eos_token"] = tok.Token(int32(id))
	}
	raw, err := json.MarshalIndent(tc, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "tokenizer_config.json"), raw, 0o644)
}
