package kernel

// directMaxB is the largest B, in elements, that gemmDirect multiplies:
// B stays in a core's L2 cache (512 KiB) while the row tiles of A go over
// it, so that unpacked it costs no more than packed.
const directMaxB = 128 << 10

// useDirect reports whether a product runs unpacked (gemmDirect): both
// operands as stored, alpha 1, and a B small enough for L2. Packing such a
// B costs as much as multiplying it by a few rows (the tiny model's
// training products: 20-600 rows against 128-1024 columns).
func useDirect(opA, opB Op, n, kk int, alpha float32) bool {
	return opA == NoTrans && opB == NoTrans && alpha == 1 && n*kk <= directMaxB
}

// gemmDirect adds A·B to C with neither operand packed: row blocks of
// blockM rows shared out to the workers, each tiled dmr×dnr by the direct
// kernel, rows past the last whole tile by the row kernel, columns past the
// last whole row-kernel width in Go. Which code computes an element depends
// only on its place in C, so the result does not depend on the workers.
func (k *Kernels) gemmDirect(m, n, kk int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int) {
	im := k.impl
	nTile := n - n%im.dnr
	nRow := n - n%im.rowNR
	workers := k.workers
	if m*n*kk < parallelMinMACs {
		workers = 1
	}
	parallel(workers, (m+blockM-1)/blockM, func(_, u int) {
		i0, i1 := u*blockM, min(m, (u+1)*blockM)
		for j := 0; j < nRow; j += im.dnr {
			if j >= nTile { // narrower than a tile: row kernels only
				for i := i0; i < i1; i++ {
					for q := j; q < nRow; q += im.rowNR {
						im.directRow(kk, &a[i*lda], &b[q], ldb, &c[i*ldc+q])
					}
				}
				break
			}
			i := i0
			for ; i+im.dmr <= i1; i += im.dmr {
				im.direct(kk, &a[i*lda], lda, &b[j], ldb, &c[i*ldc+j], ldc)
			}
			for ; i < i1; i++ {
				for q := j; q < j+im.dnr; q += im.rowNR {
					im.directRow(kk, &a[i*lda], &b[q], ldb, &c[i*ldc+q])
				}
			}
		}
		for i := i0; i < i1; i++ {
			arow := a[i*lda : i*lda+kk]
			for j := nRow; j < n; j++ {
				var s float32
				for p, x := range arow {
					s += x * b[p*ldb+j]
				}
				c[i*ldc+j] += s
			}
		}
	})
}
