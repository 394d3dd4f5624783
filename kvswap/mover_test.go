package kvswap

import (
	"hash/crc32"
	"math/rand/v2"
	"slices"
	"testing"
)

// fill writes pseudo-random bytes into b.
func fill(r *rand.Rand, b []byte) {
	for i := 0; i+8 <= len(b); i += 8 {
		v := r.Uint64()
		for k := range 8 {
			b[i+k] = byte(v >> (8 * k))
		}
	}
	for i := len(b) &^ 7; i < len(b); i++ {
		b[i] = byte(r.Uint32())
	}
}

func sums(d *MemoryDevice, blocks []int) []uint32 {
	out := make([]uint32, len(blocks))
	for i, b := range blocks {
		out[i] = crc32.ChecksumIEEE(d.Block(b))
	}
	return out
}

func modes() []struct {
	name     string
	gathered bool
} {
	return []struct {
		name     string
		gathered bool
	}{{"per-block", false}, {"gathered", true}}
}

func TestMemoryDevice(t *testing.T) {
	d := NewMemoryDevice(6, 4)
	for i := range 6 {
		copy(d.Block(i), []byte{byte(i), byte(i), byte(i), byte(i)})
	}
	dst := make([]byte, 16)
	d.Gather([]int{4, 1, 2, 3}, dst) // 1,2,3 is one run
	want := []byte{4, 4, 4, 4, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3}
	if !slices.Equal(dst, want) {
		t.Fatalf("Gather = %v, want %v", dst, want)
	}
	d.Scatter([]byte{9, 9, 9, 9, 8, 8, 8, 8, 7, 7, 7, 7}, []int{0, 1, 5})
	for i, w := range []byte{9, 8, 2, 3, 4, 7} {
		if !slices.Equal(d.Block(i), []byte{w, w, w, w}) {
			t.Fatalf("block %d = %v after Scatter, want all %d", i, d.Block(i), w)
		}
	}
	mustPanic(t, "block 6 out of range", func() { d.Gather([]int{5, 6}, make([]byte, 8)) })
	mustPanic(t, "block -1 out of range", func() { d.Scatter(make([]byte, 4), []int{-1}) })
	mustPanic(t, "buffer of 7 bytes for 2 blocks", func() { d.Gather([]int{0, 1}, make([]byte, 7)) })
	mustPanic(t, "out of range", func() { d.Block(6) })
	if d.NumBlocks() != 6 || d.BlockBytes() != 4 {
		t.Fatal("NumBlocks/BlockBytes")
	}
}

// TestMoverRoundTrip swaps blocks out, scribbles the device, swaps them back
// into different device blocks and compares checksums, with consecutive and
// scattered host slots, in both modes.
func TestMoverRoundTrip(t *testing.T) {
	const bb = 1000 // not a power of two on purpose
	for _, m := range modes() {
		for _, scattered := range []bool{false, true} {
			r := rand.New(rand.NewPCG(1, 2))
			dev := NewMemoryDevice(32, bb)
			host := NewHostTier(40, bb, true)
			mv := NewMover(dev, host, m.gathered)
			for i := range 32 {
				fill(r, dev.Block(i))
			}
			if scattered { // fragment the tier: free all slots in a shuffled order
				all, _ := host.Alloc(40)
				r.Shuffle(len(all), func(i, j int) { all[i], all[j] = all[j], all[i] })
				host.Free(all)
			}
			src := []int{5, 17, 2, 3, 4, 30, 11}
			want := sums(dev, src)
			slots, ok := host.Alloc(len(src))
			if !ok {
				t.Fatal("Alloc failed")
			}
			out := make([]Move, len(src))
			for i := range src {
				out[i] = Move{Device: src[i], Host: slots[i]}
			}
			if n := mv.SwapOut(out); n != int64(len(src)*bb) {
				t.Fatalf("SwapOut moved %d bytes, want %d", n, len(src)*bb)
			}
			for _, b := range src { // the engine reuses the freed device blocks
				fill(r, dev.Block(b))
			}
			dstBlocks := []int{0, 1, 9, 10, 31, 20, 6}
			in := make([]Move, len(src))
			for i := range src {
				in[i] = Move{Device: dstBlocks[i], Host: slots[i]}
			}
			if n := mv.SwapIn(in); n != int64(len(src)*bb) {
				t.Fatalf("SwapIn moved %d bytes, want %d", n, len(src)*bb)
			}
			host.Free(slots)
			if got := sums(dev, dstBlocks); !slices.Equal(got, want) {
				t.Fatalf("%s scattered=%v: checksums after round trip %x, want %x", m.name, scattered, got, want)
			}
			st := mv.Stats()
			wantTransfers := int64(2 * len(src))
			if m.gathered {
				wantTransfers = 2
			}
			if st.Transfers != wantTransfers || st.OutBlocks != 7 || st.InBlocks != 7 || st.OutBytes != 7*bb || st.InBytes != 7*bb {
				t.Fatalf("%s: stats %+v", m.name, st)
			}
			consecutive := slices.Equal(slots, []int{slots[0], slots[0] + 1, slots[0] + 2, slots[0] + 3, slots[0] + 4, slots[0] + 5, slots[0] + 6})
			switch {
			case !m.gathered && st.StagedBytes != 0:
				t.Fatalf("per-block mode staged %d bytes", st.StagedBytes)
			case m.gathered && consecutive && st.StagedBytes != 0:
				t.Fatalf("gathered into consecutive slots %v staged %d bytes", slots, st.StagedBytes)
			case m.gathered && !consecutive && st.StagedBytes != 2*7*bb:
				t.Fatalf("gathered into scattered slots %v staged %d bytes, want %d", slots, st.StagedBytes, 2*7*bb)
			}
			if scattered == consecutive {
				t.Fatalf("scattered=%v but slots %v consecutive=%v", scattered, slots, consecutive)
			}
		}
	}
}

