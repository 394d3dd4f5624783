//go:build !amd64

package kernel

// archQRow: no assembly row kernels on this architecture.
func archQRow(ISA, QType) (qrow, bool) { return qrow{}, false }
