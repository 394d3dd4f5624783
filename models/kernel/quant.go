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
	// Q4_K is llama.cpp's 4-bit k-quant: 256 weights in 8 sub-blocks of
	// 32, each with a 6-bit scale and minimum, under f16 d and dmin; w =
	// d·scale·q − dmin·min. Read only (no quantizer here), through the
	// portable row kernels.
	Q4_K QType = 12
)

// QBlock is the number of weights in one block of t.
func (t QType) QBlock() int {
	if t == Q4_K {
		return 256
	}
	return 32
}

// QBytes is the size in bytes of one block of t.
func (t QType) QBytes() int {
	switch t {
	case Q4_0:
		return 18
	case Q4_K:
		return 144
	}
	return 34
}

func (t QType) String() string {
	switch t {
	case Q4_0:
		return "Q4_0"
	case Q8_0:
		return "Q8_0"
	case Q4_K:
		return "Q4_K"
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
	if t != Q4_0 && t != Q8_0 && t != Q4_K {
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
	if t != Q8_0 && t != Q4_0 {
		return nil, fmt.Errorf("kernel: cannot quantize to %v (Q8_0 and Q4_0 can be written)", t)
	}
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
	bs, be := q.Type.QBytes(), q.Type.QBlock()
	for b := range q.Cols / be {
		dequantBlock(q.Type, row[b*bs:(b+1)*bs], dst[b*be:(b+1)*be])
	}
}

func dequantBlock(t QType, blk []byte, dst []float32) {
	if t == Q4_K {
		dequantQ4K(blk, dst)
		return
	}
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
// (whole blocks): its dot product with one activation row, prepared once
// for all the weight rows (prepare: nil keeps the floats), and its
// dequantization into floats.
type qrow struct {
	prepare func(x []float32) qacts
	dot     func(w []byte, x qacts) float32
	dequant func(w []byte, dst []float32)
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
				for i, v := range buf[:be] {
					s += v * x[b*be+i]
				}
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
// the portable kernels keep floats); for several rows, a few weight rows
// at a time are dequantized into a buffer that stays in cache while the
// float kernels multiply every activation row with them. The rows of w
// are split between kn's workers.
func (kn *Kernels) QGemm(m, n, k int, a []float32, w *QMatrix, beta float32, c []float32) {
	if w.Rows != n || w.Cols != k {
		panic(fmt.Sprintf("kernel: QGemm: weight is %d×%d, want %d×%d", w.Rows, w.Cols, n, k))
	}
	_, _ = a[m*k-1], c[m*n-1]
	r := kn.qrowFor(w.Type)
	var acts qacts
	if m == 1 {
		acts = r.prepare(a[:k])
	}
	workers := min(kn.workers, max(1, n/16))
	if workers <= 1 || m*n*k < 1<<15 {
		kn.qgemmRows(r, acts, m, k, a, w, beta, c, n, 0, n)
		return
	}
	var wg sync.WaitGroup
	chunk := (n + workers - 1) / workers
	for lo := 0; lo < n; lo += chunk {
		hi := min(n, lo+chunk)
		wg.Go(func() { kn.qgemmRows(r, acts, m, k, a, w, beta, c, n, lo, hi) })
	}
	wg.Wait()
}

// qgemmRows computes columns [lo, hi) of c (rows lo..hi of w): for one
// activation row (acts, prepared) with the row kernel, for several by dequantizing a
// few weight rows at a time (qchunkFloats) and multiplying them with the
// float kernels, which stream them from cache once for all m rows.
func (kn *Kernels) qgemmRows(r qrow, acts qacts, m, k int, a []float32, w *QMatrix, beta float32, c []float32, ldc, lo, hi int) {
	rb := w.RowBytes()
	if m == 1 {
		for j := lo; j < hi; j++ {
			v := r.dot(w.Data[j*rb:(j+1)*rb], acts)
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

// dequantQ4K writes one Q4_K block (144 bytes: d, dmin, 12 bytes of 6-bit
// scales and minimums, 128 bytes of nibbles) as 256 floats, as llama.cpp's
// dequantize_row_q4_K does.
func dequantQ4K(blk []byte, dst []float32) {
	d := F16ToF32(binary.LittleEndian.Uint16(blk))
	dmin := F16ToF32(binary.LittleEndian.Uint16(blk[2:]))
	sc, q := blk[4:16], blk[16:144]
	scaleMin := func(j int) (float32, float32) {
		if j < 4 {
			return float32(sc[j] & 63), float32(sc[j+4] & 63)
		}
		return float32(sc[j+4]&0xf | (sc[j-4]>>6)<<4), float32(sc[j+4]>>4 | (sc[j]>>6)<<4)
	}
	for j := range 4 { // 64 weights: 32 low nibbles, then 32 high
		s1, m1 := scaleMin(2 * j)
		s2, m2 := scaleMin(2*j + 1)
		d1, d2, o1, o2 := d*s1, d*s2, dmin*m1, dmin*m2
		qs, y := q[32*j:32*j+32], dst[64*j:64*j+64]
		for l, v := range qs {
			y[l] = d1*float32(v&0xf) - o1
			y[32+l] = d2*float32(v>>4) - o2
		}
	}
}

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