func TestMoverAccountingOnly(t *testing.T) {
	for _, m := range modes() {
		host := NewHostTier(8, 4096, false)
		mv := NewMover(nil, host, m.gathered)
		slots, _ := host.Alloc(5)
		moves := make([]Move, 5)
		for i := range moves {
			moves[i] = Move{Device: 100 + i, Host: slots[i]}
		}
		if n := mv.SwapOut(moves); n != 5*4096 {
			t.Fatalf("SwapOut = %d", n)
		}
		if n := mv.SwapIn(moves[:2]); n != 2*4096 {
			t.Fatalf("SwapIn = %d", n)
		}
		if n := mv.SwapOut(nil); n != 0 {
			t.Fatalf("empty SwapOut = %d", n)
		}
		st := mv.Stats()
		want := int64(7)
		if m.gathered {
			want = 2
		}
		if st.Transfers != want || st.OutBytes != 5*4096 || st.InBytes != 2*4096 {
			t.Fatalf("%s: stats %+v", m.name, st)
		}
		host.Free(slots)
		mustPanic(t, "host slot 0 is not allocated", func() { mv.SwapIn(moves[:1]) })
		mustPanic(t, "host slot 8 out of range", func() { mv.SwapOut([]Move{{Device: 0, Host: 8}}) })
	}
}

// TestMoverNoAllocs: after the first iteration has sized the staging buffer,
// swaps allocate nothing (not a timing test: allocation counts are exact).
func TestMoverNoAllocs(t *testing.T) {
	const bb, n = 512, 16
	for _, m := range modes() {
		for _, scattered := range []bool{false, true} {
			dev := NewMemoryDevice(n, bb)
			host := NewHostTier(2*n, bb, true)
			mv := NewMover(dev, host, m.gathered)
			slots, _ := host.Alloc(2 * n)
			moves := make([]Move, n)
			for i := range moves {
				h := slots[i]
				if scattered {
					h = slots[2*i]
				}
				moves[i] = Move{Device: (i * 7) % n, Host: h}
			}
			mv.SwapOut(moves) // warm-up: sizes staging and index scratch
			allocs := testing.AllocsPerRun(20, func() {
				mv.SwapOut(moves)
				mv.SwapIn(moves)
			})
			if allocs != 0 {
				t.Errorf("%s scattered=%v: %.1f allocations per swap pair, want 0", m.name, scattered, allocs)
			}
			mv2 := NewMover(dev, host, m.gathered)
			mv2.Reserve(n)
			if allocs := testing.AllocsPerRun(1, func() { mv2.SwapIn(moves) }); allocs != 0 {
				t.Errorf("%s scattered=%v: %.1f allocations after Reserve, want 0", m.name, scattered, allocs)
			}
		}
	}
}
