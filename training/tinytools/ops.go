package tinytools

import (
	"math"
	"runtime"
	"sync"

	"github.com/pitstop-llm/pitstop/models/kernel"
)

// gemm adds A[n×k]·B[k×m] to C[n×m], row-major with row strides lda, ldb
// and ldc (in elements), on mm (models/kernel: the matrix products serving
// runs too).
func gemm(mm *kernel.Kernels, n, k, m int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int) {
	mm.Gemm(kernel.NoTrans, kernel.NoTrans, n, m, k, 1, a, lda, b, ldb, 1, c, ldc)
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
