//go:build !amd64

package kernel

// fmaPeak: only amd64 has the FMA peak loops (peak_amd64.s).
func fmaPeak(ISA) (loop func(n int), flops int) { return nil, 0 }
