package builtin

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/pitstop-llm/pitstop/models/llama"
	"github.com/pitstop-llm/pitstop/models/tokenizer"
)

func TestTinyToolsLoads(t *testing.T) {
	if !slices.Contains(Names(), TinyTools) {
		t.Fatalf("built-in models %v lack %s", Names(), TinyTools)
	}
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	t.Setenv("HOME", t.TempDir())
	dir, err := Resolve(Prefix + TinyTools)
	if err != nil {
		t.Fatal(err)
	}
	again, err := Dir(TinyTools)
	if err != nil || again != dir {
		t.Fatalf("second Dir = %q, %v; want %q", again, err, dir)
	}
	cfg, err := llama.LoadConfig(dir)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := tokenizer.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := cfg.CheckTokenizer(tok.VocabSize()); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"<|im_start|>", "<|im_end|>", "<tool_call>", "</tool_call>", "<|endoftext|>"} {
		if _, ok := tok.TokenID(s); !ok {
			t.Errorf("tokenizer lacks %s", s)
		}
	}
	if eos, ok := tok.EOS(); !ok || tok.Token(eos) != "<|im_end|>" {
		t.Errorf("EOS is %q, want <|im_end|>", tok.Token(eos))
	}
	st, err := os.Stat(filepath.Join(dir, "model.safetensors"))
	if err != nil || st.Size() > 20<<20 {
		t.Fatalf("model.safetensors: %v, %d bytes (limit 20 MB)", err, st.Size())
	}
	if p, err := Resolve("/some/dir"); err != nil || p != "/some/dir" {
		t.Errorf("Resolve of a path = %q, %v", p, err)
	}
	if _, err := Dir("nope"); err == nil {
		t.Error("unknown model accepted")
	}
}
