package runtime

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/pitstop-llm/pitstop/models/builtin"
	"github.com/pitstop-llm/pitstop/models/chat"
	"github.com/pitstop-llm/pitstop/models/llama"
	"github.com/pitstop-llm/pitstop/models/tokenizer"
)

// WeightsOptions configures LoadWeightsModel.
type WeightsOptions struct {
	// Name is the model id clients ask for (default: the built-in model's
	// name, or the directory's base name).
	Name string
	// LoadFormat is llama.FormatAuto (""), FormatSafetensors or FormatDummy
	// (random weights from config.json: for timing, not for answers).
	LoadFormat string
	// Seed of dummy weights.
	Seed uint64
	// Template names the chat template (chat.Names) or a .jinja file,
	// overriding the one found in the model directory.
	Template string
	// ToolParser names the tool-call format of a Jinja template
	// (chat.ToolFormatNames); "" detects it from the template.
	ToolParser string
}

// WeightsModel is a model with real weights: a Hugging Face Llama-family
// directory (config.json, safetensors, tokenizer.json) or a built-in model
// (builtin:NAME). Its Script is nil: the executor runs the forward pass
// (models/cpu) and its sampled tokens are the model's output.
type WeightsModel struct {
	name       string
	dir        string
	weights    *llama.Model
	tmpl       chat.Template
	tmplSource string // where the template choice came from
	tok        *tokenizer.Tokenizer
	stop       []int32
	maxContext int
}

// LoadWeightsModel loads model: "builtin:NAME" (models/builtin) or a model
// directory. Errors are one line naming the file and what is wrong with it.
//
// The chat template is, in order: opt.Template (a name or a .jinja file);
// config.json's "pitstop_chat_template" (pitstop's own models); the
// model's own Jinja template, chat_template.jinja or tokenizer_config.json's
// "chat_template", rendered as it is (chat.Jinja); when that does not
// compile, the Go template it is recognised as (ChatML with <tool_call> →
// qwen2.5 when it has Qwen's default system prompt, else hermes; Llama 3
// headers → llama3.1); from model_type (qwen2 → qwen2.5; llama with a
// <|eot_id|> token → llama3.1). A model matching none is an error that asks
// for a template by name. Stop tokens are the template's stop strings that
// are tokens, the tokenizer's EOS ids (tokenizer_config.json,
// generation_config.json) and config.json's eos_token_id. The maximum
// context is config.json's max_position_embeddings.
func LoadWeightsModel(model string, opt WeightsOptions) (*WeightsModel, error) {
	dir, err := builtin.Resolve(model)
	if err != nil {
		return nil, fmt.Errorf("model %s: %w", model, err)
	}
	if strings.HasSuffix(strings.ToLower(model), ".gguf") {
		return loadGGUFModel(model, opt)
	}
	st, err := os.Stat(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("model %s: no such directory", model)
		}
		return nil, fmt.Errorf("model %s: %w", model, err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("model %s: not a directory (want a Hugging Face model directory with config.json, *.safetensors and tokenizer.json)", model)
	}
	if _, err := os.Stat(filepath.Join(dir, "config.json")); err != nil {
		return nil, fmt.Errorf("model %s: no config.json in %s", model, dir)
	}
	if _, err := os.Stat(filepath.Join(dir, "tokenizer.json")); err != nil {
		return nil, fmt.Errorf("model %s: no tokenizer.json in %s (pitstop reads Hugging Face tokenizer.json files)", model, dir)
	}
	w, err := llama.Load(dir, llama.LoadOptions{LoadFormat: opt.LoadFormat, Seed: opt.Seed})
	if err != nil {
		return nil, fmt.Errorf("model %s: %w", model, err)
	}
	tok, err := tokenizer.Load(dir)
	if err != nil {
		return nil, fmt.Errorf("model %s: %w", model, err)
	}
	if err := w.Config.CheckTokenizer(tok.VocabSize()); err != nil {
		return nil, fmt.Errorf("model %s: %w", model, err)
	}
	m := &WeightsModel{dir: dir, weights: w, tok: tok, maxContext: w.Config.MaxPositions}
	m.tmpl, m.tmplSource, err = chooseTemplate(dir, &w.Config, tok, opt.Template, opt.ToolParser)
	if err != nil {
		return nil, fmt.Errorf("model %s: %w", model, err)
	}
	if _, ok := tok.TokenID(m.tmpl.EndOfTurn()); !ok {
		return nil, fmt.Errorf("model %s: chat template %s ends turns with %q, which is not a token of its tokenizer; pick another template", model, m.tmpl.Name(), m.tmpl.EndOfTurn())
	}
	m.stop = stopTokens(m.tmpl, tok, w.Config.EOSTokenIDs)
	m.name = opt.Name
	if m.name == "" {
		if name, ok := strings.CutPrefix(model, builtin.Prefix); ok {
			m.name = name
		} else {
			m.name = filepath.Base(filepath.Clean(dir))
		}
	}
	return m, nil
}

