package kvswap

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// Benchmarks move 1,000 blocks per operation between a MemoryDevice and a
// HostTier, the way the CPU executor would:
//
//	per-block        one Device transfer per block (vLLM / InferCept style)
//	gathered-staged  one Device transfer into the staging buffer, then per-slot
//	                 copies to scattered host slots (Autellix §5 on CPU memory)
//	gathered-direct  one Device transfer straight into consecutive host slots
//	plain-copy       reference: a single copy of the same number of bytes
//
// Device blocks are a random permutation of the pool (a fragmented paged pool);
// scattered host slots are a random permutation of the tier. Block sizes:
//
//	256KiB  GPT-J 6B per-layer block, K and V: 16 tokens × 458,752 B/token / 28
//	        layers = 262,144 B. 1,000 blocks = 250 MiB per buffer, about 750 MiB
//	        with device, host and staging.
//	32KiB   Llama-3.1-8B per-layer K or V of a 16-token block (16 × 8 heads × 128
//	        × 2 B = 32,768 B), the size of one vLLM cudaMemcpyAsync for that
//	        model. 1,000 blocks = 32 MiB per buffer.
const benchBlocks = 1000

var benchSizes = []struct {
	name  string
	bytes int
}{
	{"256KiB", 262144},
	{"32KiB", 32768},
}

type benchFixture struct {
	dev        *MemoryDevice
	host       *HostTier
	consec     []Move // host slots 0..n-1 in order
	scattered  []Move // host slots permuted
	blockBytes int
}

func newBenchFixture(blockBytes int) *benchFixture {
	r := rand.New(rand.NewPCG(7, 7))
	f := &benchFixture{
		dev:        NewMemoryDevice(benchBlocks, blockBytes),
		host:       NewHostTier(benchBlocks, blockBytes, true),
		blockBytes: blockBytes,
	}
	// Touch every page: fresh Go memory maps the zero page, and reading it
	// would flatter every variant.
	fill(r, f.dev.data)
	fill(r, f.host.data)
	slots, _ := f.host.Alloc(benchBlocks)
	devPerm, hostPerm := r.Perm(benchBlocks), r.Perm(benchBlocks)
	f.consec = make([]Move, benchBlocks)
	f.scattered = make([]Move, benchBlocks)
	for i := range benchBlocks {
		f.consec[i] = Move{Device: devPerm[i], Host: slots[i]}
		f.scattered[i] = Move{Device: devPerm[i], Host: slots[hostPerm[i]]}
	}
	return f
}

func benchSwap(b *testing.B, swapIn bool) {
	for _, size := range benchSizes {
		f := newBenchFixture(size.bytes)
		total := int64(benchBlocks * size.bytes)
		run := func(name string, op func()) {
			b.Run(fmt.Sprintf("block=%s/%s", size.name, name), func(b *testing.B) {
				op() // warm-up: sizes the staging buffer and faults its pages in
				b.SetBytes(total)
				b.ReportAllocs()
				b.ResetTimer()
				for b.Loop() {
					op()
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/benchBlocks, "ns/block")
			})
		}
		mover := func(gathered bool, moves []Move) func() {
			m := NewMover(f.dev, f.host, gathered)
			if swapIn {
				return func() { m.SwapIn(moves) }
			}
			return func() { m.SwapOut(moves) }
		}
		run("per-block", mover(false, f.scattered))
		run("gathered-staged", mover(true, f.scattered))
		run("gathered-direct", mover(true, f.consec))
		run("plain-copy", func() {
			if swapIn {
				copy(f.dev.data, f.host.data)
			} else {
				copy(f.host.data, f.dev.data)
			}
		})
	}
}

func BenchmarkSwapOut(b *testing.B) { benchSwap(b, false) }
func BenchmarkSwapIn(b *testing.B)  { benchSwap(b, true) }

// BenchmarkSwapOutAccounting is the simulator's cost: no bytes, only checks
// and counters.
func BenchmarkSwapOutAccounting(b *testing.B) {
	for _, m := range modes() {
		b.Run(m.name, func(b *testing.B) {
			host := NewHostTier(benchBlocks, 262144, false)
			slots, _ := host.Alloc(benchBlocks)
			moves := make([]Move, benchBlocks)
			for i := range moves {
				moves[i] = Move{Device: i, Host: slots[i]}
			}
			mv := NewMover(nil, host, m.gathered)
			b.ReportAllocs()
			for b.Loop() {
				mv.SwapOut(moves)
			}
		})
	}
}
