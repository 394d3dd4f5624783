package kernel

import (
	"encoding/binary"
	"fmt"
	"math"
	"sync"
)

// QType is a block-quantized weight format, numbered as in GGUF (ggml_type).
type QType uint32

// The quantized formats: each row of a matrix is blocks of QBlock
// elements stored in QBytes bytes, a float16 scale first.
const (
	Q4_0 QType = 2 // 32 weights: f16 scale d, 16 bytes of 4-bit q; w = d·(q−8)
	Q8_0 QType = 8 // 32 weights: f16 scale d, 32 int8 q; w = d·q
)

// QBlock is the number of weights in one block of t.
func (t QType) QBlock() int { return 32 }

// QBytes is the size in bytes of one block of t.
func (t QType) QBytes() int {
	if t == Q4_0 {
		return 18
	}
	return 34
}

func (t QType) String() string {
	switch t {
	case Q4_0:
		return "Q4_0"
	case Q8_0:
		return "Q8_0"
	}
	return fmt.Sprintf("QType(%d)", uint32(t))
}

// QMatrix is a row-major [Rows × Cols] matrix of quantized rows: the
// layout of a GGUF tensor of that type (rows are whole blocks).
type QMatrix struct {
	Type       QType
	Rows, Cols int
	Data       []byte
}

// RowBytes is the size of one row.
func (q *QMatrix) RowBytes() int { return q.Cols / q.Type.QBlock() * q.Type.QBytes() }

// NewQMatrix checks that data holds rows × cols weights of type t.
func NewQMatrix(t QType, rows, cols int, data []byte) (*QMatrix, error) {
	if t != Q4_0 && t != Q8_0 {
		return nil, fmt.Errorf("kernel: unsupported quantized type %v", t)
	}
	if cols%t.QBlock() != 0 {
		return nil, fmt.Errorf("kernel: %v rows of %d weights are not whole blocks of %d", t, cols, t.QBlock())
	}
	q := &QMatrix{Type: t, Rows: rows, Cols: cols, Data: data}
	if len(data) != rows*q.RowBytes() {
		return nil, fmt.Errorf("kernel: %v matrix %d×%d needs %d bytes, has %d", t, rows, cols, rows*q.RowBytes(), len(data))
	}
	return q, nil
}

// Quantize converts a row-major [rows × cols] float32 matrix to t, as
// llama.cpp's reference quantizers do (round to nearest; Q4_0 scales by the
// weight of largest magnitude, kept exact at −8).
func Quantize(t QType, rows, cols int, w []float32) (*QMatrix, error) {
	if cols%t.QBlock() != 0 {
		return nil, fmt.Errorf("kernel: cannot quantize rows of %d weights to %v (blocks of %d)", cols, t, t.QBlock())
	}
	q := &QMatrix{Type: t, Rows: rows, Cols: cols}
	q.Data = make([]byte, rows*q.RowBytes())
	nb := cols / 32
	for r := range rows {
		for b := range nb {
			x := w[r*cols+b*32 : r*cols+b*32+32]
			out := q.Data[(r*nb+b)*t.QBytes():]
			switch t {
			case Q8_0:
				amax := float32(0)
				for _, v := range x {
					amax = max(amax, float32(math.Abs(float64(v))))
				}
				d := amax / 127
				binary.LittleEndian.PutUint16(out, F32ToF16(d))
				id := float32(0)
				if d != 0 {
					id = 1 / d
				}
				for j, v := range x {
					out[2+j] = byte(int8(math.Round(float64(v * id))))
				}
			case Q4_0:
				amax, mx := float32(0), float32(0)
				for _, v := range x {
					if a := float32(math.Abs(float64(v))); a > amax {
						amax, mx = a, v
					}
				}
				d := mx / -8
				binary.LittleEndian.PutUint16(out, F32ToF16(d))
				id := float32(0)
				if d != 0 {
					id = 1 / d
				}
				for j := range 16 {
					lo := min(15, int(x[j]*id+8.5))
					hi := min(15, int(x[j+16]*id+8.5))
					out[2+j] = byte(max(lo, 0)) | byte(max(hi, 0))<<4
				}
			}
		}
	}
	return q, nil
}

