package kernel

import "golang.org/x/sys/cpu"

// The assembly kernels (kernels_amd64.s); impl documents what each computes.

//go:noescape
func microAVX2(kc int, a, b, c *float32, ldc int)

//go:noescape
func microAVX512(kc int, a, b, c *float32, ldc int)

//go:noescape
func decode8x3AVX2(kc int, a, b *float32, ldb, groups int, next, out *float32, acc int)

//go:noescape
func decode8x3AVX512(kc int, a, b *float32, ldb, groups int, next, out *float32, acc int)

//go:noescape
func packBT8AVX2(kc int, b *float32, ldb int, dst *float32, nr int)

//go:noescape
func direct6x16AVX2(k int, a *float32, lda int, b *float32, ldb int, c *float32, ldc int)

//go:noescape
func direct1x16AVX2(k int, a *float32, b *float32, ldb int, c *float32)

//go:noescape
func direct6x32AVX512(k int, a *float32, lda int, b *float32, ldb int, c *float32, ldc int)

//go:noescape
func dotAVX2(n int, x, y *float32) float32

//go:noescape
func axpyAVX2(n int, alpha float32, x, y *float32)

// archAvailable lists the instruction sets of this CPU that have kernels
// here, best first. x/sys/cpu reports a feature only when the operating
// system saves its registers too.
func archAvailable() []ISA {
	var out []ISA
	avx2 := cpu.X86.HasAVX2 && cpu.X86.HasFMA
	if avx2 && cpu.X86.HasAVX512F {
		out = append(out, AVX512)
	}
	if avx2 {
		out = append(out, AVX2)
	}
	return out
}

func archImpl(isa ISA) *impl {
	im := &impl{isa: isa, mr: 6, nr: 16, micro: microAVX2, packBT8: packBT8AVX2, decode8x3: decode8x3AVX2,
		direct: direct6x16AVX2, directRow: direct1x16AVX2, dmr: 6, dnr: 16, rowNR: 16, dot: dotAVX2, axpy: axpyAVX2}
	if isa == AVX512 {
		im.nr, im.micro = 32, microAVX512
		im.dnr, im.direct = 32, direct6x32AVX512
		im.decode8x3 = decode8x3AVX512
	}
	return im
}
