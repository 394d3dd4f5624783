package cpu

import (
	"fmt"
	"runtime"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/pitstop-llm/pitstop/models/kernel"
	"github.com/pitstop-llm/pitstop/models/llama"
)

// qwen25OneHalf is Qwen2.5-1.5B's shape (its config.json): 1.54B
// parameters, 1536 wide, 28 layers, 12 query and 2 KV heads of 128, MLP
// 8960, a 151,936-token tied embedding; dummy weights here.
var qwen25OneHalf = llama.Config{
	Architecture: "Qwen2ForCausalLM", ModelType: "qwen2",
	HiddenSize: 1536, IntermediateSize: 8960, NumLayers: 28, NumHeads: 12, NumKVHeads: 2, HeadDim: 128,
	VocabSize: 151936, MaxPositions: 32768, RMSNormEps: 1e-6, RopeTheta: 1000000, TieEmbeddings: true,
	QKVBias: true, BOSTokenID: -1,
}

func processCPU() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}

// readBandwidth measures the machine's memory bandwidth on GOMAXPROCS
// goroutines over a 256 MiB buffer, best of three: memmove (copy, read
// plus write bytes per second) and a vector read (Dot over the buffer,
// bytes per second and per CPU-second).
func readBandwidth() (copyBW, readBW, readCPU float64) {
	src := make([]float32, 64<<20)
	for i := range src {
		src[i] = float32(i % 7)
	}
	dst := make([]float32, len(src))
	kern := kernel.New(1)
	workers := runtime.GOMAXPROCS(0)
	par := func(fn func(lo, hi int)) {
		var wg sync.WaitGroup
		for w := range workers {
			wg.Go(func() { fn(w*len(src)/workers, (w+1)*len(src)/workers) })
		}
		wg.Wait()
	}
	sink := make([]float32, workers)
	for range 3 {
		t0 := time.Now()
		par(func(lo, hi int) { copy(dst[lo:hi], src[lo:hi]) })
		copyBW = max(copyBW, 2*float64(len(src)*4)/time.Since(t0).Seconds())
		t0, c0 := time.Now(), processCPU()
		par(func(lo, hi int) { sink[lo*workers/len(src)] += kern.Dot(src[lo:hi], src[lo:hi]) })
		readBW = max(readBW, float64(len(src)*4)/time.Since(t0).Seconds())
		if cpu := processCPU() - c0; cpu > 0 {
			readCPU = max(readCPU, float64(len(src)*4)/cpu)
		}
	}
	return copyBW, readBW, readCPU
}

// BenchmarkDecodeQuant measures decode steps (batch 1 and 8, context 128)
// of Qwen2.5-0.5B- and 1.5B-shaped models with dummy weights in F32, Q8_0
// and Q4_0, against the memory-bandwidth roofline measured right after
// each one's steps: a decode step reads every weight once, so the fastest
// step is the weights' bytes over the read bandwidth. roofline-tok/s is
// that bound; fraction is the step's weight-GB/s over read-GB/s;
// cpu-fraction the same per CPU-second (less distorted by other jobs on a
// shared machine). The 1.5B model in F32 needs 6.2 GB:
// PITSTOP_BENCH_SMALL=1 keeps to 0.5B.
func BenchmarkDecodeQuant(b *testing.B) {
	shapes := []struct {
		name string
		cfg  llama.Config
	}{{"0.5b", qwen2Half}, {"1.5b", qwen25OneHalf}}
	if envFloat("PITSTOP_BENCH_SMALL", 0) != 0 {
		shapes = shapes[:1]
	}
	for _, sh := range shapes {
		var f32 *llama.Model
		for _, format := range []string{"F32", "Q8_0", "Q4_0"} {
			var m *llama.Model
			for _, batch := range []int{1, 8} {
				b.Run(fmt.Sprintf("%s/%s/batch=%d", sh.name, format, batch), func(b *testing.B) {
					if f32 == nil {
						f32 = llama.NewDummy(sh.cfg, 1)
					}
					if m == nil {
						m = f32
						if format != "F32" {
							var err error
							if m, err = f32.Quantized(map[string]kernel.QType{"Q8_0": kernel.Q8_0, "Q4_0": kernel.Q4_0}[format]); err != nil {
								b.Fatal(err)
							}
						}
					}
					step := servingStep(b, m, batch, 128, 1)
					step()
					b.ResetTimer()
					t0, c0 := time.Now(), processCPU()
					for range b.N {
						step()
					}
					s := time.Since(t0).Seconds() / float64(b.N)
					cpu := (processCPU() - c0) / float64(b.N)
					b.StopTimer()
					copyBW, readBW, readCPU := readBandwidth()
					wb := float64(m.WeightBytes())
					b.ReportMetric(float64(batch)/s, "tok/s")
					b.ReportMetric(float64(batch)*readBW/wb, "roofline-tok/s")
					b.ReportMetric(wb/s/1e9, "weight-GB/s")
					b.ReportMetric(readBW/1e9, "read-GB/s")
					b.ReportMetric(copyBW/1e9, "memmove-GB/s")
					b.ReportMetric(wb/s/readBW, "fraction")
					if cpu > 0 {
						b.ReportMetric(wb/cpu/readCPU, "cpu-fraction")
					}
				})
			}
		}
		f32 = nil
		runtime.GC()
	}
}
