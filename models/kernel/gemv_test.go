package kernel

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestDecodeRows checks the decode path's 8-row kernel at every row count
// it serves (2..8, padded to 8) on every instruction set: odd n, so that
// groups of three rows of B end short, within a block and at the end of B
// (n = 1001 at k = 131 makes blocks of 192 rows and a last one of 41; n =
// 40 at k = 1100 blocks of 27 and 13), fewer than three rows in all (n =
// 1, 2); odd k, below and above the kernel's 16-element steps and its
// 512-element passes; strided operands; beta 0 and 1.
func TestDecodeRows(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, isa := range Available() {
		for _, workers := range []int{1, 2} {
			kern, err := NewFor(isa, workers)
			if err != nil {
				t.Fatal(err)
			}
			for m := 2; m <= gemvMaxRows; m++ {
				for _, s := range [][2]int{{1, 17}, {2, 33}, {37, 53}, {5, 15}, {19, 7}, {1001, 131}, {2, 1100}, {40, 1100}, {1, 530}} {
					for _, beta := range []float32{0, 1} {
						p := product{opA: NoTrans, opB: Trans, m: m, n: s[0], k: s[1], alpha: 0.75, beta: beta, pad: 3}
						checkProduct(t, kern, p, r)
					}
				}
			}
		}
	}
}

// checkProduct runs p on kern against the float64 reference and checks
// that C's stride padding is left alone.
func checkProduct(t *testing.T, kern *Kernels, p product, r *rand.Rand) {
	t.Helper()
	o := p.fill(r)
	want, bound := naiveGemm(p, o)
	c := slices.Clone(o.c)
	kern.Gemm(p.opA, p.opB, p.m, p.n, p.k, p.alpha, o.a, o.lda, o.b, o.ldb, p.beta, c, o.ldc)
	for i := range p.m {
		for j := range o.ldc {
			got := c[i*o.ldc+j]
			if j >= p.n {
				if math.Float32bits(got) != math.Float32bits(o.c[i*o.ldc+j]) {
					t.Fatalf("%s workers=%d %v: padding C[%d][%d] changed to %g", kern.ISA(), kern.Workers(), p, i, j, got)
				}
				continue
			}
			if d := math.Abs(float64(got) - want[i*p.n+j]); !(d <= bound[i*p.n+j]) {
				t.Fatalf("%s workers=%d %v: C[%d][%d] = %g, want %g (error %.3g > bound %.3g)", kern.ISA(), kern.Workers(), p, i, j, got, want[i*p.n+j], d, bound[i*p.n+j])
			}
		}
	}
}

// TestDecodeRowsSameForAnyWorkers checks that the decode path's blocks,
// claimed by however many workers, give every element of C the same bits:
// many blocks (n = 301 at k = 1100 makes blocks of 27 rows, the last one
// of 4: a group and a tail row) and several passes over each (k > 512).
func TestDecodeRowsSameForAnyWorkers(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for _, isa := range Available() {
		for _, m := range []int{2, 8} {
			p := product{opA: NoTrans, opB: Trans, m: m, n: 301, k: 1100, alpha: 1, beta: 1, pad: 5}
			o := p.fill(r)
			var first []float32
			for _, workers := range []int{1, 2, 3} {
				kern, err := NewFor(isa, workers)
				if err != nil {
					t.Fatal(err)
				}
				c := slices.Clone(o.c)
				kern.Gemm(p.opA, p.opB, p.m, p.n, p.k, p.alpha, o.a, o.lda, o.b, o.ldb, p.beta, c, o.ldc)
				if first == nil {
					first = c
					continue
				}
				for i := range c {
					if math.Float32bits(c[i]) != math.Float32bits(first[i]) {
						t.Fatalf("%s %v: element %d is %g with %d workers, %g with 1", isa, p, i, c[i], workers, first[i])
					}
				}
			}
		}
	}
}
