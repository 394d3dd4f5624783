//go:build linux

package tinytools

import (
	"os"
	"runtime"
	"syscall"
	"testing"
	"time"
)

func threadCPU() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(1, &ru) // RUSAGE_THREAD
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// TestKernelCPU compares the AVX2 and AVX-512 kernels by CPU time (not wall
// time, which other jobs on a shared machine distort); PITSTOP_TINY_TIMING=1.
func TestKernelCPU(t *testing.T) {
	if os.Getenv("PITSTOP_TINY_TIMING") == "" {
		t.Skip()
	}
	runtime.LockOSThread()
	const n, k, m = 2048, 192, 512
	x := make([]float32, n*k)
	w := make([]float32, k*m)
	y := make([]float32, n*m)
	for i := range x {
		x[i] = float32(i%7)*0.1 + 0.01
	}
	for i := range w {
		w[i] = float32(i%5)*0.1 + 0.01
	}
	for _, a := range []bool{false, true, false, true} {
		useAVX512 = a
		c0 := threadCPU()
		for range 30 {
			gemm(n, k, m, x, k, w, m, y, m)
		}
		c := threadCPU() - c0
		t.Logf("avx512=%v: %.1f GFLOP per CPU-second", a, float64(2*n*k*m*30)/c.Seconds()/1e9)
	}
	useAVX512 = true
}
