package gguf

import (
	"encoding/binary"
	"fmt"
	"math"
	"os"
)

// File is a GGUF file read into memory.
type File struct {
	Path      string
	Version   uint32
	Metadata  []KV
	Tensors   []Tensor
	Alignment int
	byName    map[string]int
}

// Open reads a GGUF file. Errors name the file and what is wrong: not GGUF,
// truncated, an unknown tensor type, a tensor outside the file.
func Open(path string) (*File, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("gguf: %w", err)
	}
	f, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("gguf %s: %w", path, err)
	}
	f.Path = path
	return f, nil
}

type reader struct {
	b   []byte
	off int
}

var errTruncated = fmt.Errorf("truncated")

func (r *reader) need(n int) ([]byte, error) {
	if n < 0 || len(r.b)-r.off < n {
		return nil, fmt.Errorf("truncated: wants %d bytes at offset %d, the file has %d", n, r.off, len(r.b))
	}
	s := r.b[r.off : r.off+n]
	r.off += n
	return s, nil
}

func (r *reader) u32() (uint32, error) {
	s, err := r.need(4)
	if err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint32(s), nil
}

func (r *reader) u64() (uint64, error) {
	s, err := r.need(8)
	if err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint64(s), nil
}

func (r *reader) str() (string, error) {
	n, err := r.u64()
	if err != nil {
		return "", err
	}
	if n > uint64(len(r.b)) {
		return "", fmt.Errorf("truncated: a string of %d bytes at offset %d", n, r.off)
	}
	s, err := r.need(int(n))
	return string(s), err
}

// Parse reads a GGUF file held in data (the tensors' Data point into it).
func Parse(data []byte) (*File, error) {
	r := &reader{b: data}
	magic, err := r.need(4)
	if err != nil || string(magic) != Magic {
		return nil, fmt.Errorf("not a GGUF file (no %q magic)", Magic)
	}
	f := &File{Alignment: DefaultAlignment, byName: map[string]int{}}
	if f.Version, err = r.u32(); err != nil {
		return nil, err
	}
	if f.Version != 2 && f.Version != 3 {
		return nil, fmt.Errorf("GGUF version %d (pitstop reads versions 2 and 3)", f.Version)
	}
	nt, err := r.u64()
	if err != nil {
		return nil, err
	}
	nkv, err := r.u64()
	if err != nil {
		return nil, err
	}
	if nt > uint64(len(data)) || nkv > uint64(len(data)) {
		return nil, fmt.Errorf("truncated: %d tensors and %d metadata pairs announced in %d bytes", nt, nkv, len(data))
	}
	for range nkv {
		k, err := r.str()
		if err != nil {
			return nil, err
		}
		t, err := r.u32()
		if err != nil {
			return nil, err
		}
		v, err := r.value(ValueType(t))
		if err != nil {
			return nil, fmt.Errorf("metadata %s: %w", k, err)
		}
		f.Metadata = append(f.Metadata, KV{k, v})
		if k == "general.alignment" {
			if a, ok := v.(uint32); ok && a > 0 && a&(a-1) == 0 {
				f.Alignment = int(a)
			} else {
				return nil, fmt.Errorf("general.alignment %v is not a power of two (uint32)", v)
			}
		}
	}
	for range nt {
		var t Tensor
		if t.Name, err = r.str(); err != nil {
			return nil, err
		}
		nd, err := r.u32()
		if err != nil {
			return nil, err
		}
		if nd == 0 || nd > 4 {
			return nil, fmt.Errorf("tensor %s has %d dimensions (1 to 4 allowed)", t.Name, nd)
		}
		for range nd {
			d, err := r.u64()
			if err != nil {
				return nil, err
			}
			t.Dims = append(t.Dims, d)
		}
		typ, err := r.u32()
		if err != nil {
			return nil, err
		}
		t.Type = TensorType(typ)
		if t.Offset, err = r.u64(); err != nil {
			return nil, err
		}
		if _, ok := f.byName[t.Name]; ok {
			return nil, fmt.Errorf("tensor %s appears twice", t.Name)
		}
		f.byName[t.Name] = len(f.Tensors)
		f.Tensors = append(f.Tensors, t)
	}
	start := (r.off + f.Alignment - 1) / f.Alignment * f.Alignment
	for i := range f.Tensors {
		t := &f.Tensors[i]
		size, err := t.Type.Size(t.Elements())
		if err != nil {
			return nil, fmt.Errorf("tensor %s: %w", t.Name, err)
		}
		lo := uint64(start) + t.Offset
		if t.Offset%uint64(f.Alignment) != 0 {
			return nil, fmt.Errorf("tensor %s: offset %d is not aligned to %d", t.Name, t.Offset, f.Alignment)
		}
		if lo > uint64(len(data)) || uint64(len(data))-lo < uint64(size) {
			return nil, fmt.Errorf("truncated: tensor %s (%v, %d bytes at offset %d) ends past the end of the file (%d bytes)", t.Name, t.Type, size, lo, len(data))
		}
		t.Data = data[lo : lo+uint64(size)]
	}
	return f, nil
}

