package kernel

import "unsafe"

// The quantized row kernels in assembly (quant_amd64.s), AVX2: they run on
// the AVX-512 instruction set too.

//go:noescape
func dotQ8I16AVX2(nb int, w *byte, x *int16, dx *float32, lut *float32) float32

//go:noescape
func dotQ4I16AVX2(nb int, w *byte, x *int16, dx *float32, lut *float32) float32

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
	dot, deq := dotQ8I16AVX2, dequantQ8AVX2
	if t == Q4_0 {
		dot, deq = dotQ4I16AVX2, dequantQ4AVX2
	}
	bs := t.QBytes()
	return qrow{
		prepare: quantizeI16,
		dot: func(w []byte, x qacts) float32 {
			nb := len(w) / bs
			if nb == 0 {
				return 0
			}
			_, _ = x.i16[nb*32-1], x.scale[nb-1]
			return dot(nb, unsafe.SliceData(w), unsafe.SliceData(x.i16), unsafe.SliceData(x.scale), lut)
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
