package cpu

import (
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"
	"unsafe"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/blas/gonum"

	"github.com/pitstop-llm/pitstop/models/llama"
)

// Model100M is the built-in llama-100m shape: ~100M parameters, tied
// embeddings. Its float32 weights read per decode step are Params()·4 bytes
// (the tied embedding is read once, as the LM head).
func Model100M() llama.Config {
	c, _ := llama.Builtin("llama-100m")
	return c
}

var (
	bigOnce sync.Once
	bigM    *llama.Model
)

func bigModel() *llama.Model {
	bigOnce.Do(func() { bigM = llama.NewDummy(Model100M(), 1) })
	return bigM
}

// BenchmarkDecode measures decode steps of batch sequences at a context of
// 128 tokens on the ~100M dummy model. tok/s is batch/step time;
// weight-GB/s is the float32 weights read per step over the step time: its
// ratio to the machine's read bandwidth (BenchmarkMemBandwidth) is the
// fraction of the decode roofline reached.
func BenchmarkDecode(b *testing.B) {
	m := bigModel()
	const ctx, bs = 128, 16
	for _, batch := range []int{1, 8, 32} {
		b.Run(fmt.Sprintf("batch=%d", batch), func(b *testing.B) {
			per := (ctx + bs) / bs
			x, err := New(m, Options{NumBlocks: batch * per, BlockSize: bs, KeepSamples: -1})
			if err != nil {
				b.Fatal(err)
			}
			items := make([]item, batch)
			for i := range items {
				toks := make([]int32, ctx+1)
				for j := range toks {
					toks[j] = int32((i*131 + j*17) % m.Config.VocabSize)
				}
				blocks := make([]int32, per)
				for j := range blocks {
					blocks[j] = int32(i*per + j)
				}
				items[i] = item{id: uint64(i), tokens: toks, blocks: blocks, start: 0, n: ctx}
			}
			// The KV of the contexts: any finite values time the same as a
			// real prefill's (and touching every page keeps the kernel's
			// shared zero page out of the measurement).
			for _, blk := range x.kv {
				for j := range blk {
					blk[j] = float32(j%97) / 97
				}
			}
			for i := range items {
				items[i].start, items[i].n, items[i].sample = ctx, 1, true
			}
			b.ResetTimer()
			t0 := time.Now()
			for range b.N {
				if err := x.fw.run(x, items); err != nil {
					b.Fatal(err)
				}
			}
			step := time.Since(t0).Seconds() / float64(b.N)
			b.StopTimer()
			bw := measureBandwidth()
			wbw := float64(m.Config.Params()) * 4 / step
			b.ReportMetric(float64(batch)/step, "tok/s")
			b.ReportMetric(wbw/1e9, "weight-GB/s")
			b.ReportMetric(bw/1e9, "mem-GB/s")
			b.ReportMetric(wbw/bw, "roofline")
		})
	}
}

// BenchmarkPrefill measures one 256-token prefill chunk on the ~100M model.
func BenchmarkPrefill(b *testing.B) {
	m := bigModel()
	const n, bs = 256, 16
	x, err := New(m, Options{NumBlocks: n / bs, BlockSize: bs, KeepSamples: -1})
	if err != nil {
		b.Fatal(err)
	}
	toks := make([]int32, n)
	blocks := make([]int32, n/bs)
	for j := range toks {
		toks[j] = int32(j * 7 % m.Config.VocabSize)
	}
	for j := range blocks {
		blocks[j] = int32(j)
	}
	items := []item{{tokens: toks, blocks: blocks, n: n, sample: true}}
	b.ResetTimer()
	t0 := time.Now()
	for range b.N {
		if err := x.fw.run(x, items); err != nil {
			b.Fatal(err)
		}
	}
	step := time.Since(t0).Seconds() / float64(b.N)
	b.ReportMetric(n/step, "tok/s")
	b.ReportMetric(2*float64(m.Config.Params())*n/step/1e9, "GFLOP/s")
}

var fsink float32

// measureBandwidth is the best read bandwidth of three ways to stream a
// 256 MiB buffer on every core, best of three tries each, measured right
// after a decode benchmark so that both see the same machine load: an XOR
// over 64-bit words, memmove (counted as read plus write traffic: Go's
// memmove writes large copies with non-temporal stores), and the active
// BLAS's sgemv over a 256 MiB matrix (the access pattern of decode at batch 1).
func measureBandwidth() float64 {
	const size = 256 << 20
	src := make([]float32, size/4)
	dst := make([]float32, size/4)
	for i := range src {
		src[i] = float32(i&1023) / 1024
	}
	copy(dst, src)
	workers := runtime.GOMAXPROCS(0)
	par := func(fn func(lo, hi int)) {
		var wg sync.WaitGroup
		for w := range workers {
			wg.Go(func() { fn(w*len(src)/workers, (w+1)*len(src)/workers) })
		}
		wg.Wait()
	}
	best := 0.0
	try := func(bytes float64, fn func()) {
		for range 3 {
			t0 := time.Now()
			fn()
			best = max(best, bytes/time.Since(t0).Seconds())
		}
	}
	try(size, func() {
		par(func(lo, hi int) {
			u := unsafe.Slice((*uint64)(unsafe.Pointer(&src[lo])), (hi-lo)/2)
			var s0, s1, s2, s3 uint64
			for i := 0; i+4 <= len(u); i += 4 {
				s0 ^= u[i]
				s1 ^= u[i+1]
				s2 ^= u[i+2]
				s3 ^= u[i+3]
			}
			fsink += float32(s0 ^ s1 ^ s2 ^ s3)
		})
	})
	try(2*size, func() { par(func(lo, hi int) { copy(dst[lo:hi], src[lo:hi]) }) })
	const cols = 4096
	x, y := make([]float32, cols), make([]float32, len(src)/cols)
	try(size, func() {
		blas32.Implementation().Sgemv(blas.NoTrans, len(y), cols, 1, src, cols, x, 1, 0, y, 1)
	})
	return best
}