// DequantizeRow writes row r of q into dst (len Cols).
func (q *QMatrix) DequantizeRow(r int, dst []float32) {
	row := q.Data[r*q.RowBytes() : (r+1)*q.RowBytes()]
	bs := q.Type.QBytes()
	for b := range q.Cols / 32 {
		dequantBlock(q.Type, row[b*bs:(b+1)*bs], dst[b*32:b*32+32])
	}
}

func dequantBlock(t QType, blk []byte, dst []float32) {
	d := F16ToF32(binary.LittleEndian.Uint16(blk))
	if t == Q8_0 {
		for j := range 32 {
			dst[j] = d * float32(int8(blk[2+j]))
		}
		return
	}
	for j := range 16 {
		v := blk[2+j]
		dst[j] = d * float32(int(v&15)-8)
		dst[j+16] = d * float32(int(v>>4)-8)
	}
}

// qrow are the kernels of one quantized type for one row of weights
// (whole blocks): its dot product with 32 floats per block, and its
// dequantization into them.
type qrow struct {
	dot     func(w []byte, x []float32) float32
	dequant func(w []byte, dst []float32)
}

// f16Table maps every float16 to its float32: the block scales are read
// through it.
var f16Table = sync.OnceValue(func() *[1 << 16]float32 {
	var t [1 << 16]float32
	for h := range t {
		t[h] = F16ToF32(uint16(h))
	}
	return &t
})

// qrowFor returns the row kernels of t for kn's instruction set.
func (kn *Kernels) qrowFor(t QType) qrow {
	if r, ok := archQRow(kn.impl.isa, t); ok {
		return r
	}
	bs := t.QBytes()
	return qrow{
		dot: func(w []byte, x []float32) float32 {
			var buf [32]float32
			s := float32(0)
			for b := range len(w) / bs {
				if t == Q8_0 {
					s += dotQ8(w[b*bs:(b+1)*bs], x[b*32:b*32+32])
					continue
				}
				dequantBlock(t, w[b*bs:(b+1)*bs], buf[:])
				for i, v := range buf {
					s += v * x[b*32+i]
				}
			}
			return s
		},
		dequant: func(w []byte, dst []float32) {
			for b := range len(w) / bs {
				dequantBlock(t, w[b*bs:(b+1)*bs], dst[b*32:b*32+32])
			}
		},
	}
}

// QGemm computes c[m×n] = a[m×k]·wᵀ + beta·c for a quantized w of shape
// [n×k]: activations times weights as stored in GGUF. The weight streams
// through once, a row at a time, and is never dequantized whole: for one
// row of activations (a decode step) each block is multiplied as it is
// read (dequantized in registers); for several, the weight row is
// dequantized into a buffer of k floats that stays in cache while every
// activation row is dotted with it. The rows of w are split between kn's
// workers.
func (kn *Kernels) QGemm(m, n, k int, a []float32, w *QMatrix, beta float32, c []float32) {
	if w.Rows != n || w.Cols != k {
		panic(fmt.Sprintf("kernel: QGemm: weight is %d×%d, want %d×%d", w.Rows, w.Cols, n, k))
	}
	_, _ = a[m*k-1], c[m*n-1]
	r := kn.qrowFor(w.Type)
	workers := min(kn.workers, max(1, n/16))
	if workers <= 1 || m*n*k < 1<<15 {
		kn.qgemmRows(r, m, k, a, w, beta, c, n, 0, n)
		return
	}
	var wg sync.WaitGroup
	chunk := (n + workers - 1) / workers
	for lo := 0; lo < n; lo += chunk {
		hi := min(n, lo+chunk)
		wg.Go(func() { kn.qgemmRows(r, m, k, a, w, beta, c, n, lo, hi) })
	}
	wg.Wait()
}

// qgemmRows computes columns [lo, hi) of c (rows lo..hi of w): for one
// activation row with the fused row kernel, for several by dequantizing a
// few weight rows at a time (qchunkFloats) and multiplying them with the
// float kernels, which stream them from cache once for all m rows.
func (kn *Kernels) qgemmRows(r qrow, m, k int, a []float32, w *QMatrix, beta float32, c []float32, ldc, lo, hi int) {
	rb := w.RowBytes()
	if m == 1 {
		for j := lo; j < hi; j++ {
			v := r.dot(w.Data[j*rb:(j+1)*rb], a[:k])
			if beta != 0 {
				v += beta * c[j]
			}
			c[j] = v
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
