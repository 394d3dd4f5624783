package kernel

import (
	"encoding/binary"
	"fmt"
	"math"
	"sync"
)

// qrow are the kernels of one quantized type for one row of weights
// (whole blocks): its dot product with one activation row, prepared once
// for all the weight rows, and its dequantization into floats.
type qrow struct {
	prepare func(x []float32) qacts
	dot     func(w []byte, x qacts) float32
	dequant func(w []byte, dst []float32)
	// dot4, where there is one, is dot for four activation rows at once:
	// each weight block is read and widened once for the four
	// (qrows4_amd64.s).
	dot4 func(w []byte, x *[4]qacts, out *[4]float32)
}

// qacts is one activation row as a row kernel reads it: the floats, or
// int16 per block of 32 with a scale per block.
type qacts struct {
	f     []float32
	i16   []int16
	scale []float32
}

// quantizeI16 converts an activation row to int16 per block of 32, each
// block scaled by its largest magnitude: a relative error of 1.5e-5, far
// below the weights' own (Q8_0: 4e-3). The integer kernels then multiply
// without converting every weight to float.
func quantizeI16(x []float32) qacts {
	out := qacts{i16: make([]int16, len(x)), scale: make([]float32, len(x)/32)}
	for b := range out.scale {
		blk := x[b*32 : b*32+32]
		amax := float32(0)
		for _, v := range blk {
			amax = max(amax, float32(math.Abs(float64(v))))
		}
		if amax == 0 {
			continue
		}
		d := amax / 32767
		out.scale[b] = d
		id := 1 / d
		for i, v := range blk {
			out.i16[b*32+i] = int16(max(-32767, min(32767, math.Round(float64(v*id)))))
		}
	}
	return out
}

// f16Table maps every float16 to its float32: the block scales are read
// through it. A constant table, computed on first use.
var f16Table = sync.OnceValue(func() *[1 << 16]float32 {
	var t [1 << 16]float32
	for h := range t {
		t[h] = F16ToF32(uint16(h))
	}
	return &t
})

// qrowFor returns the row kernels of t for kn's instruction set: the
// assembly ones where there are, else each block dequantized in Go and
// dotted with kn's float kernel.
func (kn *Kernels) qrowFor(t QType) qrow {
	if r, ok := archQRow(kn.impl.isa, t); ok {
		r.dot4, _ = archDot4(kn.impl.isa, t)
		return r
	}
	bs, be := t.QBytes(), t.QBlock()
	return qrow{
		prepare: func(x []float32) qacts { return qacts{f: x} },
		dot: func(w []byte, xa qacts) float32 {
			x := xa.f
			var buf [256]float32
			s := float32(0)
			for b := range len(w) / bs {
				if t == Q8_0 {
					s += dotQ8(w[b*bs:(b+1)*bs], x[b*32:b*32+32])
					continue
				}
				dequantBlock(t, w[b*bs:(b+1)*bs], buf[:be])
				s += kn.Dot(buf[:be], x[b*be:(b+1)*be])
			}
			return s
		},
		dequant: func(w []byte, dst []float32) {
			for b := range len(w) / bs {
				dequantBlock(t, w[b*bs:(b+1)*bs], dst[b*be:(b+1)*be])
			}
		},
	}
}

// QGemm computes c[m×n] = a[m×k]·wᵀ + beta·c for a quantized w of shape
// [n×k]: activations times weights as stored in GGUF. The weight streams
// through once and is never dequantized whole: for one row of activations
// (a decode step) each block is multiplied as it is read, in integers
// against the activations converted once to int16 blocks (quantizeI16;
// the portable kernels keep floats); for 2 to 8 rows of Q8_0, the same
// four rows at a time, each block widened once for the four; for more
// rows or other types, a few weight rows at a time are dequantized into
// a buffer that stays in cache while the float kernels multiply every
// activation row with them. The rows of w are split between kn's workers.
func (kn *Kernels) QGemm(m, n, k int, a []float32, w *QMatrix, beta float32, c []float32) {
	if w.AllRows() != n || w.Cols != k {
		panic(fmt.Sprintf("kernel: QGemm: weight is %d×%d, want %d×%d", w.AllRows(), w.Cols, n, k))
	}
	_, _ = a[m*k-1], c[m*n-1]
	off := 0
	for p := w; p != nil; p = p.Next {
		kn.qgemmPart(m, k, a, p, beta, c[off:], n)
		off += p.Rows
	}
}