// stopTokens are the ids that end a turn: the template's stop strings that
// are tokens, the tokenizer's EOS ids and the config's eos_token_id, in
// that order, without repeats.
func stopTokens(t chat.Template, tok *tokenizer.Tokenizer, cfgEOS []int32) []int32 {
	var out []int32
	add := func(id int32) {
		if id >= 0 && int(id) < tok.VocabSize() && !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	for _, s := range t.StopStrings() {
		if id, ok := tok.TokenID(s); ok {
			add(id)
		}
	}
	for _, id := range tok.EOSIDs() {
		add(id)
	}
	for _, id := range cfgEOS {
		add(id)
	}
	return out
}

// chooseTemplate picks the chat template of a model directory (see
// LoadWeightsModel) and says where the choice came from.
func chooseTemplate(dir string, c *llama.Config, tok *tokenizer.Tokenizer, override, toolParser string) (chat.Template, string, error) {
	if strings.HasSuffix(override, ".jinja") {
		src, err := os.ReadFile(override)
		if err != nil {
			return nil, "", fmt.Errorf("chat template: %w", err)
		}
		t, err := modelJinja(dir, string(src), filepath.Base(override), toolParser)
		return t, "read from " + override, err
	}
	if override != "" {
		t, err := chat.Lookup(override)
		return t, "chosen by name", err
	}
	var cfg struct {
		Template string `json:"pitstop_chat_template"`
	}
	if data, err := os.ReadFile(filepath.Join(dir, "config.json")); err == nil {
		if json.Unmarshal(data, &cfg) == nil && cfg.Template != "" {
			t, err := chat.Lookup(cfg.Template)
			if err != nil {
				return nil, "", fmt.Errorf("config.json: pitstop_chat_template: %w", err)
			}
			return t, "config.json pitstop_chat_template", nil
		}
	}
	src, file := ownTemplate(dir)
	if src != "" {
		t, err := modelJinja(dir, src, file, toolParser)
		if err == nil {
			return t, "the model's own " + file + " (Jinja)", nil
		}
		if name := recognizeTemplate(src); name != "" {
			t, lerr := chat.Lookup(name)
			return t, fmt.Sprintf("recognised from %s, whose Jinja does not compile (%v)", file, err), lerr
		}
		return nil, "", fmt.Errorf("%s: %w", file, err)
	}
	switch {
	case c.ModelType == "qwen2":
		t, err := chat.Lookup("qwen2.5")
		return t, "model_type qwen2", err
	case c.ModelType == "llama" && hasToken(tok, "<|eot_id|>"):
		t, err := chat.Lookup("llama3.1")
		return t, "model_type llama with <|eot_id|>", err
	case hasToken(tok, "<|im_start|>") && hasToken(tok, "<|im_end|>"):
		t, err := chat.Lookup("hermes")
		return t, "ChatML tokens in the tokenizer", err
	}
	return nil, "", fmt.Errorf("no chat template recognised for model_type %q (pitstop knows %s); name one with --chat-template", c.ModelType, strings.Join(chat.Names(), ", "))
}

// ownTemplate is the model's Jinja chat template and the file it is in:
// chat_template.jinja, else tokenizer_config.json's chat_template.
func ownTemplate(dir string) (src, file string) {
	if data, err := os.ReadFile(filepath.Join(dir, "chat_template.jinja")); err == nil && len(data) > 0 {
		return string(data), "chat_template.jinja"
	}
	if data, err := os.ReadFile(filepath.Join(dir, "tokenizer_config.json")); err == nil {
		var tc struct {
			ChatTemplate json.RawMessage `json:"chat_template"`
		}
		if json.Unmarshal(data, &tc) == nil {
			return templateText(tc.ChatTemplate), "tokenizer_config.json chat_template"
		}
	}
	return "", ""
}

// modelJinja compiles a model's Jinja template with the bos_token and
// eos_token of its tokenizer_config.json.
func modelJinja(dir, src, file, toolParser string) (*chat.Jinja, error) {
	var tc struct {
		BOS json.RawMessage `json:"bos_token"`
		EOS json.RawMessage `json:"eos_token"`
	}
	if data, err := os.ReadFile(filepath.Join(dir, "tokenizer_config.json")); err == nil {
		_ = json.Unmarshal(data, &tc) // a malformed file was reported by the tokenizer
	}
	name := "jinja"
	if strings.HasSuffix(file, ".jinja") && file != "chat_template.jinja" {
		name = file // a template given by path
	}
	return chat.NewJinja(src, chat.JinjaOptions{Name: name, BOS: tokenText(tc.BOS), EOS: tokenText(tc.EOS), ToolParser: toolParser})
}

// tokenText is a token of tokenizer_config.json: a string or an object
// with its "content".
func tokenText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var o struct {
		Content string `json:"content"`
	}
	_ = json.Unmarshal(raw, &o)
	return o.Content
}

