//go:build !unix

package cpu

// cpuSeconds is not measured on this platform (the per-CPU-second metric is
// then left out).
func cpuSeconds() float64 { return 0 }
