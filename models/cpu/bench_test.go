package cpu

import (
	"fmt"
	"sync"
	"testing"
	"time"

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
// weight-GB/s is the float32 weights read per step over the step time (set
// it against the memory bandwidth of models/kernel's
// BenchmarkDecodeBandwidth for the fraction of the decode roofline reached).
func BenchmarkDecode(b *testing.B) {
	m := bigModel()
	for _, batch := range []int{1, 8, 32} {
		b.Run(fmt.Sprintf("batch=%d", batch), func(b *testing.B) {
			s, _ := timeSteps(b, servingStep(b, m, batch, 128, 1))
			b.ReportMetric(float64(batch)/s, "tok/s")
			b.ReportMetric(float64(m.Config.Params())*4/s/1e9, "weight-GB/s")
		})
	}
}

// BenchmarkPrefill measures one 256-token prefill chunk on the ~100M model.
func BenchmarkPrefill(b *testing.B) {
	m := bigModel()
	const n = 256
	s, _ := timeSteps(b, servingStep(b, m, 1, 0, n))
	b.ReportMetric(n/s, "tok/s")
	b.ReportMetric(matmulFLOPs(&m.Config, n, 1)/s/1e9, "GFLOP/s")
}

// timeSteps runs step once to warm its scratch buffers, then b.N times,
// and returns the mean seconds per step and the mean CPU-seconds (all
// goroutines; 0 where not measured), which other jobs on a shared machine
// distort less.
func timeSteps(b *testing.B, step func()) (wall, cpu float64) {
	step()
	b.ResetTimer()
	t0, c0 := time.Now(), cpuSeconds()
	for range b.N {
		step()
	}
	return time.Since(t0).Seconds() / float64(b.N), (cpuSeconds() - c0) / float64(b.N)
}
