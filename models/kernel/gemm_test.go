package kernel

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// product is one Gemm call's arguments; fill makes its operands.
type product struct {
	opA, opB    Op
	m, n, k     int
	alpha, beta float32
	pad         int // extra elements per row beyond each operand's width
}

func (p product) String() string {
	t := func(o Op) string {
		if o == Trans {
			return "T"
		}
		return "N"
	}
	return fmt.Sprintf("%s%s/%dx%dx%d/alpha=%g/beta=%g/pad=%d", t(p.opA), t(p.opB), p.m, p.n, p.k, p.alpha, p.beta, p.pad)
}

// operands are a product's stored matrices with their row strides.
type operands struct {
	a, b, c       []float32
	lda, ldb, ldc int
}

func (p product) fill(r *rand.Rand) operands {
	var o operands
	ar, ac := p.m, p.k
	if p.opA == Trans {
		ar, ac = p.k, p.m
	}
	br, bc := p.k, p.n
	if p.opB == Trans {
		br, bc = p.n, p.k
	}
	o.lda, o.ldb, o.ldc = ac+p.pad, bc+p.pad, p.n+p.pad
	o.a = make([]float32, ar*o.lda)
	o.b = make([]float32, br*o.ldb)
	o.c = make([]float32, p.m*o.ldc)
	for _, x := range [][]float32{o.a, o.b, o.c} {
		for i := range x {
			x[i] = r.Float32()*2 - 1
		}
	}
	if p.beta == 0 {
		// C is write-only with beta 0: NaN there must not leak out.
		for i := range o.c {
			o.c[i] = float32(math.NaN())
		}
	}
	return o
}

// naiveGemm is the reference: C = alpha·op(A)·op(B) + beta·C in float64,
// with bound[i·n+j] the rounding error float32 arithmetic may make on
// element (i, j) in any summation order: (k+4)·2⁻²³·(|alpha|·Σ|a||b| + |beta·c|).
func naiveGemm(p product, o operands) (want, bound []float64) {
	at := func(i, q int) float64 {
		if p.opA == Trans {
			return float64(o.a[q*o.lda+i])
		}
		return float64(o.a[i*o.lda+q])
	}
	bt := func(q, j int) float64 {
		if p.opB == Trans {
			return float64(o.b[j*o.ldb+q])
		}
		return float64(o.b[q*o.ldb+j])
	}
	want = make([]float64, p.m*p.n)
	bound = make([]float64, p.m*p.n)
	eps := float64(p.k+4) * math.Ldexp(1, -23)
	for i := range p.m {
		for j := range p.n {
			var s, abs float64
			for q := range p.k {
				s += at(i, q) * bt(q, j)
				abs += math.Abs(at(i, q) * bt(q, j))
			}
			w := float64(p.alpha) * s
			bnd := math.Abs(float64(p.alpha)) * abs
			if p.beta != 0 {
				c := float64(p.beta) * float64(o.c[i*o.ldc+j])
				w += c
				bnd += math.Abs(c)
			}
			want[i*p.n+j], bound[i*p.n+j] = w, eps*bnd+1e-30
		}
	}
	return want, bound
}

// products covers the three paths (decode rows, unpacked and packed GEMM), every operand
// layout, edge tiles, sizes that are not multiples of 8 or of any tile, and
// sizes that cross the KC, MC and NC block boundaries.
func products() []product {
	var ps []product
	for _, s := range [][3]int{
		{1, 1, 1}, {1, 7, 5}, {1, 13, 9}, {1, 64, 64}, {2, 9, 17}, {3, 33, 40}, {5, 19, 23}, {8, 21, 16}, {8, 6, 3}, // decode-sized
		{9, 17, 31}, {7, 5, 17}, {13, 33, 40}, {6, 16, 8}, {12, 32, 64}, {19, 40, 81}, {97, 19, 31}, {33, 1, 7}, // edge tiles
		{100, 40, 300}, {13, 530, 20}, {200, 24, 520}, // past MC and KC, past NC, two KC and MC blocks
	} {
		for _, ops := range [][2]Op{{NoTrans, Trans}, {NoTrans, NoTrans}, {Trans, NoTrans}, {Trans, Trans}} {
			ps = append(ps, product{opA: ops[0], opB: ops[1], m: s[0], n: s[1], k: s[2], alpha: 1, beta: 0, pad: 3})
		}
		ps = append(ps,
			product{opA: NoTrans, opB: Trans, m: s[0], n: s[1], k: s[2], alpha: -0.5, beta: 1},
			product{opA: NoTrans, opB: NoTrans, m: s[0], n: s[1], k: s[2], alpha: 2, beta: 0.5, pad: 1},
			product{opA: NoTrans, opB: NoTrans, m: s[0], n: s[1], k: s[2], alpha: 1, beta: 1, pad: 2}) // the trainer's C += A·B
	}
	return ps
}

// TestGemmMatchesReference checks every instruction set of this CPU, on one
// worker and on several, against the float64 reference within the float32
// error bound, and checks that the stride padding of C is left alone.
func TestGemmMatchesReference(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var kernels []*Kernels
	for _, isa := range Available() {
		for _, workers := range []int{1, 3} {
			k, err := NewFor(isa, workers)
			if err != nil {
				t.Fatal(err)
			}
			kernels = append(kernels, k)
		}
	}
	for _, p := range products() {
		o := p.fill(r)
		want, bound := naiveGemm(p, o)
		for _, k := range kernels {
			c := slices.Clone(o.c)
			k.Gemm(p.opA, p.opB, p.m, p.n, p.k, p.alpha, o.a, o.lda, o.b, o.ldb, p.beta, c, o.ldc)
			for i := range p.m {
				for j := range o.ldc {
					got := c[i*o.ldc+j]
					if j >= p.n {
						if math.Float32bits(got) != math.Float32bits(o.c[i*o.ldc+j]) {
							t.Fatalf("%s workers=%d %v: padding C[%d][%d] changed to %g", k.ISA(), k.Workers(), p, i, j, got)
						}
						continue
					}
					if d := math.Abs(float64(got) - want[i*p.n+j]); !(d <= bound[i*p.n+j]) {
						t.Fatalf("%s workers=%d %v: C[%d][%d] = %g, want %g (error %.3g > bound %.3g)", k.ISA(), k.Workers(), p, i, j, got, want[i*p.n+j], d, bound[i*p.n+j])
					}
				}
			}
		}
	}
}

