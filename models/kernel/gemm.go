package kernel

import "fmt"

// Blocking of the packed GEMM, in elements: a KC-deep panel of B (KC×NC)
// and a block of packed A (MC×KC) fit together in a core's L2 cache (1 MiB
// on the development machine's EPYC, 96 KiB + 512 KiB here); a micro-panel
// of B (KC×NR) stays in L1.
const (
	blockK      = 256
	blockM      = 96 // a multiple of every micro-kernel's MR (4, 6)
	blockN      = 512
	gemvMaxRows = 8 // products with at most this many rows against a [n×k] B take the decode path
	// parallelMinMACs is the work (m·n·k) below which a product runs on the
	// caller's goroutine alone: waking another costs more than it saves.
	parallelMinMACs = 1 << 18
)

// Gemm computes C = alpha·op(A)·op(B) + beta·C for row-major matrices:
// op(A) is m×k, op(B) is k×n, C is m×n, with row strides lda, ldb and ldc.
// With beta 0, C is only written (whatever it held, NaN included, is
// ignored). Operands too short for their shape and stride panic, naming the
// operand: they are the caller's bug.
func (k *Kernels) Gemm(opA, opB Op, m, n, kk int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	if m < 0 || n < 0 || kk < 0 {
		panic(fmt.Sprintf("kernel: gemm of negative size %d×%d·%d", m, kk, n))
	}
	if m == 0 || n == 0 {
		return
	}
	checkOperand("C", NoTrans, m, n, c, ldc)
	if kk == 0 || alpha == 0 {
		scaleRows(m, n, beta, c, ldc)
		return
	}
	checkOperand("A", opA, m, kk, a, lda)
	checkOperand("B", opB, kk, n, b, ldb)
	if m <= gemvMaxRows && opA == NoTrans && opB == Trans {
		k.gemvRows(m, n, kk, alpha, a, lda, b, ldb, beta, c, ldc)
		return
	}
	scaleRows(m, n, beta, c, ldc)
	if useDirect(opA, opB, n, kk, alpha) {
		k.gemmDirect(m, n, kk, a, lda, b, ldb, c, ldc)
		return
	}
	k.gemmPacked(opA, opB, m, n, kk, alpha, a, lda, b, ldb, c, ldc)
}

// checkOperand panics unless x holds a rows×cols matrix read with op at row
// stride ld.
func checkOperand(name string, op Op, rows, cols int, x []float32, ld int) {
	sr, sc := rows, cols // as stored
	if op == Trans {
		sr, sc = cols, rows
	}
	if ld < sc || len(x) < (sr-1)*ld+sc {
		panic(fmt.Sprintf("kernel: gemm operand %s (%d×%d stored, row stride %d) is short: %d elements", name, sr, sc, ld, len(x)))
	}
}

// scaleRows sets C = beta·C (beta 0 writes zeros).
func scaleRows(m, n int, beta float32, c []float32, ldc int) {
	if beta == 1 {
		return
	}
	for i := range m {
		row := c[i*ldc : i*ldc+n]
		if beta == 0 {
			clear(row)
			continue
		}
		for j := range row {
			row[j] *= beta
		}
	}
}

func roundUp(x, to int) int { return (x + to - 1) / to * to }