func hasToken(tok *tokenizer.Tokenizer, s string) bool {
	_, ok := tok.TokenID(s)
	return ok
}

// templateText is tokenizer_config.json's chat_template: a Jinja string, or
// a list of {name, template} of which "default" (else the first) is used.
func templateText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var list []struct {
		Name     string `json:"name"`
		Template string `json:"template"`
	}
	if json.Unmarshal(raw, &list) != nil || len(list) == 0 {
		return ""
	}
	for _, t := range list {
		if t.Name == "default" {
			return t.Template
		}
	}
	return list[0].Template
}

// recognizeTemplate names the models/chat template a Jinja chat template
// corresponds to, or "" when none does.
func recognizeTemplate(jinja string) string {
	switch {
	case jinja == "":
		return ""
	case strings.Contains(jinja, "<|start_header_id|>") && strings.Contains(jinja, "<|eot_id|>"):
		return "llama3.1"
	case strings.Contains(jinja, "<|im_start|>"):
		if strings.Contains(jinja, "You are Qwen") {
			return "qwen2.5"
		}
		return "hermes"
	}
	return ""
}

func (m *WeightsModel) Name() string                    { return m.name }
func (m *WeightsModel) Template() chat.Template         { return m.tmpl }
func (m *WeightsModel) Tokenizer() *tokenizer.Tokenizer { return m.tok }

// Script is nil: the executor's sampled tokens are the model's output.
func (m *WeightsModel) Script(*Turn) []int32 { return nil }

// StopTokens are the ids that end a turn (see LoadWeightsModel).
func (m *WeightsModel) StopTokens() []int32 { return slices.Clone(m.stop) }

// MaxContext is the most tokens a sequence may hold: config.json's
// max_position_embeddings.
func (m *WeightsModel) MaxContext() int { return m.maxContext }

// Weights are the model's weights, for the executor.
func (m *WeightsModel) Weights() *llama.Model { return m.weights }

// Dir is the model directory.
func (m *WeightsModel) Dir() string { return m.dir }

// Describe is a one-line description: architecture, size, weights, template.
func (m *WeightsModel) Describe() string {
	c := &m.weights.Config
	tmpl := m.tmplSource
	if j, ok := m.tmpl.(*chat.Jinja); ok {
		tmpl += ", tool calls " + j.ToolFormat().Name
	}
	return fmt.Sprintf("%s (%s, %.2fM parameters, %d layers, d %d), weights %s, chat template %s (%s), %d stop tokens, max context %d",
		m.name, c.Architecture, float64(c.Params())/1e6, c.NumLayers, c.HiddenSize, m.weights.Source, m.tmpl.Name(), tmpl, len(m.stop), m.maxContext)
}
