package kernel

import (
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
// worker count.
func TestQGemm(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, qt := range []QType{Q8_0, Q4_0} {
		for _, s := range []struct{ m, n, k int }{{1, 300, 64}, {8, 129, 256}, {13, 256, 128}, {1, 1024, 512}} {
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
				for _, workers := range []int{1, 4} {
					c := make([]float32, s.m*s.n)
					for i := range c {
						c[i] = 1
					}
					New(workers).QGemm(s.m, s.n, s.k, a, q, beta, c)
					for i := range s.m {
						for j := range s.n {
							want := float64(beta)
							for t := range s.k {
								want += float64(a[i*s.k+t]) * float64(deq[j*s.k+t])
							}
							if d := math.Abs(float64(c[i*s.n+j]) - want); d > 1e-3*math.Sqrt(float64(s.k)) {
								t.Fatalf("%v %+v beta %g workers %d: c[%d,%d] = %g, want %g", qt, s, beta, workers, i, j, c[i*s.n+j], want)
							}
						}
					}
				}
			}
		}
	}
}

func BenchmarkQGemv(b *testing.B) {
	n, k := 896*2, 896 // a 0.5B-shaped projection
	w := make([]float32, n*k)
	for i := range w {
		w[i] = float32(i%17) - 8
	}
	a := make([]float32, k)
	c := make([]float32, n)
	for _, qt := range []QType{Q8_0, Q4_0} {
		q, _ := Quantize(qt, n, k, w)
		b.Run(qt.String(), func(b *testing.B) {
			kn := New(1)
			b.SetBytes(int64(len(q.Data)))
			for b.Loop() {
				kn.QGemm(1, n, k, a, q, 0, c)
			}
		})
	}
}
