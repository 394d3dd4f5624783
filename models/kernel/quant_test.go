package kernel

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

func TestF16(t *testing.T) {
	for f, h := range map[float32]uint16{0: 0, 1: 0x3c00, -2: 0xc000, 65504: 0x7bff, 0.5: 0x3800, 5.960464477539063e-08: 1, 1e6: 0x7c00} {
		if got := F32ToF16(f); got != h {
			t.Errorf("F32ToF16(%g) = %#x, want %#x", f, got, h)
		}
		if h != 0x7c00 && F16ToF32(h) != f {
			t.Errorf("F16ToF32(%#x) = %g, want %g", h, F16ToF32(h), f)
		}
	}
	for h := range uint16(0x7c00) { // every finite positive half round-trips
		if got := F32ToF16(F16ToF32(h)); got != h {
			t.Fatalf("%#x -> %g -> %#x", h, F16ToF32(h), got)
		}
	}
}

// TestQuantizeError: dequantized weights are within half a step of the
// originals (a step is the block's scale).
func TestQuantizeError(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	rows, cols := 5, 96
	w := make([]float32, rows*cols)
	for i := range w {
		w[i] = float32(r.NormFloat64())
	}
	w[7] = 0 // a zero block is fine too
	for _, qt := range []QType{Q8_0, Q4_0} {
		q, err := Quantize(qt, rows, cols, w)
		if err != nil {
			t.Fatal(err)
		}
		got := make([]float32, cols)
		for r := range rows {
			q.DequantizeRow(r, got)
			for b := range cols / 32 {
				x := w[r*cols+b*32 : r*cols+b*32+32]
				amax := 0.0
				for _, v := range x {
					amax = math.Max(amax, math.Abs(float64(v)))
				}
				step := amax / 127
				if qt == Q4_0 {
					step = amax / 8
				}
				for j, v := range x {
					if d := math.Abs(float64(got[b*32+j] - v)); d > step*0.5+1e-3*amax {
						t.Fatalf("%v row %d col %d: %g dequantized to %g (step %g)", qt, r, b*32+j, v, got[b*32+j], step)
					}
				}
			}
		}
	}
}

// TestQGemm checks QGemm against a float64 product with the dequantized
// weights, for decode (m ≤ 8) and prefill shapes, beta 0 and 1, on every
// instruction set and worker count, with several rows through the row
// kernels (qrowsMax 8: Q8_0's four rows at a time) and through
// dequantization (qrowsMax and qrows4Max 0).
func TestQGemm(t *testing.T) {
	for _, rows := range []int{0, 8} {
		saved, saved4 := qrowsMax, qrows4Max
		qrowsMax, qrows4Max = rows, rows
		testQGemm(t)
		qrowsMax, qrows4Max = saved, saved4
	}
}

func testQGemm(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, qt := range []QType{Q8_0, Q4_0} {
		for _, s := range []struct{ m, n, k int }{{1, 300, 64}, {1, 33, 32}, {1, 70, 96}, {8, 129, 256}, {13, 256, 128}, {1, 1024, 512}} {
			w := make([]float32, s.n*s.k)
			for i := range w {
				w[i] = float32(r.NormFloat64())
			}
			q, _ := Quantize(qt, s.n, s.k, w)
			deq := make([]float32, s.n*s.k)
			for j := range s.n {
				q.DequantizeRow(j, deq[j*s.k:(j+1)*s.k])
			}
			a := make([]float32, s.m*s.k)
			for i := range a {
				a[i] = float32(r.NormFloat64())
			}
			for _, beta := range []float32{0, 1} {
				for _, run := range qgemmRuns(t) {
					c := make([]float32, s.m*s.n)
					for i := range c {
						c[i] = 1
					}
					run.k.QGemm(s.m, s.n, s.k, a, q, beta, c)
					workers := run.name
					for i := range s.m {
						for j := range s.n {
							want := float64(beta)
							for t := range s.k {
								want += float64(a[i*s.k+t]) * float64(deq[j*s.k+t])
							}
							if d := math.Abs(float64(c[i*s.n+j]) - want); d > 1e-3*math.Sqrt(float64(s.k)) {
								t.Fatalf("%v %+v beta %g %s: c[%d,%d] = %g, want %g", qt, s, beta, workers, i, j, c[i*s.n+j], want)
							}
						}
					}
				}
			}
		}
	}
}

