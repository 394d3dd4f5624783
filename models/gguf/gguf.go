// Package gguf reads and writes GGUF files (version 3), llama.cpp's format:
// a header, metadata key/value pairs, a table of tensors, then the tensors'
// data, aligned. Written by hand: the format is small and the one Go
// module that reads it (gpustack/gguf-parser-go) neither writes it nor
// hands out tensor data.
package gguf

import "fmt"

// Magic starts every GGUF file.
const Magic = "GGUF"

// DefaultAlignment of tensor data when general.alignment is absent.
const DefaultAlignment = 32

// ValueType is the type of a metadata value.
type ValueType uint32

// Metadata value types.
const (
	TypeUint8 ValueType = iota
	TypeInt8
	TypeUint16
	TypeInt16
	TypeUint32
	TypeInt32
	TypeFloat32
	TypeBool
	TypeString
	TypeArray
	TypeUint64
	TypeInt64
	TypeFloat64
)

// TensorType is a tensor's element type (ggml_type).
type TensorType uint32

// The tensor types pitstop reads.
const (
	F32  TensorType = 0
	F16  TensorType = 1
	Q4_0 TensorType = 2
	Q8_0 TensorType = 8
	Q4_K TensorType = 12
)

func (t TensorType) String() string {
	switch t {
	case F32:
		return "F32"
	case F16:
		return "F16"
	case Q4_0:
		return "Q4_0"
	case Q8_0:
		return "Q8_0"
	case Q4_K:
		return "Q4_K"
	}
	return fmt.Sprintf("type %d", uint32(t))
}

// blockSize returns the elements per block and bytes per block of t.
func (t TensorType) blockSize() (elems, bytes int, ok bool) {
	switch t {
	case F32:
		return 1, 4, true
	case F16:
		return 1, 2, true
	case Q4_0:
		return 32, 18, true
	case Q8_0:
		return 32, 34, true
	case Q4_K:
		return 256, 144, true
	}
	return 0, 0, false
}

// Size is the bytes of n elements of t (n a whole number of blocks).
func (t TensorType) Size(n int) (int, error) {
	e, b, ok := t.blockSize()
	if !ok {
		return 0, fmt.Errorf("unknown tensor type %d (pitstop reads F32, F16, Q4_0, Q8_0, Q4_K)", uint32(t))
	}
	if n%e != 0 {
		return 0, fmt.Errorf("%d elements of %v are not whole blocks of %d", n, t, e)
	}
	return n / e * b, nil
}

// Tensor is one entry of the tensor table.
type Tensor struct {
	Name string
	// Dims are GGUF's: the fastest-varying first (a [rows × cols] matrix is
	// {cols, rows}).
	Dims   []uint64
	Type   TensorType
	Offset uint64 // from the start of the data section
	Data   []byte // the tensor's bytes, in the file
}

// Elements is the tensor's number of elements.
func (t *Tensor) Elements() int {
	n := 1
	for _, d := range t.Dims {
		n *= int(d)
	}
	return n
}

// KV is one metadata pair; Value is uint8...float64, bool, string, or a
// slice of one of those ([]string, []int32, []float32, ... ; []any for
// arrays of arrays).
type KV struct {
	Key   string
	Value any
}
