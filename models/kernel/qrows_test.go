package kernel

import (
	"math/rand/v2"
	"testing"
)

// TestDot4MatchesDot: the four-row kernel gives, bit for bit, what the
// one-row kernel gives for each of the four rows (same products, same
// order of sums), and a Q8_0 product of 2 to 8 activation rows gives what
// each row gives alone (a decode batch does not change a sequence's
// logits).
func TestDot4MatchesDot(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, isa := range Available() {
		kn, err := NewFor(isa, 1)
		if err != nil {
			t.Fatal(err)
		}
		row := kn.qrowFor(Q8_0)
		if row.dot4 == nil {
			t.Logf("%s: no four-row kernel", isa)
			continue
		}
		for _, k := range []int{32, 96, 1536} {
			w := make([]float32, 3*k)
			for i := range w {
				w[i] = float32(r.NormFloat64())
			}
			q, _ := Quantize(Q8_0, 3, k, w)
			var acts [4]qacts
			for i := range acts {
				x := make([]float32, k)
				for j := range x {
					x[j] = float32(r.NormFloat64()) * float32(i+1)
				}
				acts[i] = row.prepare(x)
			}
			rb := q.RowBytes()
			for j := range 3 {
				var out [4]float32
				row.dot4(q.Data[j*rb:(j+1)*rb], &acts, &out)
				for i := range acts {
					if want := row.dot(q.Data[j*rb:(j+1)*rb], acts[i]); out[i] != want {
						t.Fatalf("%s k=%d row %d act %d: dot4 %g, dot %g", isa, k, j, i, out[i], want)
					}
				}
			}
		}
		for m := 2; m <= 8; m++ {
			n, k := 37, 128
			w := make([]float32, n*k)
			for i := range w {
				w[i] = float32(r.NormFloat64())
			}
			q, _ := Quantize(Q8_0, n, k, w)
			a := make([]float32, m*k)
			for i := range a {
				a[i] = float32(r.NormFloat64())
			}
			got := make([]float32, m*n)
			kn.QGemm(m, n, k, a, q, 0, got)
			for i := range m {
				one := make([]float32, n)
				kn.QGemm(1, n, k, a[i*k:(i+1)*k], q, 0, one)
				for j := range n {
					if got[i*n+j] != one[j] {
						t.Fatalf("%s m=%d: c[%d,%d] = %g, one row at a time %g", isa, m, i, j, got[i*n+j], one[j])
					}
				}
			}
		}
	}
}

// BenchmarkQGemmRows compares the ways of multiplying 8 activation rows
// with a quantized weight of a 1.5B-shaped projection (8960×1536): the
// one-row kernel once per row, weight rows dequantized into cache for the
// float kernels, and (Q8_0) the four-row kernel twice. Each iteration runs
// every way once, in turn, so that a shared machine's changing load falls
// on all of them alike; cpu-ms/op is reported per way.
func BenchmarkQGemmRows(b *testing.B) {
	n, k, m := 8960, 1536, 8
	w := make([]float32, n*k)
	for i := range w {
		w[i] = float32(i%17) - 8
	}
	a := ramp(m*k, 13)
	c := make([]float32, m*n)
	kn := New(1)
	for _, qt := range []QType{Q8_0, Q4_0} {
		b.Run(qt.String(), func(b *testing.B) {
			q, _ := Quantize(qt, n, k, w)
			ways := []struct {
				name        string
				rows, rows4 int
				cpu         float64
			}{{"rowkernel", 8, 0, 0}, {"dequant", 0, 0, 0}, {"rowkernel4", 0, 8, 0}}
			if kn.qrowFor(qt).dot4 == nil {
				ways = ways[:2]
			}
			saved, saved4 := qrowsMax, qrows4Max
			defer func() { qrowsMax, qrows4Max = saved, saved4 }()
			for b.Loop() {
				for i := range ways {
					qrowsMax, qrows4Max = ways[i].rows, ways[i].rows4
					c0 := cpuSeconds()
					kn.QGemm(m, n, k, a, q, 0, c)
					ways[i].cpu += cpuSeconds() - c0
				}
			}
			for _, way := range ways {
				b.ReportMetric(way.cpu*1e3/float64(b.N), way.name+"-cpu-ms/op")
			}
		})
	}
}
