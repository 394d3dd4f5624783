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

// The tensor types: those pitstop multiplies (F32, F16, Q4_0, Q8_0, Q4_K),
// and the other common ones, whose sizes are known so that any common file
// parses (its loader then names the tensor it cannot use).
const (
	F32  TensorType = 0
	F16  TensorType = 1
	Q4_0 TensorType = 2
	Q4_1 TensorType = 3
	Q5_0 TensorType = 6
	Q5_1 TensorType = 7
	Q8_0 TensorType = 8
	Q8_1 TensorType = 9
	Q2_K TensorType = 10
	Q3_K TensorType = 11
	Q4_K TensorType = 12
	Q5_K TensorType = 13
	Q6_K TensorType = 14
	Q8_K TensorType = 15
	BF16 TensorType = 30
)

// tensorTypes are the name, elements per block and bytes per block of
// each known type (ggml's type traits).
var tensorTypes = map[TensorType]struct {
	name         string
	elems, bytes int
}{
	F32: {"F32", 1, 4}, F16: {"F16", 1, 2}, BF16: {"BF16", 1, 2},
	Q4_0: {"Q4_0", 32, 18}, Q4_1: {"Q4_1", 32, 20}, Q5_0: {"Q5_0", 32, 22}, Q5_1: {"Q5_1", 32, 24},
	Q8_0: {"Q8_0", 32, 34}, Q8_1: {"Q8_1", 32, 36},
	Q2_K: {"Q2_K", 256, 84}, Q3_K: {"Q3_K", 256, 110}, Q4_K: {"Q4_K", 256, 144},
	Q5_K: {"Q5_K", 256, 176}, Q6_K: {"Q6_K", 256, 210}, Q8_K: {"Q8_K", 256, 292},
}

func (t TensorType) String() string {
	if tt, ok := tensorTypes[t]; ok {
		return tt.name
	}
	return fmt.Sprintf("type %d", uint32(t))
}

// Size is the bytes of n elements of t (n a whole number of blocks).
func (t TensorType) Size(n int) (int, error) {
	tt, ok := tensorTypes[t]
	if !ok {
		return 0, fmt.Errorf("unknown tensor type %d (pitstop knows F32, F16, BF16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q8_1 and the K-quants Q2_K to Q8_K)", uint32(t))
	}
	if n%tt.elems != 0 {
		return 0, fmt.Errorf("%d elements of %v are not whole blocks of %d", n, t, tt.elems)
	}
	return n / tt.elems * tt.bytes, nil
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
