package kernel

// gemvChunkBytes is how much of B one unit of the decode path reads, rows
// in order: long enough for the prefetchers, short enough to share a
// product out among the workers.
const gemvChunkBytes = 256 << 10

// gemvRows computes C = alpha·A·Bᵀ + beta·C for A of m <= gemvMaxRows rows
// and B stored [n×k] (a decode step's activations times HF-layout weights).
// B is read once, row after row, for all the rows of A (read again from
// the cache for each row of B): one sequential stream per worker, which is
// what a core's prefetcher follows fastest (four rows of B read side by
// side ran at half the speed on the development machine). One row of A
// runs at the speed of streaming B; eight rows are bound by the loads of A
// from L1 and L2 instead (docs/results-structure.md has the figures).
func (k *Kernels) gemvRows(m, n, kk int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	if m > 1 && m%4 != 0 {
		// The 4-row kernel reads four rows: pad A with zero rows.
		buf := k.buffer(roundUp(m, 4) * kk)
		defer k.release(buf)
		pad := *buf
		clear(pad[m*kk:])
		for i := range m {
			copy(pad[i*kk:(i+1)*kk], a[i*lda:i*lda+kk])
		}
		a, lda = pad, kk
	}
	chunk := max(1, gemvChunkBytes/(4*kk))
	units := (n + chunk - 1) / chunk
	workers := k.workers
	if m*n*kk < parallelMinMACs {
		workers = 1
	}
	parallel(workers, units, func(_, u int) {
		j0 := u * chunk
		k.gemvChunk(m, j0, min(n, j0+chunk), kk, alpha, a, lda, b, ldb, beta, c, ldc)
	})
}

// gemvChunk computes columns [j0, j1) of C for gemvRows.
func (k *Kernels) gemvChunk(m, j0, j1, kk int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	k8 := kk &^ 7
	if m == 1 {
		for j := j0; j < j1; j++ {
			brow := b[j*ldb : j*ldb+kk]
			storeDot(0, j, k.dotPrefix(k8, a, brow), a, brow, kk, alpha, beta, c, ldc)
		}
		return
	}
	for j := j0; j < j1; j++ {
		brow := b[j*ldb : j*ldb+kk]
		for i0 := 0; i0 < m; i0 += 4 {
			var out [4]float32
			if k8 > 0 {
				k.impl.rows4x1(k8, &a[i0*lda], lda, &brow[0], &out)
			}
			for i := range min(4, m-i0) {
				storeDot(i0+i, j, out[i], a[(i0+i)*lda:], brow, kk, alpha, beta, c, ldc)
			}
		}
	}
}

// storeDot finishes C[i][j] from s, the dot product of row i of A and row
// j of B over their first kk&^7 elements: it adds the rest and applies
// alpha and beta.
func storeDot(i, j int, s float32, arow, brow []float32, kk int, alpha, beta float32, c []float32, ldc int) {
	for p := kk &^ 7; p < kk; p++ {
		s += arow[p] * brow[p]
	}
	if beta == 0 {
		c[i*ldc+j] = alpha * s
	} else {
		c[i*ldc+j] = alpha*s + beta*c[i*ldc+j]
	}
}

// dotPrefix is x·y over the first n elements (n a multiple of 8).
func (k *Kernels) dotPrefix(n int, x, y []float32) float32 {
	if n == 0 {
		return 0
	}
	_, _ = x[n-1], y[n-1]
	return k.impl.dot(n, &x[0], &y[0])
}
