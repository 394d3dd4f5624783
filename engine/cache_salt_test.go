package engine

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"
)

// startExec records the start of each call's first batch item: how many
// prompt tokens the prefix cache supplied at its admission.
type startExec struct{ start map[SeqID]int }

func (x *startExec) Step(b *Batch) (time.Duration, error) {
	for i := range b.Items {
		it := &b.Items[i]
		if _, seen := x.start[it.Seq.ID()]; !seen {
			x.start[it.Seq.ID()] = it.Start
		}
		it.Token = 7
	}
	return 10 * time.Millisecond, nil
}

// Calls of one salt find each other's prefix; calls of another salt (or
// none) sending the same tokens find nothing, before admission (the View's
// CachedPrefix, SaltedPrefixHashes) and at it (the prefill's start).
func TestCacheSaltSeparatesPrefixes(t *testing.T) {
	cfg := baseConfig() // 64 blocks of 4 tokens
	x := &startExec{start: map[SeqID]int{}}
	e, err := New(cfg, NewVirtualClock(), x, testPolicy{traits: Traits{PrefixCache: true}})
	if err != nil {
		t.Fatal(err)
	}
	prompt := prompts(1, 13)[0]
	const a, b = 0x5eed_0001, 0x5eed_0002
	steps := []struct {
		name        string
		salt        uint64
		wantCached  int // prompt tokens found: 3 full blocks, or none
		wantBlocksA int // leading blocks of salt a's chain cached before it runs
	}{
		{"salt a, first", a, 0, 0},
		{"salt a, again", a, 12, 3},
		{"salt b, same tokens", b, 0, 3},
		{"no salt, same tokens", 0, 0, 3},
		{"salt b, again", b, 12, 3},
		{"no salt, again", 0, 12, 3},
	}
	for _, st := range steps {
		if got := e.CachedBlocks(SaltedPrefixHashes(a, prompt, cfg.BlockSize)); got != st.wantBlocksA {
			t.Fatalf("%s: salt a's chain has %d cached blocks before the call, want %d", st.name, got, st.wantBlocksA)
		}
		if got := e.CachedPrefix(st.salt, prompt); got != st.wantCached {
			t.Fatalf("%s: Engine.CachedPrefix = %d, want %d", st.name, got, st.wantCached)
		}
		s, err := e.SubmitNow(Request{Prompt: prompt, CacheSalt: st.salt, Controller: &script{decode: []int{2}}})
		if err != nil {
			t.Fatal(err)
		}
		e.refreshView()
		if got := e.view.CachedPrefix(s); got != st.wantCached {
			t.Fatalf("%s: View.CachedPrefix = %d, want %d", st.name, got, st.wantCached)
		}
		if err := e.Run(context.Background()); err != nil {
			t.Fatal(err)
		}
		if got := x.start[s.ID()]; got != st.wantCached {
			t.Fatalf("%s: prefill started at token %d, want %d", st.name, got, st.wantCached)
		}
		if err := e.Check(); err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
	}
}

// Running side by side, two calls of the same tokens and different salts
// hold no block in common; two of one salt share their full prompt blocks.
func TestCacheSaltSharesNoBlock(t *testing.T) {
	for _, tc := range []struct {
		name       string
		salt2      uint64
		wantShared int
	}{
		{"other salt", 2, 0},
		{"same salt", 1, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := baseConfig()
			e, err := New(cfg, NewVirtualClock(), &fixedExec{}, testPolicy{traits: Traits{PrefixCache: true}})
			if err != nil {
				t.Fatal(err)
			}
			prompt := prompts(1, 13)[0]
			first, err := e.SubmitNow(Request{Prompt: prompt, CacheSalt: 1, Controller: &script{decode: []int{40}}})
			if err != nil {
				t.Fatal(err)
			}
			for first.Computed() < len(prompt) { // its prompt's blocks committed
				if _, err := e.step(); err != nil {
					t.Fatal(err)
				}
			}
			second, err := e.SubmitNow(Request{Prompt: prompt, CacheSalt: tc.salt2, Controller: &script{decode: []int{40}}})
			if err != nil {
				t.Fatal(err)
			}
			for second.Computed() < len(prompt) {
				if _, err := e.step(); err != nil {
					t.Fatal(err)
				}
			}
			held := map[int32]bool{}
			for _, id := range first.Blocks() {
				held[id] = true
			}
			shared := 0
			for _, id := range second.Blocks() {
				if held[id] {
					shared++
				}
			}
			if shared != tc.wantShared {
				t.Fatalf("calls share %d blocks, want %d (blocks %v and %v)", shared, tc.wantShared, first.Blocks(), second.Blocks())
			}
		})
	}
}

// Salt 0 hashes as before salts existed (parent 0 at the root: bench's
// goldens and a single-tenant server's cache are unchanged); the hash of a
// salt's first block differs from every other salt's for the same tokens,
// and so do its kept tails; SaltedPrefixHashes is the chain a call of that
// salt commits.
func TestCacheSaltHashes(t *testing.T) {
	const bs = 4
	prompt := prompts(1, 14)[0]
	var parent uint64
	for i, h := range PrefixHashes(prompt, bs) {
		parent = hashBlock(parent, prompt[i*bs:(i+1)*bs])
		if h != parent {
			t.Fatalf("unsalted hash of block %d = %x, want the unsalted chain's %x", i, h, parent)
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		a, b := r.Uint64(), r.Uint64()
		if a == b {
			continue
		}
		toks := []int32{int32(r.Uint32()), int32(r.Uint32()), int32(r.Uint32()), int32(r.Uint32())}
		if hashRoot(a, 0, toks) == hashRoot(b, 0, toks) {
			t.Fatalf("salts %x and %x give one first-block hash for %v", a, b, toks)
		}
		if hashRoot(a, tailSalt, toks[:3]) == hashRoot(b, tailSalt, toks[:3]) {
			t.Fatalf("salts %x and %x give one tail hash for %v", a, b, toks[:3])
		}
	}
	for _, salt := range []uint64{0, 1, 1 << 63, 0xdead_beef} {
		s := &Sequence{req: Request{CacheSalt: salt}, tokens: prompt}
		want := SaltedPrefixHashes(salt, prompt, bs)
		got := s.blockHashes(bs)
		if len(got) != len(want) {
			t.Fatalf("salt %x: %d block hashes, want %d", salt, len(got), len(want))
		}
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("salt %x: block %d hash %x, SaltedPrefixHashes says %x", salt, i, got[i], want[i])
			}
		}
		other := &Sequence{req: Request{CacheSalt: salt + 1}, tokens: prompt}
		if s.tailHash(bs, 3) == other.tailHash(bs, 3) || s.tailHash(bs, 14) == other.tailHash(bs, 14) {
			t.Fatalf("salts %x and %x give one tail hash", salt, salt+1)
		}
	}
}

// BenchmarkBlockHashes is the prefix cache's hash path: the chain of a
// 32,768-token context in blocks of 16, salted (a tenant's call).
func BenchmarkBlockHashes(b *testing.B) {
	prompt := prompts(1, 32768)[0]
	s := &Sequence{req: Request{CacheSalt: 0x9e37_79b9}, tokens: prompt}
	b.SetBytes(int64(4 * len(prompt)))
	for range b.N {
		s.hashes = s.hashes[:0]
		s.blockHashes(16)
	}
}