// gemmPacked adds alpha·op(A)·op(B) to C: A packed once by every worker
// together, then units of (row range, NC-wide column block) shared out,
// each packing its B and running the micro-kernel over the tiles.
func (k *Kernels) gemmPacked(opA, opB Op, m, n, kk int, alpha float32, a []float32, lda int, b []float32, ldb int, c []float32, ldc int) {
	im := k.impl
	mr, nr := im.mr, im.nr
	mp := roundUp(m, mr)
	workers := k.workers
	if m*n*kk < parallelMinMACs {
		workers = 1
	}
	paBuf := k.buffer(mp * kk)
	defer k.release(paBuf)
	pa := *paBuf
	panels := mp / mr
	const panelsPerUnit = blockM / 4 // rows of A per packing unit: a few dozen panels
	kBlocks := (kk + blockK - 1) / blockK
	packUnits := (panels + panelsPerUnit - 1) / panelsPerUnit
	parallel(workers, kBlocks*packUnits, func(_, u int) {
		p0 := u / packUnits * blockK
		kc := min(blockK, kk-p0)
		first := u % packUnits * panelsPerUnit
		for ip := first; ip < min(first+panelsPerUnit, panels); ip++ {
			packA(pa[p0*mp+ip*mr*kc:], opA, a, lda, alpha, m, ip*mr, mr, p0, kc)
		}
	})

	nBlocks := (n + blockN - 1) / blockN
	rowParts := 1
	if workers > 1 && nBlocks < 2*workers {
		rowParts = min((2*workers+nBlocks-1)/nBlocks, (m+blockM-1)/blockM)
	}
	rowsPer := roundUp((m+rowParts-1)/rowParts, mr)
	rowParts = (m + rowsPer - 1) / rowsPer
	pbBufs := make([]*[]float32, min(workers, nBlocks*rowParts))
	defer func() {
		for _, p := range pbBufs {
			if p != nil {
				k.release(p)
			}
		}
	}()
	parallel(workers, nBlocks*rowParts, func(w, u int) {
		if pbBufs[w] == nil {
			pbBufs[w] = k.buffer(blockK * roundUp(min(blockN, n), nr))
		}
		pb := *pbBufs[w]
		j0 := u / rowParts * blockN
		nc := min(blockN, n-j0)
		r0 := u % rowParts * rowsPer
		r1 := min(m, r0+rowsPer)
		var tile [6 * 32]float32 // an edge tile, MR×NR at most
		for p0 := 0; p0 < kk; p0 += blockK {
			kc := min(blockK, kk-p0)
			for jp := 0; jp*nr < nc; jp++ {
				k.packB(pb[jp*nr*kc:], opB, b, ldb, n, j0+jp*nr, nr, p0, kc)
			}
			for i0 := r0; i0 < r1; i0 += blockM {
				i1 := min(i0+blockM, r1)
				for jp := 0; jp*nr < nc; jp++ {
					bp := &pb[jp*nr*kc]
					cols := min(nr, nc-jp*nr)
					j := j0 + jp*nr
					for ip := i0 / mr; ip*mr < i1; ip++ {
						ap := &pa[p0*mp+ip*mr*kc]
						rows := min(mr, m-ip*mr)
						if rows == mr && cols == nr {
							im.micro(kc, ap, bp, &c[ip*mr*ldc+j], ldc)
							continue
						}
						t := tile[:mr*nr]
						clear(t)
						im.micro(kc, ap, bp, &t[0], nr)
						for i := range rows {
							dst := c[(ip*mr+i)*ldc+j : (ip*mr+i)*ldc+j+cols]
							for q, v := range t[i*nr : i*nr+cols] {
								dst[q] += v
							}
						}
					}
				}
			}
		}
	})
}

// packA writes rows [i0, i0+mr) of alpha·op(A), columns [p0, p0+kc), as
// one panel: dst[p·mr+r] = alpha·op(A)[i0+r][p0+p]; rows past m are zeros.
func packA(dst []float32, op Op, a []float32, lda int, alpha float32, m, i0, mr, p0, kc int) {
	dst = dst[:kc*mr]
	rows := min(mr, m-i0)
	if rows < mr {
		clear(dst)
	}
	if op == NoTrans {
		for r := range rows {
			src := a[(i0+r)*lda+p0 : (i0+r)*lda+p0+kc]
			for p, v := range src {
				dst[p*mr+r] = alpha * v
			}
		}
		return
	}
	for p := range kc {
		src := a[(p0+p)*lda+i0 : (p0+p)*lda+i0+rows]
		d := dst[p*mr : p*mr+rows]
		for r, v := range src {
			d[r] = alpha * v
		}
	}
}

// packB writes columns [j0, j0+nr) of op(B), rows [p0, p0+kc), as one
// panel: dst[p·nr+q] = op(B)[p0+p][j0+q]; columns past n are zeros.
func (k *Kernels) packB(dst []float32, op Op, b []float32, ldb int, n, j0, nr, p0, kc int) {
	dst = dst[:kc*nr]
	cols := min(nr, n-j0)
	if cols < nr {
		clear(dst)
	}
	if op == NoTrans {
		for p := range kc {
			copy(dst[p*nr:p*nr+cols], b[(p0+p)*ldb+j0:(p0+p)*ldb+j0+cols])
		}
		return
	}
	// B stored [n×k]: whole groups of eight rows by the transposing kernel,
	// the rest (columns past a multiple of 8, depth past a multiple of 8)
	// element by element.
	q := 0
	if k8 := kc &^ 7; k8 > 0 {
		for ; q+8 <= cols; q += 8 {
			k.impl.packBT8(k8, &b[(j0+q)*ldb+p0], ldb, &dst[q], nr)
		}
		for q8 := 0; q8 < q; q8++ {
			for p := k8; p < kc; p++ {
				dst[p*nr+q8] = b[(j0+q8)*ldb+p0+p]
			}
		}
	}
	for ; q < cols; q++ {
		src := b[(j0+q)*ldb+p0 : (j0+q)*ldb+p0+kc]
		for p, v := range src {
			dst[p*nr+q] = v
		}
	}
}
