package safetensors

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
)

// Tensor is a tensor to write: raw little-endian bytes of its dtype.
type Tensor struct {
	Name  string
	DType DType
	Shape []int
	Data  []byte
}

// FromF32 makes a tensor of dtype d (F32, F16 or BF16) from float32 values.
func FromF32(name string, d DType, shape []int, v []float32) (Tensor, error) {
	n := 1
	for _, s := range shape {
		n *= s
	}
	if n != len(v) {
		return Tensor{}, fmt.Errorf("safetensors: tensor %q: shape %v has %d elements, got %d values", name, shape, n, len(v))
	}
	b, err := FromFloat32(d, v)
	if err != nil {
		return Tensor{}, err
	}
	return Tensor{Name: name, DType: d, Shape: slices.Clone(shape), Data: b}, nil
}

// Write writes tensors (in name order) and optional metadata as one
// safetensors stream.
func Write(w io.Writer, tensors []Tensor, metadata map[string]string) error {
	ts := slices.Clone(tensors)
	slices.SortFunc(ts, func(a, b Tensor) int {
		switch {
		case a.Name < b.Name:
			return -1
		case a.Name > b.Name:
			return 1
		}
		return 0
	})
	hdr := make(map[string]any, len(ts)+1)
	if len(metadata) > 0 {
		hdr["__metadata__"] = metadata
	}
	var off int64
	for i, t := range ts {
		if i > 0 && ts[i-1].Name == t.Name {
			return fmt.Errorf("safetensors: tensor %q given twice", t.Name)
		}
		if t.Name == "__metadata__" {
			return fmt.Errorf("safetensors: a tensor may not be named __metadata__")
		}
		if t.DType.Size() == 0 {
			return fmt.Errorf("safetensors: tensor %q has unknown dtype %q", t.Name, t.DType)
		}
		n := 1
		for _, s := range t.Shape {
			n *= s
		}
		if n*t.DType.Size() != len(t.Data) {
			return fmt.Errorf("safetensors: tensor %q: shape %v of %s needs %d bytes, has %d", t.Name, t.Shape, t.DType, n*t.DType.Size(), len(t.Data))
		}
		shape := t.Shape
		if shape == nil {
			shape = []int{}
		}
		hdr[t.Name] = headerEntry{DType: t.DType, Shape: shape, DataOffsets: []int64{off, off + int64(len(t.Data))}}
		off += int64(len(t.Data))
	}
	js, err := json.Marshal(hdr)
	if err != nil {
		return fmt.Errorf("safetensors: %w", err)
	}
	for len(js)%8 != 0 { // align the data section, as the reference writer does
		js = append(js, ' ')
	}
	bw := bufio.NewWriter(w)
	var n [8]byte
	binary.LittleEndian.PutUint64(n[:], uint64(len(js)))
	bw.Write(n[:])
	bw.Write(js)
	for _, t := range ts {
		bw.Write(t.Data)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("safetensors: %w", err)
	}
	return nil
}

// WriteFile writes tensors to one file.
func WriteFile(path string, tensors []Tensor, metadata map[string]string) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("safetensors: %w", err)
	}
	if err := Write(f, tensors, metadata); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("safetensors: %w", err)
	}
	return nil
}

// WriteSharded writes tensors into dir as shards files named
// model-0000i-of-0000n.safetensors (tensors dealt round-robin in name order)
// and a model.safetensors.index.json naming them.
func WriteSharded(dir string, tensors []Tensor, shards int) error {
	if shards < 1 {
		return fmt.Errorf("safetensors: %d shards", shards)
	}
	ts := slices.Clone(tensors)
	slices.SortFunc(ts, func(a, b Tensor) int {
		if a.Name < b.Name {
			return -1
		}
		if a.Name > b.Name {
			return 1
		}
		return 0
	})
	parts := make([][]Tensor, shards)
	idx := indexJSON{Metadata: map[string]any{}, WeightMap: map[string]string{}}
	var total int64
	for i, t := range ts {
		parts[i%shards] = append(parts[i%shards], t)
		idx.WeightMap[t.Name] = shardName(i%shards, shards)
		total += int64(len(t.Data))
	}
	idx.Metadata["total_size"] = total
	for i, p := range parts {
		if err := WriteFile(filepath.Join(dir, shardName(i, shards)), p, map[string]string{"format": "pt"}); err != nil {
			return err
		}
	}
	js, err := json.MarshalIndent(idx, "", "  ")
	if err != nil {
		return fmt.Errorf("safetensors: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, IndexName), js, 0o644); err != nil {
		return fmt.Errorf("safetensors: %w", err)
	}
	return nil
}

func shardName(i, n int) string { return fmt.Sprintf("model-%05d-of-%05d.safetensors", i+1, n) }
