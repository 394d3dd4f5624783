package kernel

// gemvChunkBytes is how much of B one unit of the decode path reads, rows
// in order: long enough for the prefetchers, short enough to share a
// product out among the workers.
const gemvChunkBytes = 256 << 10

// gemvRows computes C = alpha·A·Bᵀ + beta·C for A of m <= gemvMaxRows rows
// and B stored [n×k] (a decode step's activations times HF-layout weights).
// B is read once, in order, for all the rows of A. One row of A streams
// one row of B at a time. More rows take three rows of B at once against
// eight rows of A (padded with zero rows), so that every load of A serves
// three rows of B, and prefetch the next three rows into L2 as they go:
// one row of B at a time against the rows of A, eight rows read the
// weights at 0.27 of the memory's read speed per CPU-second, three at a
// time with the far prefetch at 0.47 (docs/results-structure.md).
func (k *Kernels) gemvRows(m, n, kk int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	if m > 1 && m < 8 {
		// The 8-row kernel reads eight rows: pad A with zero rows.
		buf := k.buffer(8 * kk)
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
	if m == 1 {
		k8 := kk &^ 7
		for j := j0; j < j1; j++ {
			brow := b[j*ldb : j*ldb+kk]
			storeDot(0, j, k.dotPrefix(k8, a, brow), k8, a, brow, kk, alpha, beta, c, ldc)
		}
		return
	}
	k16 := kk &^ 15
	for j := j0; j < j1; j += 3 {
		// The last group of a chunk may hold fewer than three rows: the
		// kernel then reads the last row again (from L1). next is the
		// group after this one, which the kernel prefetches into L2.
		rows := [3]int{j, min(j+1, j1-1), min(j+2, j1-1)}
		var out [24]float32
		if k16 > 0 {
			next := &b[min(j+3, j1-1)*ldb]
			k.impl.rows8x3(k16, &a[0], lda, &b[rows[0]*ldb], &b[rows[1]*ldb], &b[rows[2]*ldb], next, &out)
		}
		for q := range min(3, j1-j) {
			brow := b[(j+q)*ldb : (j+q)*ldb+kk]
			for i := range m {
				storeDot(i, j+q, out[q*8+i], k16, a[i*lda:], brow, kk, alpha, beta, c, ldc)
			}
		}
	}
}

// storeDot finishes C[i][j] from s, the dot product of row i of A and row
// j of B over their first from elements: it adds the rest and applies
// alpha and beta.
func storeDot(i, j int, s float32, from int, arow, brow []float32, kk int, alpha, beta float32, c []float32, ldc int) {
	for p := from; p < kk; p++ {
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
