package kernel

// gemvChunkBytes is how much of B one unit of the decode path reads: the
// rows of A go over it in turn, so that it is read from memory once and
// from L2 after.
const gemvChunkBytes = 64 << 10

// gemvRows computes C = alpha·A·Bᵀ + beta·C for A of m <= gemvMaxRows rows
// and B stored [n×k] (a decode step's activations times HF-layout weights).
// Each row of B is read once from memory, for all the rows of A: the
// product runs at the speed of streaming B.
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
	chunk := max(4, gemvChunkBytes/(4*kk)) &^ 3
	units := (n + chunk - 1) / chunk
	workers := k.workers
	if m*n*kk < parallelMinMACs {
		workers = 1
	}
	parallel(workers, units, func(_, u int) {
		j0 := u * chunk
		k.gemvChunk(m, min(n, j0+chunk), j0, kk, alpha, a, lda, b, ldb, beta, c, ldc)
	})
}

// gemvChunk computes columns [j0, j1) of C for gemvRows.
func (k *Kernels) gemvChunk(m, j1, j0, kk int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	im := k.impl
	k8 := kk &^ 7
	store := func(i, j int, s float32) {
		// The k%8 columns the kernels leave.
		for p := k8; p < kk; p++ {
			s += a[i*lda+p] * b[j*ldb+p]
		}
		if beta == 0 {
			c[i*ldc+j] = alpha * s
		} else {
			c[i*ldc+j] = alpha*s + beta*c[i*ldc+j]
		}
	}
	if m == 1 {
		j := j0
		for ; j+4 <= j1; j += 4 {
			var out [4]float32
			if k8 > 0 {
				im.rows1x4(k8, &a[0], &b[j*ldb], ldb, &out)
			}
			for q, s := range out {
				store(0, j+q, s)
			}
		}
		for ; j < j1; j++ {
			store(0, j, k.dotPrefix(k8, a, b[j*ldb:]))
		}
		return
	}
	for i0 := 0; i0 < m; i0 += 4 {
		rows := min(4, m-i0)
		j := j0
		for ; j+2 <= j1; j += 2 {
			var out [8]float32
			if k8 > 0 {
				im.rows4x2(k8, &a[i0*lda], lda, &b[j*ldb], ldb, &out)
			}
			for i := range rows {
				store(i0+i, j, out[2*i])
				store(i0+i, j+1, out[2*i+1])
			}
		}
		if j < j1 {
			for i := range rows {
				store(i0+i, j, k.dotPrefix(k8, a[(i0+i)*lda:], b[j*ldb:]))
			}
		}
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
