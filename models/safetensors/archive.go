package safetensors

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// IndexName is the file naming the shards of a sharded model.
const IndexName = "model.safetensors.index.json"

// SingleName is the file of an unsharded model.
const SingleName = "model.safetensors"

// Archive is a model's tensors over one or more files.
type Archive struct {
	files []*File
	where map[string]*File
}

type indexJSON struct {
	Metadata  map[string]any    `json:"metadata"`
	WeightMap map[string]string `json:"weight_map"`
}

// Open opens a model's tensors. path is a directory (holding
// model.safetensors.index.json, or model.safetensors, or exactly one
// .safetensors file), an index .json, or one .safetensors file. Every shard an
// index names must exist and hold the tensors the index assigns to it.
func Open(path string) (*Archive, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("safetensors: %w", err)
	}
	if st.IsDir() {
		return openDir(path)
	}
	if strings.HasSuffix(path, ".json") {
		return openIndex(path)
	}
	f, err := OpenFile(path)
	if err != nil {
		return nil, err
	}
	return newArchive([]*File{f})
}

func openDir(dir string) (*Archive, error) {
	idx := filepath.Join(dir, IndexName)
	if _, err := os.Stat(idx); err == nil {
		return openIndex(idx)
	}
	single := filepath.Join(dir, SingleName)
	if _, err := os.Stat(single); err == nil {
		return Open(single)
	}
	matches, _ := filepath.Glob(filepath.Join(dir, "*.safetensors"))
	switch len(matches) {
	case 1:
		return Open(matches[0])
	case 0:
		return nil, fmt.Errorf("safetensors: %s has no %s, %s or other .safetensors file: %w", dir, IndexName, SingleName, fs.ErrNotExist)
	}
	return nil, fmt.Errorf("safetensors: %s has %d .safetensors files but no %s to say how they fit together", dir, len(matches), IndexName)
}

func openIndex(path string) (*Archive, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("safetensors: %w", err)
	}
	var idx indexJSON
	if err := json.Unmarshal(data, &idx); err != nil {
		return nil, fmt.Errorf("safetensors: bad index %s: %w", path, err)
	}
	if len(idx.WeightMap) == 0 {
		return nil, fmt.Errorf("safetensors: bad index %s: empty weight_map", path)
	}
	dir := filepath.Dir(path)
	shards := map[string]*File{}
	var files []*File
	fail := func(err error) (*Archive, error) {
		for _, f := range files {
			_ = f.Close()
		}
		return nil, err
	}
	names := make([]string, 0, len(idx.WeightMap))
	for n := range idx.WeightMap {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, name := range names {
		shard := idx.WeightMap[name]
		if shard == "" || filepath.Base(shard) != shard {
			return fail(fmt.Errorf("safetensors: bad index %s: tensor %q maps to %q, not a file name in the same directory", path, name, shard))
		}
		f, ok := shards[shard]
		if !ok {
			f, err = OpenFile(filepath.Join(dir, shard))
			if err != nil {
				return fail(fmt.Errorf("shard of index %s: %w", path, err))
			}
			shards[shard] = f
			files = append(files, f)
		}
		if _, ok := f.Info(name); !ok {
			return fail(fmt.Errorf("safetensors: index %s puts tensor %q in %s, which does not hold it", path, name, shard))
		}
	}
	a, err := newArchive(files)
	if err != nil {
		return fail(err)
	}
	return a, nil
}

func newArchive(files []*File) (*Archive, error) {
	a := &Archive{files: files, where: map[string]*File{}}
	for _, f := range files {
		for name := range f.infos {
			if g, dup := a.where[name]; dup {
				return nil, fmt.Errorf("safetensors: tensor %q is in both %s and %s", name, g.path, f.path)
			}
			a.where[name] = f
		}
	}
	return a, nil
}

// ErrNoTensor is wrapped by lookups of a tensor the archive lacks.
var ErrNoTensor = errors.New("no such tensor")

// Names lists every tensor, sorted.
func (a *Archive) Names() []string {
	names := make([]string, 0, len(a.where))
	for n := range a.where {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// Files lists the paths of the archive's files.
func (a *Archive) Files() []string {
	out := make([]string, len(a.files))
	for i, f := range a.files {
		out[i] = f.path
	}
	return out
}

// Info describes a tensor.
func (a *Archive) Info(name string) (Info, bool) {
	f, ok := a.where[name]
	if !ok {
		return Info{}, false
	}
	return f.Info(name)
}

// Has reports whether the archive holds a tensor.
func (a *Archive) Has(name string) bool { _, ok := a.where[name]; return ok }

// Float32 returns a tensor converted to float32, with its shape.
func (a *Archive) Float32(name string) ([]float32, []int, error) {
	f, ok := a.where[name]
	if !ok {
		return nil, nil, fmt.Errorf("safetensors: tensor %q: %w", name, ErrNoTensor)
	}
	return f.Float32(name)
}

// Close closes every file.
func (a *Archive) Close() error {
	var errs []error
	for _, f := range a.files {
		errs = append(errs, f.Close())
	}
	return errors.Join(errs...)
}