// TestGemmSameForAnyWorkers checks that the result does not depend on how
// many goroutines share the product: each element is summed in one order.
func TestGemmSameForAnyWorkers(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, isa := range Available() {
		for _, p := range []product{
			{opA: NoTrans, opB: Trans, m: 64, n: 1030, k: 260, alpha: 1},
			{opA: NoTrans, opB: Trans, m: 5, n: 3000, k: 200, alpha: 1},
			{opA: NoTrans, opB: NoTrans, m: 300, n: 40, k: 70, alpha: 1, beta: 1},
		} {
			o := p.fill(r)
			var first []float32
			for _, workers := range []int{1, 2, 5} {
				k, err := NewFor(isa, workers)
				if err != nil {
					t.Fatal(err)
				}
				c := slices.Clone(o.c)
				k.Gemm(p.opA, p.opB, p.m, p.n, p.k, p.alpha, o.a, o.lda, o.b, o.ldb, p.beta, c, o.ldc)
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

func TestGemmZeroSizesAndAlpha(t *testing.T) {
	k := New(0)
	c := []float32{1, 2, 3, 4}
	k.Gemm(NoTrans, Trans, 2, 2, 0, 1, nil, 0, nil, 0, 0.5, c, 2) // k = 0: C = beta·C
	if !slices.Equal(c, []float32{0.5, 1, 1.5, 2}) {
		t.Fatalf("k = 0: C = %v, want beta·C", c)
	}
	a := []float32{1, 2, 3, 4}
	k.Gemm(NoTrans, Trans, 2, 2, 2, 0, a, 2, a, 2, 0, c, 2) // alpha = 0, beta = 0: zeros
	if !slices.Equal(c, []float32{0, 0, 0, 0}) {
		t.Fatalf("alpha = 0: C = %v, want zeros", c)
	}
	k.Gemm(NoTrans, Trans, 0, 5, 5, 1, nil, 5, nil, 5, 0, nil, 5) // m = 0: nothing to do
}

func TestGemmShortOperandPanics(t *testing.T) {
	k := New(0)
	for _, tc := range []struct {
		name    string
		a, b, c []float32
		want    string
	}{
		{"short A", make([]float32, 5), make([]float32, 6), make([]float32, 4), "operand A"},
		{"short B", make([]float32, 6), make([]float32, 5), make([]float32, 4), "operand B"},
		{"short C", make([]float32, 6), make([]float32, 6), make([]float32, 3), "operand C"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer func() {
				r := recover()
				if s, _ := r.(string); !strings.Contains(s, tc.want) {
					t.Fatalf("panic %v, want one naming %s", r, tc.want)
				}
			}()
			k.Gemm(NoTrans, Trans, 2, 2, 3, 1, tc.a, 3, tc.b, 3, 0, tc.c, 2)
		})
	}
}

func TestDotAxpy(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, isa := range Available() {
		k, err := NewFor(isa, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range []int{0, 1, 7, 8, 9, 16, 24, 31, 64, 100, 1000} {
			x, y := make([]float32, n), make([]float32, n+3)
			for i := range x {
				x[i] = r.Float32()*2 - 1
			}
			for i := range y {
				y[i] = r.Float32()*2 - 1
			}
			var want, abs float64
			for i := range x {
				want += float64(x[i]) * float64(y[i])
				abs += math.Abs(float64(x[i]) * float64(y[i]))
			}
			bound := float64(n+2)*math.Ldexp(1, -23)*abs + 1e-30
			if got := k.Dot(x, y); math.Abs(float64(got)-want) > bound {
				t.Fatalf("%s: Dot over %d = %g, want %g", isa, n, got, want)
			}
			const alpha = -0.75
			z := slices.Clone(y)
			k.Axpy(alpha, x, z)
			for i := range z {
				w := float64(y[i])
				if i < n {
					w += alpha * float64(x[i])
				}
				if math.Abs(float64(z[i])-w) > 2*math.Ldexp(1, -23)*(math.Abs(float64(y[i]))+1) {
					t.Fatalf("%s: Axpy over %d: y[%d] = %g, want %g", isa, n, i, z[i], w)
				}
			}
		}
	}
}

func TestNewFor(t *testing.T) {
	if _, err := NewFor("sse9", 1); err == nil || !strings.Contains(err.Error(), "available") {
		t.Fatalf("unknown ISA: err = %v, want one listing the available", err)
	}
	k, err := NewFor(Generic, 4)
	if err != nil || k.ISA() != Generic || k.Workers() != 4 || k.Serial().Workers() != 1 || k.Serial().ISA() != Generic {
		t.Fatalf("NewFor(generic, 4) = %v, %v", k, err)
	}
	if got := New(0).Workers(); got != runtime.GOMAXPROCS(0) {
		t.Fatalf("New(0) has %d workers, want GOMAXPROCS %d", got, runtime.GOMAXPROCS(0))
	}
	if got := New(0).ISA(); got != Available()[0] {
		t.Fatalf("New(0) runs %s, want the best available %s", got, Available()[0])
	}
}
