package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestEvalTinyServed scores a few dialogues through the serving stack (a
// GGUF file loaded as serve loads it, the CPU executor, the engine, each
// dialogue paused at its tool call and resumed): from a float32 GGUF it
// writes the same transcripts as the training kit's forward pass on the
// same weights, and from a Q8_0 one (the quantized kernels) it still calls
// the tools.
func TestEvalTinyServed(t *testing.T) {
	dir := t.TempDir()
	transcripts := func(args ...string) []map[string]any {
		t.Helper()
		js := filepath.Join(dir, "eval.json")
		args = append([]string{"eval-tiny", "--n", "6", "--seed", "1", "--show-failures", "0", "--reference", "0", "--json", js}, args...)
		code, out, stderr := pitstop(t, args...)
		if code != 0 {
			t.Fatalf("%v: exit %d, %q %q", args, code, out, stderr)
		}
		raw, err := os.ReadFile(js)
		if err != nil {
			t.Fatal(err)
		}
		var rep struct {
			Transcripts []map[string]any `json:"transcripts"`
		}
		if err := json.Unmarshal(raw, &rep); err != nil {
			t.Fatal(err)
		}
		if len(rep.Transcripts) != 6 {
			t.Fatalf("%v: %d transcripts, want 6", args, len(rep.Transcripts))
		}
		return rep.Transcripts
	}
	for _, q := range []string{"f32", "q8_0"} {
		f := filepath.Join(dir, "tiny-"+q+".gguf")
		if code, out, stderr := pitstop(t, "convert", "--to", "gguf", "--quant", q, "-o", f); code != 0 {
			t.Fatalf("convert %s: exit %d, %q %q", q, code, out, stderr)
		}
	}
	want := transcripts("--model", "builtin:tiny-tools")
	got := transcripts("--model", filepath.Join(dir, "tiny-f32.gguf"))
	for i := range want {
		for _, k := range []string{"user", "first_turn", "final_turn"} {
			if got[i][k] != want[i][k] {
				t.Errorf("dialogue %d, %s: served %q, training forward %q", i, k, got[i][k], want[i][k])
			}
		}
	}
	calls := 0
	for _, tr := range transcripts("--model", filepath.Join(dir, "tiny-q8_0.gguf")) {
		if first, _ := tr["first_turn"].(string); strings.Contains(first, "<tool_call>") && tr["right_tool"] == true {
			calls++
		}
	}
	if calls == 0 {
		t.Errorf("Q8_0 served: no well-formed call with the right tool in 6 dialogues")
	}
}
