package kernel

import "unsafe"

// impl is one instruction set's kernels. Their pointers address operands
// the driver has bounds-checked; lengths that must be multiples of 8 leave
// the rest to the driver.
type impl struct {
	isa    ISA
	mr, nr int // micro-kernel tile
	// micro adds A·B to the mr×nr tile of C at c (row stride ldc), for A
	// packed kc×mr (a[p·mr+i]) and B packed kc×nr (b[p·nr+j]).
	micro func(kc int, a, b, c *float32, ldc int)
	// packBT8 writes dst[p·nr+q] = b[q·ldb+p] for q < 8, p < kc (kc a
	// multiple of 8): eight rows of a B stored [n×k] into a packed panel.
	packBT8 func(kc int, b *float32, ldb int, dst *float32, nr int)
	// decode8x3 writes (acc != 0: adds) out[g·24+j·8+i] = Σ_{p<kc}
	// a[p/16·128+i·16+p%16]·b[(3g+j)·ldb+p] for i < 8, j < 3, g < groups
	// (kc a multiple of 16): eight rows of A packed in steps of 16 against
	// groups of three rows of B, prefetching groups·12·kc bytes from next
	// (the following block of B) as it goes.
	decode8x3 func(kc int, a, b *float32, ldb, groups int, next, out *float32, acc int)
	// direct adds A·B to the dmr×dnr tile of C for A and B as stored (row
	// strides lda, ldb): gemmDirect's kernel. directRow adds one row of A
	// times B to rowNR elements of C.
	direct    func(k int, a *float32, lda int, b *float32, ldb int, c *float32, ldc int)
	directRow func(k int, a, b *float32, ldb int, c *float32)
	dmr, dnr  int
	rowNR     int
	dot       func(n int, x, y *float32) float32        // x·y (n a multiple of 8)
	axpy      func(n int, alpha float32, x, y *float32) // y += alpha·x (n a multiple of 8)
}

// Available lists the instruction sets this CPU runs, best first; Generic
// is always last.
func Available() []ISA { return append(archAvailable(), Generic) }

func implFor(isa ISA) *impl {
	if isa == Generic {
		return &impl{isa: Generic, mr: 4, nr: 8, micro: microGo, packBT8: packBT8Go, decode8x3: decode8x3Go,
			direct: directGo, directRow: directRowGo, dmr: 4, dnr: 8, rowNR: 8, dot: dotGo, axpy: axpyGo}
	}
	return archImpl(isa)
}

// The portable kernels: plain Go, written so that the compiler keeps the
// accumulators in registers.

func microGo(kc int, ap, bp, cp *float32, ldc int) {
	a := unsafe.Slice(ap, kc*4)
	b := unsafe.Slice(bp, kc*8)
	var acc [4][8]float32
	for p := range kc {
		bv := (*[8]float32)(b[p*8 : p*8+8])
		av := (*[4]float32)(a[p*4 : p*4+4])
		for i, x := range av {
			r := &acc[i]
			r[0] += x * bv[0]
			r[1] += x * bv[1]
			r[2] += x * bv[2]
			r[3] += x * bv[3]
			r[4] += x * bv[4]
			r[5] += x * bv[5]
			r[6] += x * bv[6]
			r[7] += x * bv[7]
		}
	}
	c := unsafe.Slice(cp, 3*ldc+8)
	for i := range acc {
		row := c[i*ldc : i*ldc+8]
		for j, v := range acc[i] {
			row[j] += v
		}
	}
}

func packBT8Go(kc int, bp *float32, ldb int, dp *float32, nr int) {
	b := unsafe.Slice(bp, 7*ldb+kc)
	d := unsafe.Slice(dp, (kc-1)*nr+8)
	for q := range 8 {
		for p, v := range b[q*ldb : q*ldb+kc] {
			d[p*nr+q] = v
		}
	}
}

func directGo(k int, ap *float32, lda int, bp *float32, ldb int, cp *float32, ldc int) {
	a := unsafe.Slice(ap, 3*lda+k)
	b := unsafe.Slice(bp, (k-1)*ldb+8)
	c := unsafe.Slice(cp, 3*ldc+8)
	for i := range 4 {
		directRowGo(k, &a[i*lda], &b[0], ldb, &c[i*ldc])
	}
}

func directRowGo(k int, ap, bp *float32, ldb int, cp *float32) {
	a := unsafe.Slice(ap, k)
	b := unsafe.Slice(bp, (k-1)*ldb+8)
	var acc [8]float32
	for p, x := range a {
		bv := (*[8]float32)(b[p*ldb : p*ldb+8])
		for j, v := range bv {
			acc[j] += x * v
		}
	}
	c := (*[8]float32)(unsafe.Slice(cp, 8))
	for j, v := range acc {
		c[j] += v
	}
}

func decode8x3Go(kc int, ap, bp *float32, ldb, groups int, _, outp *float32, acc int) {
	a := unsafe.Slice(ap, 8*kc)
	b := unsafe.Slice(bp, (3*groups-1)*ldb+kc)
	out := unsafe.Slice(outp, 24*groups)
	for g := range groups {
		for j := range 3 {
			row := b[(3*g+j)*ldb : (3*g+j)*ldb+kc]
			for i := range 8 {
				var s0, s1, s2, s3 float32
				for p := 0; p < kc; p += 16 {
					ai, bi := a[p*8+i*16:p*8+i*16+16], row[p:p+16]
					for q := 0; q < 16; q += 4 {
						s0 += ai[q] * bi[q]
						s1 += ai[q+1] * bi[q+1]
						s2 += ai[q+2] * bi[q+2]
						s3 += ai[q+3] * bi[q+3]
					}
				}
				o := &out[g*24+j*8+i]
				if acc != 0 {
					*o += (s0 + s1) + (s2 + s3)
				} else {
					*o = (s0 + s1) + (s2 + s3)
				}
			}
		}
	}
}

func dotGo(n int, xp, yp *float32) float32 {
	return dotSlices(unsafe.Slice(xp, n), unsafe.Slice(yp, n))
}

func axpyGo(n int, alpha float32, xp, yp *float32) {
	x, y := unsafe.Slice(xp, n), unsafe.Slice(yp, n)
	for i, v := range x {
		y[i] += alpha * v
	}
}

// dotSlices is x·y with four partial sums (len(y) >= len(x)).
func dotSlices(x, y []float32) float32 {
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
