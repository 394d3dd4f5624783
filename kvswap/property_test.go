package kvswap

import (
	"math/rand/v2"
	"slices"
	"testing"
)

type propSeq struct {
	dev  []int    // device blocks while resident
	host []int    // host slots while swapped
	sums []uint32 // checksum of each block, in order
}

// runSwapProperty drives a random sequence of iterations through a Mover the
// way the engine does (swap-outs, then swap-ins into whatever device blocks are
// free, under a per-iteration budget) and checks after every iteration that
// HostTier.Used() matches the swapped sequences and that every resident
// sequence's bytes are the ones it was created with.
//
// It returns the Mover's stats and how many swap-outs found the host tier full,
// so the caller can check that the interesting paths were exercised.
func runSwapProperty(t *testing.T, seed uint64, gathered bool, iters int) (MoverStats, int) {
	t.Helper()
	const numDev, numHost, bb = 64, 40, 96
	r := rand.New(rand.NewPCG(seed, 0x6b76))
	dev := NewMemoryDevice(numDev, bb)
	host := NewHostTier(numHost, bb, true)
	mv := NewMover(dev, host, gathered)
	budget := NewBudget(r.IntN(24)) // 0: unlimited
	freeDev := r.Perm(numDev)       // shuffled: device blocks are not consecutive
	var resident, swapped []*propSeq
	var wantOut, wantIn int64
	hostFull := 0

	takeDev := func(n int) []int {
		b := slices.Clone(freeDev[len(freeDev)-n:])
		freeDev = freeDev[:len(freeDev)-n]
		return b
	}
	giveDev := func(b []int) {
		freeDev = append(freeDev, b...)
		r.Shuffle(len(freeDev), func(i, j int) { freeDev[i], freeDev[j] = freeDev[j], freeDev[i] })
	}
	pick := func(s []*propSeq) ([]*propSeq, *propSeq) {
		i := r.IntN(len(s))
		p := s[i]
		return append(s[:i], s[i+1:]...), p
	}

	for it := range iters {
		budget.Reset()
		// New sequences arrive.
		for range r.IntN(3) {
			n := 1 + r.IntN(8)
			if n > len(freeDev) {
				break
			}
			p := &propSeq{dev: takeDev(n)}
			for _, b := range p.dev {
				fill(r, dev.Block(b))
			}
			p.sums = sums(dev, p.dev)
			resident = append(resident, p)
		}
		// Some finish.
		if len(resident) > 0 && r.IntN(4) == 0 {
			var p *propSeq
			resident, p = pick(resident)
			giveDev(p.dev)
		}
		// Some swapped ones are discarded (host TTL, cancellation).
		if len(swapped) > 0 && r.IntN(6) == 0 {
			var p *propSeq
			swapped, p = pick(swapped)
			host.Free(p.host)
		}
		// Swap-outs of this iteration, batched into one SwapOut.
		var outMoves []Move
		var outSeqs []*propSeq
		for range r.IntN(4) {
			if len(resident) == 0 {
				break
			}
			var p *propSeq
			resident, p = pick(resident)
			slots, ok := host.Alloc(len(p.dev))
			if !ok {
				hostFull++
			}
			if !ok || !budget.Take(len(p.dev)) {
				if ok {
					host.Free(slots)
				}
				giveDev(p.dev) // host full or no budget: discard
				continue
			}
			p.host = slots
			for i := range slots {
				outMoves = append(outMoves, Move{Device: p.dev[i], Host: slots[i]})
			}
			outSeqs = append(outSeqs, p)
		}
		if got := mv.SwapOut(outMoves); got != int64(len(outMoves)*bb) {
			t.Fatalf("iter %d: SwapOut = %d bytes, want %d", it, got, len(outMoves)*bb)
		}
		wantOut += int64(len(outMoves) * bb)
		for _, p := range outSeqs {
			for _, b := range p.dev { // the blocks get reused: scribble over them
				fill(r, dev.Block(b))
			}
			giveDev(p.dev)
			p.dev = nil
			swapped = append(swapped, p)
		}
		// Swap-ins, into whatever device blocks are free now.
		var inMoves []Move
		var inSeqs []*propSeq
		for range r.IntN(4) {
			if len(swapped) == 0 {
				break
			}
			i := r.IntN(len(swapped))
			p := swapped[i]
			if len(p.host) > len(freeDev) || !budget.Take(len(p.host)) {
				continue
			}
			swapped = append(swapped[:i], swapped[i+1:]...)
			p.dev = takeDev(len(p.host))
			for k := range p.host {
				inMoves = append(inMoves, Move{Device: p.dev[k], Host: p.host[k]})
			}
			inSeqs = append(inSeqs, p)
		}
		if got := mv.SwapIn(inMoves); got != int64(len(inMoves)*bb) {
			t.Fatalf("iter %d: SwapIn = %d bytes, want %d", it, got, len(inMoves)*bb)
		}
		wantIn += int64(len(inMoves) * bb)
		for _, p := range inSeqs {
			host.Free(p.host)
			p.host = nil
			resident = append(resident, p)
		}

		// Invariants.
		hostBlocks := 0
		for _, p := range swapped {
			hostBlocks += len(p.host)
		}
		if host.Used() != hostBlocks {
			t.Fatalf("iter %d: host Used() = %d, swapped sequences hold %d", it, host.Used(), hostBlocks)
		}
		devBlocks := len(freeDev)
		for _, p := range resident {
			devBlocks += len(p.dev)
			if got := sums(dev, p.dev); !slices.Equal(got, p.sums) {
				t.Fatalf("iter %d: resident sequence's bytes changed: %x, want %x", it, got, p.sums)
			}
		}
		if devBlocks != numDev {
			t.Fatalf("iter %d: test bug: %d device blocks accounted, want %d", it, devBlocks, numDev)
		}
		if b := budget.Limit(); b > 0 && budget.Used() > b {
			t.Fatalf("iter %d: budget used %d > limit %d", it, budget.Used(), b)
		}
	}
	st := mv.Stats()
	if st.OutBytes != wantOut || st.InBytes != wantIn {
		t.Fatalf("stats out %d in %d, want %d %d", st.OutBytes, st.InBytes, wantOut, wantIn)
	}
	if !gathered && st.StagedBytes != 0 {
		t.Fatalf("per-block mover staged %d bytes", st.StagedBytes)
	}
	return st, hostFull
}

