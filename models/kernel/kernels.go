package kernel

import (
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
)

// ISA names the instruction set a Kernels runs on.
type ISA string

// The instruction sets, best first.
const (
	AVX512  ISA = "avx512"  // AVX-512F micro-kernel (6×32), AVX2 for the rest
	AVX2    ISA = "avx2"    // AVX2 + FMA (6×16 micro-kernel)
	Generic ISA = "generic" // portable Go
)

// Op says how a matrix operand is read.
type Op bool

// The two ways of reading an operand.
const (
	NoTrans Op = false // as stored: row i is a[i*ld:]
	Trans   Op = true  // transposed: row i of op(a) is column i of a
)

// Kernels runs matrix products with one instruction set and a bound on
// their goroutines. It is safe for concurrent use.
type Kernels struct {
	impl    *impl
	workers int
	bufs    *sync.Pool // *[]float32: packing buffers, shared with Serial's
}

// New returns kernels with the best instruction set of this CPU that use at
// most workers goroutines per product, the caller's included (workers <= 0:
// GOMAXPROCS).
func New(workers int) *Kernels {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	return &Kernels{impl: implFor(Available()[0]), workers: workers, bufs: new(sync.Pool)}
}

// NewFor is New with a chosen instruction set, for tests and benchmarks; an
// instruction set this CPU lacks is an error.
func NewFor(isa ISA, workers int) (*Kernels, error) {
	if avail := Available(); !slices.Contains(avail, isa) {
		return nil, fmt.Errorf("kernel: instruction set %q is not available on this CPU (available: %v)", isa, avail)
	}
	k := New(workers)
	k.impl = implFor(isa)
	return k, nil
}

// ISA is the instruction set k runs on.
func (k *Kernels) ISA() ISA { return k.impl.isa }

// Workers is the bound on the goroutines of one product.
func (k *Kernels) Workers() int { return k.workers }

// Serial returns kernels with the same instruction set that run every
// product on the caller's goroutine (for callers that are parallel
// themselves).
func (k *Kernels) Serial() *Kernels {
	if k.workers == 1 {
		return k
	}
	return &Kernels{impl: k.impl, workers: 1, bufs: k.bufs}
}

// Dot returns x·y over len(x) elements (y must be at least as long).
func (k *Kernels) Dot(x, y []float32) float32 {
	y = y[:len(x)]
	n8 := len(x) &^ 7
	var s float32
	if n8 > 0 {
		s = k.impl.dot(n8, &x[0], &y[0])
	}
	for i := n8; i < len(x); i++ {
		s += x[i] * y[i]
	}
	return s
}

// Axpy adds alpha·x to y over len(x) elements (y must be at least as long).
func (k *Kernels) Axpy(alpha float32, x, y []float32) {
	y = y[:len(x)]
	n8 := len(x) &^ 7
	if n8 > 0 {
		k.impl.axpy(n8, alpha, &x[0], &y[0])
	}
	for i := n8; i < len(x); i++ {
		y[i] += alpha * x[i]
	}
}

// buffer returns a scratch slice of n elements from the pool (contents
// undefined); give it back with release.
func (k *Kernels) buffer(n int) *[]float32 {
	p, _ := k.bufs.Get().(*[]float32)
	if p == nil {
		p = new([]float32)
	}
	if cap(*p) < n {
		*p = make([]float32, n)
	}
	*p = (*p)[:n]
	return p
}

func (k *Kernels) release(p *[]float32) { k.bufs.Put(p) }

// parallel runs fn(u) for u in [0, units) on at most workers goroutines, the
// caller's included, handing out units in order as goroutines free up.
func parallel(workers, units int, fn func(worker, u int)) {
	workers = min(workers, units)
	if workers <= 1 {
		for u := range units {
			fn(0, u)
		}
		return
	}
	var next atomic.Int64
	work := func(w int) {
		for u := int(next.Add(1) - 1); u < units; u = int(next.Add(1) - 1) {
			fn(w, u)
		}
	}
	var wg sync.WaitGroup
	for w := 1; w < workers; w++ {
		wg.Go(func() { work(w) })
	}
	work(0)
	wg.Wait()
}
