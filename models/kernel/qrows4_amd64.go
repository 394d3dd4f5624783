package kernel

import "unsafe"

//go:noescape
func dotQ8I16x4AVX2(nb int, w *byte, x0, x1, x2, x3 *int16, d0, d1, d2, d3 *float32, lut *float32, out *[4]float32)

// archDot4 returns the kernel that dots one row of t with four prepared
// activation rows at once (qrow.dot4), or ok false.
func archDot4(isa ISA, t QType) (dot4 func(w []byte, x *[4]qacts, out *[4]float32), ok bool) {
	if isa == Generic || t != Q8_0 {
		return nil, false
	}
	lut := &f16Table()[0]
	bs := t.QBytes()
	return func(w []byte, x *[4]qacts, out *[4]float32) {
		nb := len(w) / bs
		if nb == 0 {
			*out = [4]float32{}
			return
		}
		for i := range x {
			_, _ = x[i].i16[nb*32-1], x[i].scale[nb-1]
		}
		dotQ8I16x4AVX2(nb, unsafe.SliceData(w),
			unsafe.SliceData(x[0].i16), unsafe.SliceData(x[1].i16), unsafe.SliceData(x[2].i16), unsafe.SliceData(x[3].i16),
			unsafe.SliceData(x[0].scale), unsafe.SliceData(x[1].scale), unsafe.SliceData(x[2].scale), unsafe.SliceData(x[3].scale),
			lut, out)
	}, true
}
