package main

import (
	"fmt"
	"os"
	"runtime/pprof"
	"runtime/trace"
)

// startCPUProfile writes a CPU profile of the serve process to path until
// the returned stop is called (at the end of serve): for finding where a
// server's time goes under a real load (go tool pprof BINARY FILE). An
// empty path profiles nothing.
func startCPUProfile(path string) (stop func(), err error) {
	if path == "" {
		return func() {}, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("--cpuprofile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("--cpuprofile: %w", err)
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}

// startExecTrace writes an execution trace of the serve process to path
// until the returned stop is called: for a server's latency tail (the
// collector's phases, goroutines waiting for a core, blocking on locks and
// the network), which a CPU profile does not show (go tool trace FILE). An
// empty path traces nothing.
func startExecTrace(path string) (stop func(), err error) {
	if path == "" {
		return func() {}, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("--exectrace: %w", err)
	}
	if err := trace.Start(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("--exectrace: %w", err)
	}
	return func() { trace.Stop(); f.Close() }, nil
}
