package tinytools

import (
	"fmt"
	"math"
	"runtime"
	"sync"
)

// useAVX512 lets gemm use the AVX-512 kernel where the CPU has it (tests
// turn it off to check the AVX2 path).
var useAVX512 = true

// gemm computes C[n×m] += A[n×k] · B[k×m] for row-major matrices with row
// strides lda, ldb and ldc (in elements). On amd64 with AVX2 and FMA it runs
// an assembly micro-kernel over 6×16 tiles; elsewhere, and for the columns
// left over, plain Go.
func gemm(n, k, m int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int) {
	if n == 0 || m == 0 || k == 0 {
		return
	}
	if len(a) < (n-1)*lda+k || len(b) < (k-1)*ldb+m || len(c) < (n-1)*ldc+m || lda < k || ldb < m || ldc < m {
		panic(fmt.Sprintf("tinytools: gemm %d×%d·%d×%d: short or overlapping operands (len %d/%d/%d, strides %d/%d/%d)",
			n, k, k, m, len(a), len(b), len(c), lda, ldb, ldc))
	}
	m16, m32 := 0, 0
	if haveAVX2 {
		m16 = m &^ 15
	}
	if haveAVX512 && useAVX512 {
		m32 = m &^ 31
	}
	const rowBlock = 96
	for i0 := 0; i0 < n; i0 += rowBlock {
		i1 := min(i0+rowBlock, n)
		for j := 0; j < m32; j += 32 {
			i := i0
			for ; i+6 <= i1; i += 6 {
				kern6x32(k, &a[i*lda], lda, &b[j], ldb, &c[i*ldc+j], ldc)
			}
			for ; i < i1; i++ {
				kern1x16(k, &a[i*lda], &b[j], ldb, &c[i*ldc+j])
				kern1x16(k, &a[i*lda], &b[j+16], ldb, &c[i*ldc+j+16])
			}
		}
		for j := m32; j < m16; j += 16 {
			i := i0
			for ; i+6 <= i1; i += 6 {
				kern6x16(k, &a[i*lda], lda, &b[j], ldb, &c[i*ldc+j], ldc)
			}
			for ; i < i1; i++ {
				kern1x16(k, &a[i*lda], &b[j], ldb, &c[i*ldc+j])
			}
		}
		if m16 < m {
			gemmGo(i0, i1, k, m16, m, a, lda, b, ldb, c, ldc)
		}
	}
}

// gemmGo is gemm's plain-Go path over rows [i0,i1) and columns [j0,j1).
func gemmGo(i0, i1, k, j0, j1 int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int) {
	w := j1 - j0
	for i := i0; i < i1; i++ {
		ci := c[i*ldc+j0 : i*ldc+j1]
		ai := a[i*lda : i*lda+k]
		for p, av := range ai {
			if av == 0 {
				continue
			}
			bp := b[p*ldb+j0 : p*ldb+j0+w]
			axpy(av, bp, ci)
		}
	}
}

// axpy: y += a·x.
func axpy(a float32, x, y []float32) {
	y = y[:len(x)]
	i := 0
	for ; i+4 <= len(x); i += 4 {
		y[i] += a * x[i]
		y[i+1] += a * x[i+1]
		y[i+2] += a * x[i+2]
		y[i+3] += a * x[i+3]
	}
	for ; i < len(x); i++ {
		y[i] += a * x[i]
	}
}

// dot returns x·y.
func dot(x, y []float32) float32 {
	y = y[:len(x)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(x); i += 4 {
		s0 += x[i] * y[i]
		s1 += x[i+1] * y[i+1]
		s2 += x[i+2] * y[i+2]
		s3 += x[i+3] * y[i+3]
	}
	for ; i < len(x); i++ {
		s0 += x[i] * y[i]
	}
	return (s0 + s1) + (s2 + s3)
}

// transpose writes src (rows×cols, row-major) transposed into dst
// (cols×rows).
func transpose(dst, src []float32, rows, cols int) {
	const bs = 32
	for i0 := 0; i0 < rows; i0 += bs {
		for j0 := 0; j0 < cols; j0 += bs {
			for i := i0; i < min(i0+bs, rows); i++ {
				for j := j0; j < min(j0+bs, cols); j++ {
					dst[j*rows+i] = src[i*cols+j]
				}
			}
		}
	}
}

// parallelFor runs f(lo, hi) over [0,n) split into contiguous chunks, one
// goroutine per chunk, at most workers of them (GOMAXPROCS when workers <= 0).
func parallelFor(n, workers int, f func(lo, hi int)) {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	workers = min(workers, n)
	if workers <= 1 {
		if n > 0 {
			f(0, n)
		}
		return
	}
	var wg sync.WaitGroup
	for w := range workers {
		lo, hi := w*n/workers, (w+1)*n/workers
		wg.Go(func() { f(lo, hi) })
	}
	wg.Wait()
}

// expNeg returns e^x for x <= 0 (0 below -87), to about 2e-7 relative
// error: the softmax and SiLU exponentials, without float64 math.Exp.
func expNeg(x float32) float32 {
	if x < -87 {
		return 0
	}
	t := x * 1.4426950408889634 // log2(e)
	n := float32(int32(t))
	if n > t {
		n--
	}
	f := t - n // [0, 1)
	p := 1 + f*(0.6931471805599453+f*(0.2402265069591007+f*(0.05550410866482158+f*(0.009618129107628477+f*(0.0013333558146428443+f*(0.00015403530393381606+f*1.525273380405984e-05))))))
	return p * math.Float32frombits(uint32(int32(n)+127)<<23)
}

// softmaxExp replaces x[i] with e^(x[i]-mx) (x[i] <= mx) and returns their
// sum: expNeg over a row, in one call.
func softmaxExp(x []float32, mx float32) float32 {
	var sum float32
	for i, v := range x {
		t := (v - mx) * 1.4426950408889634
		if t < -125 {
			x[i] = 0
			continue
		}
		n := float32(int32(t))
		if n > t {
			n--
		}
		f := t - n
		p := 1 + f*(0.6931471805599453+f*(0.2402265069591007+f*(0.05550410866482158+f*(0.009618129107628477+f*(0.0013333558146428443+f*(0.00015403530393381606+f*1.525273380405984e-05))))))
		e := p * math.Float32frombits(uint32(int32(n)+127)<<23)
		x[i] = e
		sum += e
	}
	return sum
}

// sigmoids writes s[i] = 1/(1+e^-x[i]).
func sigmoids(s, x []float32) {
	s = s[:len(x)]
	for i, v := range x {
		a := v
		if a > 0 {
			a = -a
		}
		e := expNeg(a) // e^-|x|
		if v >= 0 {
			s[i] = 1 / (1 + e)
		} else {
			s[i] = e / (1 + e)
		}
	}
}
