package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestConvertAndBadGGUF converts the built-in model to GGUF, then checks
// that serve rejects bad files with one line naming the file, exit 2: a
// truncated file, an unknown tensor type, a template that does not parse.
func TestConvertAndBadGGUF(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "tiny-q8.gguf")
	code, out, stderr := pitstop(t, "convert", "--to", "gguf", "--quant", "q8_0", "-o", good)
	if code != 0 || !strings.Contains(out, "Q8_0") {
		t.Fatalf("convert: exit %d, %q %q", code, out, stderr)
	}
	for _, args := range [][]string{{"--quant", "q9"}, {"--to", "onnx", "-o", "x"}, {"-o", ""}} {
		if code, _, stderr := pitstop(t, append([]string{"convert"}, args...)...); code != 2 {
			t.Errorf("convert %v: exit %d, %q", args, code, stderr)
		}
	}
	data, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	cut := filepath.Join(dir, "cut.gguf")
	os.WriteFile(cut, data[:len(data)*3/4], 0o644)
	unknown := filepath.Join(dir, "unknown.gguf")
	patched := append([]byte(nil), data...)
	name := "token_embd.weight"
	i := strings.Index(string(patched), name) + len(name) + 4 + 16 // ndims, two dims, then the type
	patched[i] = 77
	os.WriteFile(unknown, patched, 0o644)
	raising := filepath.Join(dir, "bad.jinja")
	os.WriteFile(raising, []byte("{% for %}"), 0o644)
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"--model", cut}, []string{cut, "truncated"}},
		{[]string{"--model", unknown}, []string{unknown, "tensor token_embd.weight: unknown tensor type 77"}},
		{[]string{"--model", good, "--chat-template", raising}, []string{"bad.jinja"}},
		{[]string{"--model", good, "--chat-template", filepath.Join(dir, "none.jinja")}, []string{"none.jinja"}},
	} {
		code, stdout, stderr := pitstop(t, append([]string{"serve", "--addr", "127.0.0.1:0"}, c.args...)...)
		if code != 2 || stdout != "" || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
			t.Errorf("%v: exit %d, stdout %q, stderr %q: want exit 2 and one line", c.args, code, stdout, stderr)
		}
		for _, w := range c.want {
			if !strings.Contains(stderr, w) {
				t.Errorf("%v: stderr %q lacks %q", c.args, stderr, w)
			}
		}
	}
}
