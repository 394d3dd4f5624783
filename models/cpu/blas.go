package cpu

import (
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/blas/gonum"
)

// BLAS names the blas32 implementation the executor's GEMMs use: "gonum"
// (pure Go, the default) or "openblas" (built with -tags openblas).
var BLAS = "gonum"

// gemmNT computes c[m×n] = a[m×k]·bᵀ + beta·c for b of shape [n×k], all
// row-major: the product of activations with HF-layout weights.
func gemmNT(m, n, k int, a, b []float32, beta float32, c []float32) {
	switch m {
	case 0:
		return
	case 1: // a matrix-vector product: BLAS's gemv streams b once (OpenBLAS's sgemm does not special-case it)
		blas32.Implementation().Sgemv(blas.NoTrans, n, k, 1, b, k, a, 1, beta, c, 1)
		return
	}
	blas32.Implementation().Sgemm(blas.NoTrans, blas.Trans, m, n, k, 1, a, k, b, k, beta, c, n)
}

// gemmNTld computes c[m×n] = alpha·a·bᵀ with explicit leading dimensions.
func gemmNTld(m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, c []float32, ldc int) {
	blas32.Implementation().Sgemm(blas.NoTrans, blas.Trans, m, n, k, alpha, a, lda, b, ldb, 0, c, ldc)
}

// gemmNNld computes c[m×n] = a[m×k]·b[k×n] with explicit leading dimensions.
func gemmNNld(m, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int) {
	blas32.Implementation().Sgemm(blas.NoTrans, blas.NoTrans, m, n, k, 1, a, lda, b, ldb, 0, c, ldc)
}

// native is gonum's pure-Go BLAS, used directly for the short vectors of
// row-by-row attention (its assembly kernels; a cgo call per vector would
// cost more than the vector).
var native gonum.Implementation

// dotUnitary is x·y.
func dotUnitary(x, y []float32) float32 { return native.Sdot(len(x), x, 1, y, 1) }

// axpyUnitary is y += a·x.
func axpyUnitary(a float32, x, y []float32) { native.Saxpy(len(x), a, x, 1, y, 1) }
