package tinytools

import (
	"math"
	"math/rand/v2"
	"testing"
)

func naiveGemm(n, k, m int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int) {
	for i := 0; i < n; i++ {
		for j := 0; j < m; j++ {
			var s float64
			for p := 0; p < k; p++ {
				s += float64(a[i*lda+p]) * float64(b[p*ldb+j])
			}
			c[i*ldc+j] += float32(s)
		}
	}
}

func TestGemm(t *testing.T) {
	defer func() { useAVX512 = true }()
	for _, avx512 := range []bool{false, true} {
		useAVX512 = avx512
		testGemm(t)
	}
}

func testGemm(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, sz := range [][3]int{{1, 1, 1}, {6, 3, 16}, {7, 5, 17}, {13, 33, 40}, {100, 64, 96}, {5, 0, 3}, {97, 19, 31}, {12, 7, 32}, {19, 40, 81}, {6, 64, 64}} {
		n, k, m := sz[0], sz[1], sz[2]
		lda, ldb, ldc := k+2, m+1, m+3
		a := make([]float32, n*lda)
		b := make([]float32, max(k, 1)*ldb)
		c := make([]float32, n*ldc)
		for i := range a {
			a[i] = r.Float32()*2 - 1
		}
		for i := range b {
			b[i] = r.Float32()*2 - 1
		}
		for i := range c {
			c[i] = r.Float32()
		}
		want := append([]float32(nil), c...)
		naiveGemm(n, k, m, a, lda, b, ldb, want, ldc)
		gemm(n, k, m, a, lda, b, ldb, c, ldc)
		for i := range c {
			if math.Abs(float64(c[i]-want[i])) > 1e-4 {
				t.Fatalf("%v: c[%d] = %g, want %g", sz, i, c[i], want[i])
			}
		}
	}
}

func BenchmarkGemmAVX2(b *testing.B) {
	useAVX512 = false
	defer func() { useAVX512 = true }()
	BenchmarkGemm(b)
}

func BenchmarkGemm(b *testing.B) {
	const n, k, m = 2048, 192, 512
	x := make([]float32, n*k)
	w := make([]float32, k*m)
	y := make([]float32, n*m)
	for i := range x {
		x[i] = float32(i%7)*0.1 + 0.01
	}
	for i := range w {
		w[i] = float32(i%5)*0.1 + 0.01
	}
	for b.Loop() {
		gemm(n, k, m, x, k, w, m, y, m)
	}
	b.ReportMetric(float64(2*n*k*m)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOPs")
}

func TestExpNeg(t *testing.T) {
	for x := float32(-87); x <= 0; x += 0.001 {
		got, want := float64(expNeg(x)), math.Exp(float64(x))
		tol := 1e-6
		if x < -10 {
			tol = 1e-5 // the float32 argument reduction loses digits
		}
		if math.Abs(got-want) > tol*want+1e-38 {
			t.Fatalf("expNeg(%g) = %g, want %g", x, got, want)
		}
	}
}
