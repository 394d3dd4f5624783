// Package builtin ships pitstop's built-in models inside the binary, so
// that `--model builtin:NAME` works on any machine without downloading
// weights. Each model is a Hugging Face model directory (config.json,
// model.safetensors, tokenizer.json, tokenizer_config.json) under
// models/builtin/NAME in the source tree, embedded at build time.
//
// tiny-tools is a 1M-parameter Llama-architecture model trained by pitstop
// (`pitstop train-tiny`) on generated tool-use dialogues over the built-in
// tools calculator, current_time and unit_convert, in the Qwen2.5/Hermes
// chat format; see tiny-tools/README.md.
package builtin

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

//go:embed tiny-tools/config.json tiny-tools/model.safetensors tiny-tools/tokenizer.json tiny-tools/tokenizer_config.json tiny-tools/length.onnx
var files embed.FS

// Prefix marks a built-in model in a --model flag: "builtin:tiny-tools".
const Prefix = "builtin:"

// TinyTools is the name of the built-in tool-calling model.
const TinyTools = "tiny-tools"

// modelFiles are the files of a model directory that are embedded:
// length.onnx is the model's own output-length classifier (trained on its
// served outputs; see its README), which serve predicts with.
var modelFiles = []string{"config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json", "length.onnx"}

// ErrUnknown is wrapped by errors about a name that is not a built-in model.
var ErrUnknown = errors.New("unknown built-in model")

// Names lists the built-in models.
func Names() []string {
	ents, _ := fs.ReadDir(files, ".")
	var out []string
	for _, e := range ents {
		if e.IsDir() {
			out = append(out, e.Name())
		}
	}
	slices.Sort(out)
	return out
}

// FS returns the files of built-in model name (config.json at its root).
func FS(name string) (fs.FS, error) {
	if !slices.Contains(Names(), name) {
		return nil, fmt.Errorf("%w %q (built in: %s)", ErrUnknown, name, strings.Join(Names(), ", "))
	}
	return fs.Sub(files, name)
}

// Resolve turns a --model value into a model directory: "builtin:NAME"
// becomes Dir(NAME); anything else is returned as it is.
func Resolve(model string) (string, error) {
	name, ok := strings.CutPrefix(model, Prefix)
	if !ok {
		return model, nil
	}
	return Dir(name)
}

// Dir returns a directory holding built-in model name, for the loaders that
// read paths (tokenizer.Load, llama.Load). The embedded files are written
// once into the user cache directory (os.UserCacheDir()/pitstop/builtin/
// NAME-HASH, HASH naming the content), or a temporary directory when there
// is no cache directory; later calls reuse them.
func Dir(name string) (string, error) {
	fsys, err := FS(name)
	if err != nil {
		return "", err
	}
	h := sha256.New()
	for _, f := range modelFiles {
		b, err := fs.ReadFile(fsys, f)
		if err != nil {
			return "", fmt.Errorf("builtin: %s: %w", name, err)
		}
		fmt.Fprintf(h, "%s %d\n", f, len(b))
		h.Write(b)
	}
	base, err := os.UserCacheDir()
	if err != nil {
		base = os.TempDir()
	}
	dir := filepath.Join(base, "pitstop", "builtin", name+"-"+hex.EncodeToString(h.Sum(nil))[:16])
	if complete(dir) {
		return dir, nil
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return "", fmt.Errorf("builtin: %w", err)
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dir), name+".tmp-")
	if err != nil {
		return "", fmt.Errorf("builtin: %w", err)
	}
	defer os.RemoveAll(tmp)
	for _, f := range modelFiles {
		b, _ := fs.ReadFile(fsys, f)
		if err := os.WriteFile(filepath.Join(tmp, f), b, 0o644); err != nil {
			return "", fmt.Errorf("builtin: %w", err)
		}
	}
	if err := os.Rename(tmp, dir); err != nil && !complete(dir) {
		return "", fmt.Errorf("builtin: %w", err)
	}
	return dir, nil
}

// complete reports whether dir holds every model file.
func complete(dir string) bool {
	for _, f := range modelFiles {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			return false
		}
	}
	return true
}
