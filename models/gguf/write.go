package gguf

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"os"
)

// Write writes a GGUF version 3 file with the metadata and tensors given
// (each tensor's Data, of its Type; offsets are computed), data aligned to
// DefaultAlignment.
func Write(path string, meta []KV, tensors []Tensor) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("gguf: %w", err)
	}
	w := bufio.NewWriter(f)
	if err := write(w, meta, tensors); err != nil {
		f.Close()
		return fmt.Errorf("gguf %s: %w", path, err)
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return fmt.Errorf("gguf %s: %w", path, err)
	}
	return f.Close()
}

type counter struct {
	w io.Writer
	n int64
}

func (c *counter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

func write(out io.Writer, meta []KV, tensors []Tensor) error {
	w := &counter{w: out}
	le := binary.LittleEndian
	put := func(v any) { binary.Write(w, le, v) }
	str := func(s string) { put(uint64(len(s))); io.WriteString(w, s) }
	io.WriteString(w, Magic)
	put(uint32(3))
	put(uint64(len(tensors)))
	put(uint64(len(meta)))
	for _, kv := range meta {
		str(kv.Key)
		if err := writeValue(w, kv.Value, true); err != nil {
			return fmt.Errorf("metadata %s: %w", kv.Key, err)
		}
	}
	off := uint64(0)
	align := uint64(DefaultAlignment)
	for _, t := range tensors {
		size, err := t.Type.Size(t.Elements())
		if err != nil {
			return fmt.Errorf("tensor %s: %w", t.Name, err)
		}
		if size != len(t.Data) {
			return fmt.Errorf("tensor %s: %d bytes, %v of %v needs %d", t.Name, len(t.Data), t.Type, t.Dims, size)
		}
		str(t.Name)
		put(uint32(len(t.Dims)))
		for _, d := range t.Dims {
			put(d)
		}
		put(uint32(t.Type))
		put(off)
		off = (off + uint64(size) + align - 1) / align * align
	}
	pad := func() {
		for w.n%int64(align) != 0 {
			w.Write([]byte{0})
		}
	}
	pad()
	for _, t := range tensors {
		if _, err := w.Write(t.Data); err != nil {
			return err
		}
		pad()
	}
	return nil
}

// writeValue writes v's type (when typed) and value.
func writeValue(w io.Writer, v any, typed bool) error {
	le := binary.LittleEndian
	tag := func(t ValueType) {
		if typed {
			binary.Write(w, le, uint32(t))
		}
	}
	arr := func(et ValueType, n int) {
		tag(TypeArray)
		binary.Write(w, le, uint32(et))
		binary.Write(w, le, uint64(n))
	}
	switch x := v.(type) {
	case string:
		tag(TypeString)
		binary.Write(w, le, uint64(len(x)))
		io.WriteString(w, x)
	case uint8:
		tag(TypeUint8)
		binary.Write(w, le, x)
	case bool:
		tag(TypeBool)
		binary.Write(w, le, x)
	case uint32:
		tag(TypeUint32)
		binary.Write(w, le, x)
	case int32:
		tag(TypeInt32)
		binary.Write(w, le, x)
	case uint64:
		tag(TypeUint64)
		binary.Write(w, le, x)
	case float32:
		tag(TypeFloat32)
		binary.Write(w, le, math.Float32bits(x))
	case []string:
		arr(TypeString, len(x))
		for _, s := range x {
			binary.Write(w, le, uint64(len(s)))
			io.WriteString(w, s)
		}
	case []int32:
		arr(TypeInt32, len(x))
		binary.Write(w, le, x)
	case []float32:
		arr(TypeFloat32, len(x))
		binary.Write(w, le, x)
	default:
		return fmt.Errorf("cannot write a %T", v)
	}
	return nil
}
