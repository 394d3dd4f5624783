package kernel

import (
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"
)

// BenchmarkGemm measures C = A·Bᵀ against a 2048×768 weight (B stored
// [n×k], as models/cpu multiplies activations by HF-layout weights) for
// decode-sized (M = 1, 8, 32) and prefill-sized (M = 256) products, per
// instruction set, next to gonum's pure-Go BLAS (what the CPU executor used
// before this package) in the same run; and the tiny model's training shape
// (C += A·B, 2048×192 times 192×512, both row-major: the unpacked path).
func BenchmarkGemm(b *testing.B) {
	const n, k = 2048, 768
	type impl struct {
		name string
		gemm func(m int, a, w, c []float32)
	}
	var impls []impl
	for _, isa := range Available() {
		kern, err := NewFor(isa, 0)
		if err != nil {
			b.Fatal(err)
		}
		impls = append(impls, impl{string(isa), func(m int, a, w, c []float32) {
			kern.Gemm(NoTrans, Trans, m, n, k, 1, a, k, w, k, 0, c, n)
		}})
	}
	impls = append(impls, impl{"gonum", func(m int, a, w, c []float32) {
		gonum.Implementation{}.Sgemm(blas.NoTrans, blas.Trans, m, n, k, 1, a, k, w, k, 0, c, n)
	}})
	for _, m := range []int{1, 8, 32, 256} {
		a, w, c := ramp(m*k, 13), ramp(n*k, 7), make([]float32, m*n)
		for _, im := range impls {
			b.Run(fmt.Sprintf("M=%d/%s", m, im.name), func(b *testing.B) {
				reportFLOPs(b, 2*float64(m*n*k), func() { im.gemm(m, a, w, c) })
			})
		}
	}
	const tn, tk, tm = 2048, 192, 512
	x, w, y := ramp(tn*tk, 7), ramp(tk*tm, 5), make([]float32, tn*tm)
	for _, isa := range Available() {
		kern, err := NewFor(isa, 0)
		if err != nil {
			b.Fatal(err)
		}
		b.Run("training/"+string(isa), func(b *testing.B) {
			reportFLOPs(b, 2*float64(tn*tk*tm), func() { kern.Gemm(NoTrans, NoTrans, tn, tm, tk, 1, x, tk, w, tm, 1, y, tm) })
		})
	}
}

// reportFLOPs runs op b.N times and reports its GFLOP/s and its GFLOP per
// CPU-second (all goroutines' CPU time: a parallel product that keeps two
// cores busy shows half its GFLOP/s there).
func reportFLOPs(b *testing.B, flops float64, op func()) {
	c0 := cpuSeconds()
	for b.Loop() {
		op()
	}
	b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
	if cpu := cpuSeconds() - c0; cpu > 0 {
		b.ReportMetric(flops*float64(b.N)/cpu/1e9, "GFLOP/CPU-s")
	}
}

// ramp is n values in [0, 1) that repeat every period.
func ramp(n, period int) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(i%period)/float32(period) + 0.01
	}
	return x
}

// BenchmarkDecodeBandwidth measures the decode path on a 256 MiB weight (8×
// the L3 cache: every step reads it from memory) at M = 1, 2, 4 and 8 rows
// (M = 2..8 share one kernel, which runs eight rows; M = 8 also on AVX2),
// and in the same run the machine's memory bandwidth two ways on GOMAXPROCS
// goroutines: memmove of 256 MiB (copy-GB/s counts read plus write
// traffic) and a vector read (Dot over the buffer: read-GB/s). fraction is
// the weight read rate over the better of the two: how close decode comes
// to the memory's speed. The same rates per CPU-second (weight-GB/CPU-s,
// read-GB/CPU-s and their ratio, cpu-fraction) are distorted less by other
// jobs on a shared machine. The weight is on the Go heap (4 KiB pages)
// for M=…, and for 2MiB/M=… in AllocWeights' mapping (2 MiB pages where the
// system gives them; huge-MiB says how much of it got them), the read
// stream each time over the same buffer as the product. The roofline:
// fma-GFLOP/CPU-s is one core's FMA peak (BenchmarkFMAPeak's loop, run
// after the product), roof-GFLOP/CPU-s the lower of it and the read stream
// times the product's m/2 FLOP per byte, and roof-fraction the product's
// FLOP per CPU-second over that roof (counting only the m rows asked for,
// not the rows the kernel pads them to).
func BenchmarkDecodeBandwidth(b *testing.B) {
	const k = 1024
	const n = (256 << 20) / 4 / k
	w := ramp(n*k, 97)
	kern := New(0)
	for _, m := range []int{1, 2, 4, 8} {
		b.Run(fmt.Sprintf("M=%d", m), func(b *testing.B) { decodeBandwidth(b, kern, m, n, k, w) })
	}
	var huge *Weights // made on first use: only when a 2MiB benchmark runs
	for _, m := range []int{1, 2, 4, 8} {
		b.Run(fmt.Sprintf("2MiB/M=%d", m), func(b *testing.B) {
			if huge == nil {
				huge = AllocWeights(n * k)
				copy(huge.Floats, w)
			}
			decodeBandwidth(b, kern, m, n, k, huge.Floats)
			b.ReportMetric(float64(hugeBytes(huge.Floats))/(1<<20), "huge-MiB")
		})
	}
	if huge != nil {
		huge.Free()
	}
	// The AVX2 kernels too where the best instruction set is another: the
	// same products on a machine without AVX-512.
	if kern.ISA() != AVX2 {
		if avx2, err := NewFor(AVX2, 0); err == nil {
			b.Run("M=8/avx2", func(b *testing.B) { decodeBandwidth(b, avx2, 8, n, k, w) })
		}
	}
}

