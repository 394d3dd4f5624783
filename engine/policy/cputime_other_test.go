//go:build !unix

package policy

// processCPU is unknown here: the benchmark reports wall time alone.
func processCPU() (int64, bool) { return 0, false }
