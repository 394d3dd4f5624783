package kernel

import (
	"encoding/binary"
	"fmt"
	"math"
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
	// Q6_K is the 6-bit k-quant: 256 weights in 16 sub-blocks of 16, each
	// with an int8 scale, under one f16 d; w = d·scale·(q − 32). Read only.
	Q6_K QType = 14
)

// QBlock is the number of weights in one block of t.
func (t QType) QBlock() int {
	if t == Q4_K || t == Q6_K {
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
	case Q6_K:
		return 210
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
	case Q6_K:
		return "Q6_K"
	}
	return fmt.Sprintf("QType(%d)", uint32(t))
}

// QMatrix is a row-major [Rows × Cols] matrix of quantized rows: the
// layout of a GGUF tensor of that type (rows are whole blocks).
type QMatrix struct {
	Type       QType
	Rows, Cols int
	Data       []byte
	// Next holds the rows after these, of another type: a fused
	// projection whose pieces a file stores in different types (Q4_K_M
	// files keep some attn_v in Q6_K next to Q4_K attn_q and attn_k).
	Next *QMatrix
}

// AllRows is the number of rows of q and the parts after it.
func (q *QMatrix) AllRows() int {
	n := 0
	for p := q; p != nil; p = p.Next {
		n += p.Rows
	}
	return n
}

// RowBytes is the size of one row.
func (q *QMatrix) RowBytes() int { return q.Cols / q.Type.QBlock() * q.Type.QBytes() }

// NewQMatrix checks that data holds rows × cols weights of type t.
func NewQMatrix(t QType, rows, cols int, data []byte) (*QMatrix, error) {
	if t != Q4_0 && t != Q8_0 && t != Q4_K && t != Q6_K {
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

// DequantizeRow writes row r of q (counting the parts after it) into dst
// (len Cols).
func (q *QMatrix) DequantizeRow(r int, dst []float32) {
	for r >= q.Rows && q.Next != nil {
		r, q = r-q.Rows, q.Next
	}
	row := q.Data[r*q.RowBytes() : (r+1)*q.RowBytes()]
	bs, be := q.Type.QBytes(), q.Type.QBlock()
	for b := range q.Cols / be {
		dequantBlock(q.Type, row[b*bs:(b+1)*bs], dst[b*be:(b+1)*be])
	}
}

func dequantBlock(t QType, blk []byte, dst []float32) {
	switch t {
	case Q4_K:
		dequantQ4K(blk, dst)
		return
	case Q6_K:
		dequantQ6K(blk, dst)
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

// dequantQ6K writes one Q6_K block (210 bytes: 128 bytes of low nibbles,
// 64 of high bit pairs, 16 int8 scales, f16 d) as 256 floats, as
// llama.cpp's dequantize_row_q6_K does: each half of 128 weights takes 64
// bytes of ql, 32 of qh and 8 scales.
func dequantQ6K(blk []byte, dst []float32) {
	d := F16ToF32(binary.LittleEndian.Uint16(blk[208:]))
	for h := range 2 {
		ql, qh, sc, y := blk[64*h:64*h+64], blk[128+32*h:128+32*h+32], blk[192+8*h:192+8*h+8], dst[128*h:128*h+128]
		for l := range 32 {
			is := l / 16
			q1 := int(ql[l]&0xf|(qh[l]>>0&3)<<4) - 32
			q2 := int(ql[l+32]&0xf|(qh[l]>>2&3)<<4) - 32
			q3 := int(ql[l]>>4|(qh[l]>>4&3)<<4) - 32
			q4 := int(ql[l+32]>>4|(qh[l]>>6&3)<<4) - 32
			y[l] = d * float32(int8(sc[is])) * float32(q1)
			y[l+32] = d * float32(int8(sc[is+2])) * float32(q2)
			y[l+64] = d * float32(int8(sc[is+4])) * float32(q3)
			y[l+96] = d * float32(int8(sc[is+6])) * float32(q4)
		}
	}
}
