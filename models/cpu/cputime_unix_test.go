//go:build unix

package cpu

import "syscall"

// cpuSeconds is the process's user+system CPU time so far: benchmarks
// report work per CPU-second next to work per second, which other jobs on
// a shared machine distort less.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}
