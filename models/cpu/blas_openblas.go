//go:build openblas && cgo

package cpu

// #cgo LDFLAGS: -lopenblas
import "C"

import (
	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/netlib/blas/netlib"
)

// With -tags openblas the GEMMs go to OpenBLAS (Debian: libopenblas-dev)
// through gonum's netlib binding. OpenBLAS threads on its own; set
// OPENBLAS_NUM_THREADS to bound it.
func init() {
	blas32.Use(netlib.Implementation{})
	BLAS = "openblas"
}
