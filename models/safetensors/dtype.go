// Package safetensors reads and writes Hugging Face safetensors files: one
// file, or a model sharded over several files with a
// model.safetensors.index.json. Tensors stored as F32, F16 or BF16 convert to
// float32; other dtypes are listed but cannot be converted.
//
// The format: an 8-byte little-endian header length N, N bytes of JSON
// mapping tensor names to {"dtype", "shape", "data_offsets": [begin, end]}
// (offsets relative to the data section; an optional "__metadata__" map of
// strings), then the data section. Every header is validated against the file
// before any tensor is read: offsets in bounds, sizes equal to shape × dtype
// size, and a data section as long as the header says. A short file is
// reported as truncated.
package safetensors

import (
	"encoding/binary"
	"fmt"
	"math"
)

// DType is a safetensors element type, spelled as in the header.
type DType string

const (
	F32  DType = "F32"
	F16  DType = "F16"
	BF16 DType = "BF16"
	F64  DType = "F64"
	I64  DType = "I64"
	I32  DType = "I32"
	I16  DType = "I16"
	I8   DType = "I8"
	U8   DType = "U8"
	BOOL DType = "BOOL"
)

// Size is the size of one element in bytes, or 0 for an unknown dtype.
func (d DType) Size() int {
	switch d {
	case F64, I64, "U64":
		return 8
	case F32, I32, "U32":
		return 4
	case F16, BF16, I16, "U16":
		return 2
	case I8, U8, BOOL, "F8_E4M3", "F8_E5M2":
		return 1
	}
	return 0
}

// Float reports whether the dtype converts to float32 (F32, F16, BF16).
func (d DType) Float() bool { return d == F32 || d == F16 || d == BF16 }

// ToFloat32 converts little-endian raw elements of dtype d into dst
// (len(dst) == len(raw)/d.Size()).
func ToFloat32(d DType, raw []byte, dst []float32) error {
	if !d.Float() {
		return fmt.Errorf("safetensors: cannot convert dtype %s to float32 (supported: F32, F16, BF16)", d)
	}
	if len(raw) != len(dst)*d.Size() {
		return fmt.Errorf("safetensors: %d bytes of %s for %d elements", len(raw), d, len(dst))
	}
	switch d {
	case F32:
		for i := range dst {
			dst[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
		}
	case BF16:
		for i := range dst {
			dst[i] = math.Float32frombits(uint32(binary.LittleEndian.Uint16(raw[2*i:])) << 16)
		}
	case F16:
		for i := range dst {
			dst[i] = HalfToFloat32(binary.LittleEndian.Uint16(raw[2*i:]))
		}
	}
	return nil
}

// FromFloat32 encodes v as little-endian elements of dtype d (F32, F16 or
// BF16; F16 and BF16 round to nearest even).
func FromFloat32(d DType, v []float32) ([]byte, error) {
	if !d.Float() {
		return nil, fmt.Errorf("safetensors: cannot encode float32 as %s (supported: F32, F16, BF16)", d)
	}
	out := make([]byte, len(v)*d.Size())
	switch d {
	case F32:
		for i, x := range v {
			binary.LittleEndian.PutUint32(out[4*i:], math.Float32bits(x))
		}
	case BF16:
		for i, x := range v {
			binary.LittleEndian.PutUint16(out[2*i:], Float32ToBF16(x))
		}
	case F16:
		for i, x := range v {
			binary.LittleEndian.PutUint16(out[2*i:], Float32ToHalf(x))
		}
	}
	return out, nil
}

// HalfToFloat32 converts an IEEE 754 binary16 value (subnormals, infinities
// and NaNs included) to float32 exactly.
func HalfToFloat32(h uint16) float32 {
	sign := uint32(h>>15) << 31
	exp := uint32(h>>10) & 0x1f
	man := uint32(h) & 0x3ff
	switch {
	case exp == 0x1f: // inf or NaN
		return math.Float32frombits(sign | 0x7f800000 | man<<13)
	case exp == 0:
		if man == 0 {
			return math.Float32frombits(sign)
		}
		// subnormal: man × 2^-24
		f := float32(man) * (1.0 / (1 << 24))
		if sign != 0 {
			f = -f
		}
		return f
	}
	return math.Float32frombits(sign | (exp+127-15)<<23 | man<<13)
}

// Float32ToHalf converts a float32 to binary16, rounding to nearest even;
// values beyond the range become infinities.
func Float32ToHalf(f float32) uint16 {
	b := math.Float32bits(f)
	sign := uint16(b>>16) & 0x8000
	exp := int32(b>>23) & 0xff
	man := b & 0x7fffff
	if exp == 0xff { // inf or NaN
		if man != 0 {
			return sign | 0x7e00
		}
		return sign | 0x7c00
	}
	e := exp - 127 + 15
	if e >= 0x1f {
		return sign | 0x7c00
	}
	if e <= 0 { // subnormal half or zero
		if e < -10 {
			return sign
		}
		man |= 0x800000
		shift := uint32(14 - e)
		half := man >> shift
		rem := man & (1<<shift - 1)
		mid := uint32(1) << (shift - 1)
		if rem > mid || (rem == mid && half&1 == 1) {
			half++
		}
		return sign | uint16(half)
	}
	half := uint32(e)<<10 | man>>13
	rem := man & 0x1fff
	if rem > 0x1000 || (rem == 0x1000 && half&1 == 1) {
		half++ // may carry into the exponent, up to infinity: still correct
	}
	return sign | uint16(half)
}

// Float32ToBF16 converts a float32 to bfloat16, rounding to nearest even.
func Float32ToBF16(f float32) uint16 {
	b := math.Float32bits(f)
	if b&0x7fffffff > 0x7f800000 { // NaN: keep it a NaN
		return uint16(b>>16) | 0x40
	}
	b += 0x7fff + (b>>16)&1
	return uint16(b >> 16)
}
