package kernel

import "sync/atomic"

const (
	// gemvChunkBytes is how much of B one unit of the one-row decode path
	// reads, rows in order: long enough for the prefetchers, short enough to
	// share a product out among the workers.
	gemvChunkBytes = 256 << 10
	// gemvBlockBytes is about how much of B one block of the 2-8-row path
	// holds: the kernel prefetches the next block into L2 while it runs
	// this one, and L2 holds both.
	gemvBlockBytes = 128 << 10
	// gemvMaxGroups bounds a block's groups of three rows of B (its rows
	// when the rows of B are short).
	gemvMaxGroups = 64
	// gemvKC is how many elements of k one pass over a block covers: eight
	// rows of A at this length (16 KiB) stay in L1 while the block's rows
	// stream by.
	gemvKC = 512
)

// gemvRows computes C = alpha·A·Bᵀ + beta·C for A of m <= gemvMaxRows rows
// and B stored [n×k] (a decode step's activations times HF-layout weights).
// B is read once for all the rows of A. One row of A streams the rows of B
// in order (gemvOne); more rows go through gemvBlocks.
func (k *Kernels) gemvRows(m, n, kk int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	workers := k.workers
	if m*n*kk < parallelMinMACs {
		workers = 1
	}
	if m == 1 {
		k.gemvOne(workers, n, kk, alpha, a, b, ldb, beta, c)
		return
	}
	k.gemvBlocks(workers, m, n, kk, alpha, a, lda, b, ldb, beta, c, ldc)
}

// gemvOne is gemvRows for one row of A: a dot product per row of B, in
// chunks of rows shared out among the workers.
func (k *Kernels) gemvOne(workers, n, kk int, alpha float32, a, b []float32, ldb int, beta float32, c []float32) {
	chunk := max(1, gemvChunkBytes/(4*kk))
	k8 := kk &^ 7
	parallel(workers, (n+chunk-1)/chunk, func(_, u int) {
		for j := u * chunk; j < min(n, (u+1)*chunk); j++ {
			brow := b[j*ldb : j*ldb+kk]
			storeDot(0, j, k.dotPrefix(k8, a, brow), k8, a, brow, kk, alpha, beta, c, 0)
		}
	})
}

// gemvBlocks is gemvRows for 2-8 rows of A. A is packed once, eight rows
// (zero rows below m) in steps of 16 elements, so that a step of all eight
// rows is one run of 512 bytes. B is cut into blocks of rows (about
// gemvBlockBytes each); each block runs in passes of gemvKC elements of k,
// so that the part of A a pass reads stays in L1, with the kernel taking
// three rows of B at once against the eight rows of A. While a worker runs
// a block, the kernel prefetches the worker's next block into L2 in address
// order (a worker claims its next block before it starts the current one,
// so that it knows what to prefetch), and the next three rows of B one
// group ahead.
//
// Without the packing and the passes (A read from L2 at every step) and the
// in-order prefetch of the next block (three rows at a time read straight
// from memory), eight rows read the weights at about half the memory's
// read speed per CPU-second on the development machine
// (docs/results-structure.md).
func (k *Kernels) gemvBlocks(workers, m, n, kk int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	k16 := kk &^ 15
	buf := k.buffer(8 * k16)
	defer k.release(buf)
	pack := *buf
	for p := 0; p < k16; p += 16 {
		for i := range 8 {
			dst := pack[p*8+i*16 : p*8+i*16+16]
			if i < m {
				copy(dst, a[i*lda+p:i*lda+p+16])
			} else {
				clear(dst)
			}
		}
	}
	rows := min(3*gemvMaxGroups, max(3, gemvBlockBytes/(4*ldb)/3*3))
	blocks := (n + rows - 1) / rows
	var claimed atomic.Int64
	claim := func() int { return int(claimed.Add(1) - 1) }
	parallel(workers, min(workers, blocks), func(_, _ int) {
		// The kernel's sums land in out, on the heap: with out an array
		// on the goroutine's stack, 8 rows read the weights at 9.5
		// instead of 12.5 GB/CPU-s in one side-by-side run.
		buf := k.buffer(24 * (gemvMaxGroups + 3))
		defer k.release(buf)
		for cur := claim(); cur < blocks; {
			next := claim()
			k.gemvBlock(m, n, kk, k16, rows, cur, next, blocks, alpha, pack, a, lda, b, ldb, beta, c, ldc, *buf)
			cur = next
		}
	})
}

// gemvBlock computes columns [cur·rows, (cur+1)·rows) of C for gemvBlocks,
// prefetching block next (when there is one) as it goes; out holds the
// kernel's sums, 24 per group.
func (k *Kernels) gemvBlock(m, n, kk, k16, rows, cur, next, blocks int, alpha float32, pack, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int, out []float32) {
	j0, j1 := cur*rows, min(n, (cur+1)*rows)
	groups, tail := (j1-j0)/3, (j1-j0)%3
	// The tail rows (j1-tail..j1-1) run as one more group, the last three
	// rows of B (recomputing up to two of the block's other rows), in slot
	// groups of out; with fewer than three rows in all, each row runs as a
	// group of itself three times (ldb 0), in its own slot.
	if k16 == 0 {
		clear(out) // no pass runs: the sums start at 0
	}
	// pf is the next element of B to prefetch: the kernel prefetches 3·kc
	// elements per group it runs, in order from there, through block next.
	pf, pfEnd := j0*ldb, j0*ldb
	if next < blocks {
		pf, pfEnd = next*rows*ldb, len(b)
	}
	prefetch := func(count int) *float32 {
		if pf >= pfEnd {
			return &b[j0*ldb] // nothing left to prefetch: touch this block
		}
		p := &b[pf]
		pf += count
		return p
	}
	for p0 := 0; p0 < k16; p0 += gemvKC {
		kc := min(gemvKC, k16-p0)
		acc := min(p0, 1)
		ap := &pack[p0*8]
		if groups > 0 {
			k.impl.decode8x3(kc, ap, &b[j0*ldb+p0], ldb, groups, prefetch(3*kc*groups), &out[0], acc)
		}
		switch {
		case tail > 0 && n >= 3:
			k.impl.decode8x3(kc, ap, &b[(j1-3)*ldb+p0], ldb, 1, prefetch(3*kc), &out[groups*24], acc)
		case tail > 0:
			for r := range tail {
				k.impl.decode8x3(kc, ap, &b[(j0+r)*ldb+p0], 0, 1, prefetch(3*kc), &out[r*24], acc)
			}
		}
	}
	for j := j0; j < j1; j++ {
		slot, q := (j-j0)/3, (j-j0)%3
		switch {
		case j < j0+3*groups:
		case n >= 3:
			slot, q = groups, 3-(j1-j)
		default:
			slot, q = j-j0, 0
		}
		sums := out[slot*24+q*8 : slot*24+q*8+m]
		if k16 < kk {
			brow := b[j*ldb : j*ldb+kk]
			for i, s := range sums {
				storeDot(i, j, s, k16, a[i*lda:], brow, kk, alpha, beta, c, ldc)
			}
			continue
		}
		// k a multiple of 16 (the models' products): the sums are
		// whole, stored here rather than through a call of storeDot per
		// element of C, which cost eight rows 3-9% of their speed on the
		// development machine (docs/results-structure.md).
		for i, s := range sums {
			if beta == 0 {
				c[i*ldc+j] = alpha * s
			} else {
				c[i*ldc+j] = alpha*s + beta*c[i*ldc+j]
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
