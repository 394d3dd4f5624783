//go:build !amd64

package kernel

// archDot4: no four-row kernel on this architecture.
func archDot4(ISA, QType) (func(w []byte, x *[4]qacts, out *[4]float32), bool) { return nil, false }