// qgemmRuns are kernels of every instruction set this CPU has, on 1 and
// 4 workers.
func qgemmRuns(t *testing.T) []struct {
	name string
	k    *Kernels
} {
	var out []struct {
		name string
		k    *Kernels
	}
	for _, isa := range Available() {
		for _, w := range []int{1, 4} {
			k, err := NewFor(isa, w)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, struct {
				name string
				k    *Kernels
			}{fmt.Sprintf("%s/workers=%d", isa, w), k})
		}
	}
	return out
}

func BenchmarkQGemv(b *testing.B) {
	n, k := 8960, 1536 // a 1.5B-shaped MLP projection: 12-14 MB quantized, out of cache
	w := make([]float32, n*k)
	for i := range w {
		w[i] = float32(i%17) - 8
	}
	a := make([]float32, k)
	c := make([]float32, n)
	for _, qt := range []QType{Q8_0, Q4_0} {
		q, _ := Quantize(qt, n, k, w)
		for _, isa := range Available() {
			b.Run(fmt.Sprintf("%v/%s", qt, isa), func(b *testing.B) {
				kn, _ := NewFor(isa, 1)
				b.SetBytes(int64(len(q.Data)))
				for b.Loop() {
					kn.QGemm(1, n, k, a, q, 0, c)
				}
			})
		}
	}
}

// q4KBlock encodes a Q4_K block from its parts as llama.cpp lays it out:
// d, dmin, eight 6-bit scales and minimums packed in 12 bytes, and 256
// nibbles (sub-block pairs share bytes: low nibbles first, high second).
func q4KBlock(d, dmin float32, scales, mins [8]uint8, q [256]uint8) []byte {
	b := make([]byte, 144)
	binary.LittleEndian.PutUint16(b, F32ToF16(d))
	binary.LittleEndian.PutUint16(b[2:], F32ToF16(dmin))
	sc := b[4:16]
	for j := range 8 {
		if j < 4 {
			sc[j] |= scales[j] & 63
			sc[j+4] |= mins[j] & 63
			continue
		}
		sc[j+4] = scales[j]&0xf | (mins[j]&0xf)<<4
		sc[j-4] |= (scales[j] >> 4) << 6
		sc[j] |= (mins[j] >> 4) << 6
	}
	for j := range 4 {
		for l := range 32 {
			b[16+32*j+l] = q[64*j+l] | q[64*j+32+l]<<4
		}
	}
	return b
}

func TestQ4K(t *testing.T) {
	var scales, mins [8]uint8
	var q [256]uint8
	for j := range 8 {
		scales[j], mins[j] = uint8(10+7*j), uint8(3+8*j)
	}
	for i := range q {
		q[i] = uint8((i*7 + i/32) % 16)
	}
	row := append(q4KBlock(1, 0.5, scales, mins, q), q4KBlock(-2, 0.25, scales, mins, q)...)
	m, err := NewQMatrix(Q4_K, 1, 512, row)
	if err != nil {
		t.Fatal(err)
	}
	got := make([]float32, 512)
	m.DequantizeRow(0, got)
	for i, v := range got {
		d, dmin := float32(1), float32(0.5)
		if i >= 256 {
			d, dmin = -2, 0.25
		}
		j := (i % 256) / 32
		if want := d*float32(scales[j])*float32(q[i%256]) - dmin*float32(mins[j]); v != want {
			t.Fatalf("weight %d: %g, want %g", i, v, want)
		}
	}
	// QGemm on Q4_K (the portable row kernels) agrees with the dequantized row.
	a := make([]float32, 512)
	for i := range a {
		a[i] = float32(i%5) - 2
	}
	want := 0.0
	for i := range a {
		want += float64(a[i]) * float64(got[i])
	}
	c := []float32{0}
	New(1).QGemm(1, 1, 512, a, m, 0, c)
	if math.Abs(float64(c[0])-want) > 1e-2 {
		t.Fatalf("QGemm %g, want %g", c[0], want)
	}
	if _, err := Quantize(Q4_K, 1, 256, got[:256]); err == nil {
		t.Fatal("quantized to Q4_K")
	}
}

