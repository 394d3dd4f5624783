package runtime

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pitstop-llm/pitstop/models/chat"
	"github.com/pitstop-llm/pitstop/models/gguf"
)

// tinyGGUF converts the built-in tiny model to a GGUF file of type quant.
func tinyGGUF(t *testing.T, quant gguf.TensorType) string {
	t.Helper()
	m, err := LoadWeightsModel("builtin:tiny-tools", WeightsOptions{})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "tiny.gguf")
	if err := WriteGGUF(m, path, quant); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestGGUFModel serves the tiny model from its Q8_0 GGUF file: the same
// template, stop tokens and tokenizer as the directory, quantized weights,
// and a request that answers.
func TestGGUFModel(t *testing.T) {
	path := tinyGGUF(t, gguf.Q8_0)
	m, err := LoadWeightsModel(path, WeightsOptions{})
	if err != nil {
		t.Fatal(err)
	}
	dir, _ := LoadWeightsModel("builtin:tiny-tools", WeightsOptions{})
	if m.Template().Name() != "qwen2.5" || m.Name() != "tiny" || m.Weights().Layers[0].Quant.WQKV == nil {
		t.Fatalf("template %s, name %s, quantized %v", m.Template().Name(), m.Name(), m.Weights().Layers[0].Quant.WQKV != nil)
	}
	if a, b := m.StopTokens(), dir.StopTokens(); len(a) != len(b) || a[0] != b[0] {
		t.Fatalf("stop tokens %v, directory's %v", a, b)
	}
	b, err := NewCPUBackend(m, CPUOptions{KVTokens: 2048, Calibrate: -1})
	if err != nil {
		t.Fatal(err)
	}
	rt := newTestRuntime(t, b.Apply(Config{ClientToolTTL: -1}))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := rt.ChatSync(ctx, ChatRequest{Messages: []chat.Message{{Role: "user", Content: "What is 17 times 23?"}}, Tools: builtinDecl(), MaxTokens: 60})
	if err != nil || len(res.Rounds) == 0 || res.Rounds[0].Calls[0].Name != "calculator" {
		t.Fatalf("Q8_0 tiny model: %+v %v", res, err)
	}
}

// TestTemplateRaises: a request that makes the chat template raise is
// invalid (HTTP 400) with the template's message; the runtime keeps serving.
func TestTemplateRaises(t *testing.T) {
	dir := t.TempDir()
	tmpl := filepath.Join(dir, "one.jinja")
	src := `{% if messages|length > 1 %}{{ raise_exception("this template takes one message") }}{% endif %}` +
		`{% for m in messages %}<|im_start|>{{ m.role }}` + "\n" + `{{ m.content }}<|im_end|>` + "\n" + `{% endfor %}<|im_start|>assistant` + "\n"
	if err := os.WriteFile(tmpl, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	m, err := LoadWeightsModel(tinyGGUF(t, gguf.F16), WeightsOptions{Template: tmpl})
	if err != nil {
		t.Fatal(err)
	}
	b, err := NewCPUBackend(m, CPUOptions{KVTokens: 2048, Calibrate: -1})
	if err != nil {
		t.Fatal(err)
	}
	rt := newTestRuntime(t, b.Apply(Config{ClientToolTTL: -1}))
	ctx := context.Background()
	two := []chat.Message{{Role: "user", Content: "a"}, {Role: "user", Content: "b"}}
	_, err = rt.ChatSync(ctx, ChatRequest{Messages: two, MaxTokens: 4})
	if e := AsError(err); e == nil || e.Kind != ErrInvalid || !strings.Contains(e.Msg, "this template takes one message") {
		t.Fatalf("error %v, want invalid with the template's message", err)
	}
	if _, err := rt.ChatSync(ctx, ChatRequest{Messages: two[:1], MaxTokens: 4}); err != nil {
		t.Fatalf("after the raise: %v", err)
	}
}

// TestBadGGUF: bad files are one-line errors naming the file.
func TestBadGGUF(t *testing.T) {
	path := tinyGGUF(t, gguf.Q4_0)
	data, _ := os.ReadFile(path)
	dir := t.TempDir()
	cut := filepath.Join(dir, "cut.gguf")
	os.WriteFile(cut, data[:len(data)/2], 0o644)
	_, err := LoadWeightsModel(cut, WeightsOptions{})
	if err == nil || !strings.Contains(err.Error(), cut) || !strings.Contains(err.Error(), "truncated") {
		t.Fatalf("truncated: %v", err)
	}
	if _, err := LoadWeightsModel(filepath.Join(dir, "none.gguf"), WeightsOptions{}); err == nil || !strings.Contains(err.Error(), "none.gguf") {
		t.Fatalf("missing: %v", err)
	}
}

// TestGGUFToHF: an F32 GGUF file written back as a directory loads as the
// original model, bit for bit, with its template and tokenizer.
func TestGGUFToHF(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "hf")
	if err := GGUFToHF(tinyGGUF(t, gguf.F32), dir); err != nil {
		t.Fatal(err)
	}
	back, err := LoadWeightsModel(dir, WeightsOptions{})
	if err != nil {
		t.Fatal(err)
	}
	orig, _ := LoadWeightsModel("builtin:tiny-tools", WeightsOptions{})
	if back.Template().Name() != orig.Template().Name() || back.Tokenizer().VocabSize() != orig.Tokenizer().VocabSize() {
		t.Fatalf("template %s, vocabulary %d", back.Template().Name(), back.Tokenizer().VocabSize())
	}
	a, b := orig.Weights(), back.Weights()
	for i := range a.Layers {
		if !slices.Equal(a.Layers[i].WQKV, b.Layers[i].WQKV) || !slices.Equal(a.Layers[i].WDown, b.Layers[i].WDown) {
			t.Fatalf("layer %d differs", i)
		}
	}
	if !slices.Equal(a.Embed, b.Embed) {
		t.Fatal("embedding differs")
	}
	text := "<|im_start|>user\nWhat is 12*7?<|im_end|>"
	if !slices.Equal(orig.Tokenizer().Encode(text, true), back.Tokenizer().Encode(text, true)) {
		t.Fatal("tokenizer differs")
	}
}
