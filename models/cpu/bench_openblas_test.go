//go:build openblas && cgo

package cpu

import (
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/netlib/blas/netlib"
)

func init() {
	blasImpls = append(blasImpls, struct {
		name string
		impl blas.Float32Level3
	}{"openblas", netlib.Implementation{}})
}