// q6KBlock encodes a Q6_K block from 16 scales and 256 6-bit values, as
// llama.cpp lays it out (the inverse of its dequantize_row_q6_K).
func q6KBlock(d float32, scales [16]int8, q [256]uint8) []byte {
	b := make([]byte, 210)
	for h := range 2 {
		for l := range 32 {
			v1, v2, v3, v4 := q[128*h+l], q[128*h+l+32], q[128*h+l+64], q[128*h+l+96]
			b[64*h+l] = v1&0xf | (v3&0xf)<<4
			b[64*h+l+32] = v2&0xf | (v4&0xf)<<4
			b[128+32*h+l] = v1>>4 | (v2>>4)<<2 | (v3>>4)<<4 | (v4>>4)<<6
		}
	}
	for i, s := range scales {
		b[192+i] = byte(s)
	}
	binary.LittleEndian.PutUint16(b[208:], F32ToF16(d))
	return b
}

func TestQ6K(t *testing.T) {
	var scales [16]int8
	var q [256]uint8
	for i := range scales {
		scales[i] = int8(i*9 - 60)
	}
	for i := range q {
		q[i] = uint8((i*11 + i/64) % 64)
	}
	m, err := NewQMatrix(Q6_K, 1, 256, q6KBlock(0.5, scales, q))
	if err != nil {
		t.Fatal(err)
	}
	got := make([]float32, 256)
	m.DequantizeRow(0, got)
	for p, v := range got {
		if want := 0.5 * float32(scales[p/16]) * float32(int(q[p])-32); v != want {
			t.Fatalf("weight %d: %g, want %g", p, v, want)
		}
	}
}

// TestQGemmParts: a weight stored in parts of different types (Q8_0 rows,
// then Q4_0, then Q6_K) multiplies as one matrix.
func TestQGemmParts(t *testing.T) {
	const k = 256
	w := make([]float32, 7*k)
	for i := range w {
		w[i] = float32(i%13)/13 - 0.5
	}
	a8, _ := Quantize(Q8_0, 3, k, w[:3*k])
	a4, _ := Quantize(Q4_0, 2, k, w[3*k:5*k])
	var scales [16]int8
	var q [256]uint8
	for i := range scales {
		scales[i] = int8(i + 1)
	}
	for i := range q {
		q[i] = uint8(i % 64)
	}
	six := append(q6KBlock(0.01, scales, q), q6KBlock(-0.02, scales, q)...)
	a6, _ := NewQMatrix(Q6_K, 2, k, six)
	a8.Next, a4.Next = a4, a6
	if a8.AllRows() != 7 {
		t.Fatalf("AllRows %d", a8.AllRows())
	}
	deq := make([]float32, 7*k)
	for r := range 7 {
		a8.DequantizeRow(r, deq[r*k:(r+1)*k])
	}
	for _, m := range []int{1, 3} {
		a := make([]float32, m*k)
		for i := range a {
			a[i] = float32(i%7) - 3
		}
		for _, run := range qgemmRuns(t) {
			c := make([]float32, m*7)
			run.k.QGemm(m, 7, k, a, a8, 0, c)
			for i := range m {
				for j := range 7 {
					want := 0.0
					for x := range k {
						want += float64(a[i*k+x]) * float64(deq[j*k+x])
					}
					if d := math.Abs(float64(c[i*7+j]) - want); d > 1e-3*math.Sqrt(k)*(1+math.Abs(want)/10) {
						t.Fatalf("%s m=%d: c[%d,%d] = %g, want %g", run.name, m, i, j, c[i*7+j], want)
					}
				}
			}
		}
	}
}