func TestSwapProperty(t *testing.T) {
	for _, m := range modes() {
		var total MoverStats
		hostFull := 0
		for seed := range uint64(30) {
			st, full := runSwapProperty(t, seed, m.gathered, 300)
			total.OutBytes += st.OutBytes
			total.InBytes += st.InBytes
			total.StagedBytes += st.StagedBytes
			hostFull += full
		}
		t.Logf("%s: %d bytes out, %d in, %d staged, %d swap-outs found the host full", m.name, total.OutBytes, total.InBytes, total.StagedBytes, hostFull)
		if hostFull == 0 {
			t.Errorf("%s: no swap-out ever found the host tier full", m.name)
		}
		// Gathered: both the direct path (consecutive slots) and the staged one.
		if m.gathered && (total.StagedBytes == 0 || total.StagedBytes >= total.OutBytes+total.InBytes) {
			t.Errorf("gathered: staged %d of %d bytes moved; want both paths exercised", total.StagedBytes, total.OutBytes+total.InBytes)
		}
	}
}

func FuzzSwapProperty(f *testing.F) {
	f.Add(uint64(1), false)
	f.Add(uint64(1), true)
	f.Add(uint64(12345), true)
	f.Fuzz(func(t *testing.T, seed uint64, gathered bool) {
		runSwapProperty(t, seed, gathered, 100)
	})
}
