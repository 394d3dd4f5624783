package kernel

import "unsafe"

// The quantized row kernels in assembly (quant_amd64.s), for AVX2 and up.

//go:noescape
func dotQ8AVX2(nb int, w *byte, x *float32, lut *float32) float32

//go:noescape
func dotQ4AVX2(nb int, w *byte, x *float32, lut *float32) float32

//go:noescape
func dotQ8AVX512(nb int, w *byte, x *float32, lut *float32) float32

//go:noescape
func dotQ4AVX512(nb int, w *byte, x *float32, lut *float32) float32

//go:noescape
func dequantQ8AVX2(nb int, w *byte, dst *float32, lut *float32)

//go:noescape
func dequantQ4AVX2(nb int, w *byte, dst *float32, lut *float32)

// archQRow returns the assembly row kernels of t, or ok false.
func archQRow(isa ISA, t QType) (r qrow, ok bool) {
	if isa == Generic || (t != Q8_0 && t != Q4_0) {
		return qrow{}, false
	}
	lut := &f16Table()[0]
	dot, deq := dotQ8AVX2, dequantQ8AVX2
	if t == Q4_0 {
		dot, deq = dotQ4AVX2, dequantQ4AVX2
	}
	if isa == AVX512 {
		dot = dotQ8AVX512
		if t == Q4_0 {
			dot = dotQ4AVX512
		}
	}
	bs := t.QBytes()
	return qrow{
		dot: func(w []byte, x []float32) float32 {
			nb := len(w) / bs
			if nb == 0 {
				return 0
			}
			_ = x[nb*32-1]
			return dot(nb, unsafe.SliceData(w), unsafe.SliceData(x), lut)
		},
		dequant: func(w []byte, dst []float32) {
			nb := len(w) / bs
			if nb == 0 {
				return
			}
			_ = dst[nb*32-1]
			deq(nb, unsafe.SliceData(w), unsafe.SliceData(dst), lut)
		},
	}, true
}