func (r *reader) value(t ValueType) (any, error) {
	switch t {
	case TypeString:
		return r.str()
	case TypeArray:
		et, err := r.u32()
		if err != nil {
			return nil, err
		}
		n, err := r.u64()
		if err != nil {
			return nil, err
		}
		if n > uint64(len(r.b)-r.off) {
			return nil, fmt.Errorf("truncated: an array of %d values at offset %d", n, r.off)
		}
		return r.array(ValueType(et), int(n))
	}
	size := map[ValueType]int{TypeUint8: 1, TypeInt8: 1, TypeBool: 1, TypeUint16: 2, TypeInt16: 2,
		TypeUint32: 4, TypeInt32: 4, TypeFloat32: 4, TypeUint64: 8, TypeInt64: 8, TypeFloat64: 8}[t]
	if size == 0 {
		return nil, fmt.Errorf("unknown value type %d", t)
	}
	s, err := r.need(size)
	if err != nil {
		return nil, err
	}
	le := binary.LittleEndian
	switch t {
	case TypeUint8:
		return s[0], nil
	case TypeInt8:
		return int8(s[0]), nil
	case TypeBool:
		return s[0] != 0, nil
	case TypeUint16:
		return le.Uint16(s), nil
	case TypeInt16:
		return int16(le.Uint16(s)), nil
	case TypeUint32:
		return le.Uint32(s), nil
	case TypeInt32:
		return int32(le.Uint32(s)), nil
	case TypeFloat32:
		return math.Float32frombits(le.Uint32(s)), nil
	case TypeUint64:
		return le.Uint64(s), nil
	case TypeInt64:
		return int64(le.Uint64(s)), nil
	}
	return math.Float64frombits(le.Uint64(s)), nil
}

func (r *reader) array(et ValueType, n int) (any, error) {
	switch et {
	case TypeString:
		out := make([]string, n)
		for i := range out {
			s, err := r.str()
			if err != nil {
				return nil, err
			}
			out[i] = s
		}
		return out, nil
	case TypeInt32:
		out := make([]int32, n)
		for i := range out {
			v, err := r.u32()
			if err != nil {
				return nil, err
			}
			out[i] = int32(v)
		}
		return out, nil
	case TypeFloat32:
		out := make([]float32, n)
		for i := range out {
			v, err := r.u32()
			if err != nil {
				return nil, err
			}
			out[i] = math.Float32frombits(v)
		}
		return out, nil
	}
	out := make([]any, n)
	for i := range out {
		v, err := r.value(et)
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}

// Get returns the metadata value of key.
func (f *File) Get(key string) (any, bool) {
	for _, kv := range f.Metadata {
		if kv.Key == key {
			return kv.Value, true
		}
	}
	return nil, false
}

// String returns a string value ("" when absent or not a string).
func (f *File) String(key string) string {
	v, _ := f.Get(key)
	s, _ := v.(string)
	return s
}

// Uint returns an integer value of any width.
func (f *File) Uint(key string) (uint64, bool) {
	v, ok := f.Get(key)
	if !ok {
		return 0, false
	}
	switch x := v.(type) {
	case uint8:
		return uint64(x), true
	case uint16:
		return uint64(x), true
	case uint32:
		return uint64(x), true
	case uint64:
		return x, true
	case int8:
		return uint64(x), x >= 0
	case int16:
		return uint64(x), x >= 0
	case int32:
		return uint64(x), x >= 0
	case int64:
		return uint64(x), x >= 0
	}
	return 0, false
}

// Float returns a float value.
func (f *File) Float(key string) (float64, bool) {
	v, ok := f.Get(key)
	switch x := v.(type) {
	case float32:
		return float64(x), ok
	case float64:
		return x, ok
	}
	return 0, false
}

// Tensor returns the tensor called name.
func (f *File) Tensor(name string) (*Tensor, bool) {
	i, ok := f.byName[name]
	if !ok {
		return nil, false
	}
	return &f.Tensors[i], true
}