// decodeBandwidth runs BenchmarkDecodeBandwidth's product of m rows on kern.
func decodeBandwidth(b *testing.B, kern *Kernels, m, n, k int, w []float32) {
	a, c := ramp(m*k, 13), make([]float32, m*n)
	t0, c0 := time.Now(), cpuSeconds()
	for range b.N {
		kern.Gemm(NoTrans, Trans, m, n, k, 1, a, k, w, k, 0, c, n)
	}
	bytes := float64(len(w)*4) * float64(b.N)
	weight, cpu := bytes/time.Since(t0).Seconds(), cpuSeconds()-c0
	b.StopTimer()
	copyBW, readBW, readCPU := memoryBandwidth(kern, w)
	b.ReportMetric(weight/1e9, "weight-GB/s")
	b.ReportMetric(copyBW/1e9, "copy-GB/s")
	b.ReportMetric(readBW/1e9, "read-GB/s")
	b.ReportMetric(weight/max(copyBW, readBW), "fraction")
	if cpu > 0 && readCPU > 0 {
		b.ReportMetric(bytes/cpu/1e9, "weight-GB/CPU-s")
		b.ReportMetric(readCPU/1e9, "read-GB/CPU-s")
		b.ReportMetric(bytes/cpu/readCPU, "cpu-fraction")
		if peak := fmaPeakCPU(kern.ISA()); peak > 0 {
			// m rows do 2m FLOP per 4-byte weight: m/2 FLOP per byte.
			intensity := float64(m) / 2
			roof := min(readCPU*intensity, peak)
			b.ReportMetric(peak/1e9, "fma-GFLOP/CPU-s")
			b.ReportMetric(roof/1e9, "roof-GFLOP/CPU-s")
			b.ReportMetric(bytes/cpu*intensity/roof, "roof-fraction")
		}
	}
}

// BenchmarkFMAPeak measures one core's float32 FMA peak per instruction
// set: independent multiply-add chains in registers, no memory operand
// (peak_amd64.s). With the read stream of BenchmarkDecodeBandwidth it sets
// the roofline of the decode products: m rows of A do m/2 FLOP per byte of
// weights, so they are bound by the memory below the ridge point (peak
// over stream, in FLOP per byte) and by the FMA units above it.
func BenchmarkFMAPeak(b *testing.B) {
	for _, isa := range Available() {
		loop, flops := fmaPeak(isa)
		if loop == nil {
			continue
		}
		b.Run(string(isa), func(b *testing.B) {
			const iters = 1 << 20
			reportFLOPs(b, float64(flops*iters), func() { loop(iters) })
		})
	}
}

// fmaPeakCPU is the best of three runs of isa's FMA peak loop in FLOP per
// CPU-second (each about 10 ms), or 0 where isa has none.
func fmaPeakCPU(isa ISA) float64 {
	loop, flops := fmaPeak(isa)
	if loop == nil {
		return 0
	}
	const iters = 1 << 20
	var best float64
	for range 3 {
		c0 := cpuSeconds()
		loop(iters)
		if cpu := cpuSeconds() - c0; cpu > 0 {
			best = max(best, float64(flops*iters)/cpu)
		}
	}
	return best
}

// memoryBandwidth is the best of three tries of copying src (read plus
// write bytes per second) and of reading it with Dot, each on GOMAXPROCS
// goroutines over contiguous parts; readCPU is the best read in bytes per
// CPU-second.
func memoryBandwidth(kern *Kernels, src []float32) (copyBW, readBW, readCPU float64) {
	dst := make([]float32, len(src))
	workers := runtime.GOMAXPROCS(0)
	par := func(fn func(lo, hi int)) {
		var wg sync.WaitGroup
		for w := range workers {
			wg.Go(func() { fn(w*len(src)/workers, (w+1)*len(src)/workers) })
		}
		wg.Wait()
	}
	sums := make([]float32, workers)
	for range 3 {
		t0 := time.Now()
		par(func(lo, hi int) { copy(dst[lo:hi], src[lo:hi]) })
		copyBW = max(copyBW, 2*float64(len(src)*4)/time.Since(t0).Seconds())
		t0, c0 := time.Now(), cpuSeconds()
		par(func(lo, hi int) { sums[lo*workers/len(src)] = kern.Dot(src[lo:hi], src[lo:hi]) })
		readBW = max(readBW, float64(len(src)*4)/time.Since(t0).Seconds())
		if cpu := cpuSeconds() - c0; cpu > 0 {
			readCPU = max(readCPU, float64(len(src)*4)/cpu)
		}
	}
	return copyBW, readBW, readCPU
}