// blasImpls are the GEMMs to compare; an openblas build adds OpenBLAS.
var blasImpls = []struct {
	name string
	impl blas.Float32Level3
}{{"gonum", gonum.Implementation{}}}

// BenchmarkSgemm measures C = A·Bᵀ (the executor's GEMM) per implementation
// for decode-shaped (M = 1, 8, 32) and prefill-shaped (M = 256) products
// against a 768×2048 weight.
func BenchmarkSgemm(b *testing.B) {
	const n, k = 2048, 768
	for _, im := range blasImpls {
		for _, m := range []int{1, 8, 32, 256} {
			b.Run(fmt.Sprintf("%s/M=%d", im.name, m), func(b *testing.B) {
				a, w, c := make([]float32, m*k), make([]float32, n*k), make([]float32, m*n)
				for i := range a {
					a[i] = float32(i%13) / 13
				}
				for i := range w {
					w[i] = float32(i%7) / 7
				}
				b.ResetTimer()
				t0 := time.Now()
				for range b.N {
					im.impl.Sgemm(blas.NoTrans, blas.Trans, m, n, k, 1, a, k, w, k, 0, c, n)
				}
				s := time.Since(t0).Seconds() / float64(b.N)
				b.ReportMetric(2*float64(m*n*k)/s/1e9, "GFLOP/s")
			})
		}
	}
}

// BenchmarkMemBandwidth measures the machine's memory bandwidth on 256 MiB
// buffers: copy (b.SetBytes counts bytes copied; traffic is twice that) and
// read (an XOR over the buffer: the access pattern of weight streaming), on one
// goroutine and on GOMAXPROCS goroutines.
func BenchmarkMemBandwidth(b *testing.B) {
	const size = 256 << 20
	src := make([]float32, size/4)
	dst := make([]float32, size/4)
	for i := range src {
		src[i] = float32(i & 1023)
	}
	copy(dst, src)
	par := func(workers int, fn func(lo, hi int)) {
		var wg sync.WaitGroup
		n := len(src)
		for w := range workers {
			wg.Go(func() { fn(w*n/workers, (w+1)*n/workers) })
		}
		wg.Wait()
	}
	var sink uint64
	for _, workers := range []int{1, runtime.GOMAXPROCS(0)} {
		b.Run(fmt.Sprintf("copy/goroutines=%d", workers), func(b *testing.B) {
			b.SetBytes(size)
			for range b.N {
				par(workers, func(lo, hi int) { copy(dst[lo:hi], src[lo:hi]) })
			}
		})
		b.Run(fmt.Sprintf("read/goroutines=%d", workers), func(b *testing.B) {
			b.SetBytes(size)
			sums := make([]uint64, workers)
			for range b.N {
				par(workers, func(lo, hi int) {
					// XOR of 64-bit words: cheap enough per byte that the
					// loop waits on memory, not on arithmetic.
					v := src[lo:hi]
					u := unsafe.Slice((*uint64)(unsafe.Pointer(unsafe.SliceData(v))), len(v)/2)
					var s0, s1, s2, s3 uint64
					for i := 0; i+4 <= len(u); i += 4 {
						s0 ^= u[i]
						s1 ^= u[i+1]
						s2 ^= u[i+2]
						s3 ^= u[i+3]
					}
					sums[lo*workers/len(src)] = s0 ^ s1 ^ s2 ^ s3
				})
			}
			sink ^= sums[0]
		})
		// The same read through the BLAS's vector kernels (gonum's assembly;
		// OpenBLAS's in an openblas build): SIMD loads, as the GEMMs use.
		for _, im := range blasImpls {
			b.Run(fmt.Sprintf("read-%s-sasum/goroutines=%d", im.name, workers), func(b *testing.B) {
				b.SetBytes(size)
				l1 := im.impl.(blas.Float32Level1)
				for range b.N {
					par(workers, func(lo, hi int) { fsink = l1.Sasum(hi-lo, src[lo:hi], 1) })
				}
			})
		}
	}
	_ = sink
}
