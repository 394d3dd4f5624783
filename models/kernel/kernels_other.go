//go:build !amd64

package kernel

// Only amd64 has assembly kernels; elsewhere the portable Go ones run.

func archAvailable() []ISA { return nil }

func archImpl(ISA) *impl { panic("kernel: no assembly kernels on this architecture") }
