package kernel

// The FMA peak loops (peak_amd64.s): the compute roof that the decode
// benchmarks set the kernels against. Not a product; nothing but the
// benchmarks calls them.

//go:noescape
func fmaPeakAVX512(n int)

//go:noescape
func fmaPeakAVX2(n int)

// fmaPeak returns isa's FMA peak loop and the FLOP one iteration of it
// does (nil where isa has none).
func fmaPeak(isa ISA) (loop func(n int), flops int) {
	switch isa {
	case AVX512:
		return fmaPeakAVX512, 24 * 16 * 2
	case AVX2:
		return fmaPeakAVX2, 12 * 8 * 2
	}
	return nil, 0
}