// qgemmPart computes the columns of c (row stride ldc) of one part of a
// weight, one type.
func (kn *Kernels) qgemmPart(m, k int, a []float32, w *QMatrix, beta float32, c []float32, ldc int) {
	n := w.Rows
	r := kn.qrowFor(w.Type)
	if m > qrows4Max {
		r.dot4 = nil
	}
	var acts []qacts
	if m <= qrowsMax || r.dot4 != nil {
		acts = make([]qacts, m)
		for i := range m {
			acts[i] = r.prepare(a[i*k : (i+1)*k])
		}
	}
	workers := min(kn.workers, max(1, n/16))
	if workers <= 1 || m*n*k < 1<<15 {
		kn.qgemmRows(r, acts, m, k, a, w, beta, c, ldc, 0, n)
		return
	}
	var wg sync.WaitGroup
	chunk := (n + workers - 1) / workers
	for lo := 0; lo < n; lo += chunk {
		hi := min(n, lo+chunk)
		wg.Go(func() { kn.qgemmRows(r, acts, m, k, a, w, beta, c, ldc, lo, hi) })
	}
	wg.Wait()
}

// qgemmRows computes columns [lo, hi) of c (rows lo..hi of w): for one
// activation row (acts, prepared) with the row kernel, for several by dequantizing a
// few weight rows at a time (qchunkFloats) and multiplying them with the
// float kernels, which stream them from cache once for all m rows.
func (kn *Kernels) qgemmRows(r qrow, acts []qacts, m, k int, a []float32, w *QMatrix, beta float32, c []float32, ldc, lo, hi int) {
	rb := w.RowBytes()
	if acts != nil {
		set := func(i, j int, v float32) {
			ci := i*ldc + j
			if beta != 0 {
				v += beta * c[ci]
			}
			c[ci] = v
		}
		var out [4]float32
		for j := lo; j < hi; j++ {
			row := w.Data[j*rb : (j+1)*rb]
			i := 0
			if r.dot4 != nil {
				for ; i+4 <= len(acts); i += 4 {
					r.dot4(row, (*[4]qacts)(acts[i:i+4]), &out)
					for t, v := range out {
						set(i+t, j, v)
					}
				}
			}
			for ; i < len(acts); i++ {
				set(i, j, r.dot(row, acts[i]))
			}
		}
		return
	}
	rows := max(1, qchunkFloats/k)
	buf := make([]float32, rows*k)
	serial := kn.Serial()
	for j := lo; j < hi; j += rows {
		nr := min(rows, hi-j)
		for t := range nr {
			r.dequant(w.Data[(j+t)*rb:(j+t+1)*rb], buf[t*k:(t+1)*k])
		}
		serial.Gemm(NoTrans, Trans, m, nr, k, 1, a, k, buf, k, beta, c[j:], ldc)
	}
}

// qrowsMax is the most activation rows multiplied by the row kernels
// (each weight row read again from cache for every activation row); more
// rows go through dequantization and the float kernels, which for 8 rows
// of a 1.5B-shaped projection take 0.88-0.93 of the CPU time of the Q8_0
// one-row kernel and 0.85-0.88 of the Q4_0 one. qrows4Max is the same
// where the type has a four-row kernel (Q8_0): 8 rows through it take
// 0.69-0.71 of the CPU time of dequantization and the float kernels
// (BenchmarkQGemmRows: cpu-ms per way, the ways interleaved, three runs).
// Variables only so that the benchmark and the tests can compare.
var (
	qrowsMax  = 1
	qrows4Max = 8
)

// qchunkFloats bounds the dequantized weight rows held at once (128 KiB
// of floats: they stay in the L2 cache while the m rows use them).
const qchunkFloats = 32 << 10

// dotQ8 is one Q8_0 block dotted with 32 activations: the scale applied
// once to the block's sum.
func dotQ8(blk []byte, x []float32) float32 {
	q := blk[2:34]
	x = x[:32]
	var s0, s1, s2, s3 float32
	for t := 0; t < 32; t += 4 {
		s0 += float32(int8(q[t])) * x[t]
		s1 += float32(int8(q[t+1])) * x[t+1]
		s2 += float32(int8(q[t+2])) * x[t+2]
		s3 += float32(int8(q[t+3])) * x[t+3]
	}
	return F16ToF32(binary.LittleEndian.Uint16(blk)) * (s0 + s1 + s2 + s3)
}
