package engine

import (
	"context"
	"testing"
)

// A waiting call finds the prefix a finished call left in the cache, all
// full blocks but the one holding its last token; once other KV takes those
// blocks it finds none, and the evictions are counted.
func TestViewCachedPrefixFollowsEvictions(t *testing.T) {
	cfg := baseConfig() // 64 blocks of 4 tokens
	e, err := New(cfg, NewVirtualClock(), &fixedExec{}, testPolicy{traits: Traits{PrefixCache: true}})
	if err != nil {
		t.Fatal(err)
	}
	prompt := prompts(1, 13)[0]
	if _, err := e.SubmitNow(Request{Prompt: prompt, Controller: &script{decode: []int{3}}}); err != nil {
		t.Fatal(err)
	}
	if err := e.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	e.refreshView()
	if got := e.view.CacheEvictions(); got != 0 {
		t.Fatalf("evictions before any pressure = %d, want 0", got)
	}
	again, err := e.SubmitNow(Request{Prompt: prompt, Controller: &script{decode: []int{1}}})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := e.view.CachedPrefix(again), 12; got != want {
		t.Fatalf("cached prefix of a 13-token prompt left by a finished call = %d, want %d (3 full blocks)", got, want)
	}
	other, err := e.SubmitNow(Request{Prompt: prompts(2, 13)[1], Controller: &script{}})
	if err != nil {
		t.Fatal(err)
	}
	if got := e.view.CachedPrefix(other); got != 0 {
		t.Fatalf("cached prefix of an unseen prompt = %d, want 0", got)
	}
	// The finished call's table went to the free queue tail first: taking
	// all free blocks but its first two evicts its third full block alone.
	var table []int32
	if !e.blocks.Grow(&table, (e.blocks.FreeBlocks()-2)*cfg.BlockSize) {
		t.Fatal("could not take the free blocks")
	}
	if got, want := e.view.CachedPrefix(again), 8; got != want {
		t.Fatalf("cached prefix after the chain's last full block was evicted = %d, want %d", got, want)
	}
	if !e.blocks.Grow(&table, cfg.NumBlocks*cfg.BlockSize) {
		t.Fatal("could not take every block")
	}
	if got := e.view.CachedPrefix(again); got != 0 {
		t.Fatalf("cached prefix after every block was taken = %d, want 0", got)
	}
	if got := e.view.CacheEvictions(); got < 3 {
		t.Fatalf("evictions after taking every block = %d, want at least the 3 cached blocks", got)
	}
	if got := (&View{}).CachedPrefix(again); got != 0 {
		t.Fatalf("a View made by hand reports %d cached tokens, want 0", got)
	}
}

// BenchmarkCachedPrefix is the query on a 32,768-token context whose every
// block is cached, the worst case for the policy's re-ranks.
func BenchmarkCachedPrefix(b *testing.B) {
	cfg := Config{NumBlocks: 4096, BlockSize: 16, HostBlocks: 16, MaxBatchedTokens: 512, MaxSeqs: 8}
	e, err := New(cfg, NewVirtualClock(), &fixedExec{}, testPolicy{traits: Traits{PrefixCache: true}})
	if err != nil {
		b.Fatal(err)
	}
	prompt := prompts(1, 32768)[0]
	hashes := PrefixHashes(prompt, cfg.BlockSize)
	var table []int32
	if !e.blocks.Grow(&table, len(prompt)) {
		b.Fatal("no room for the context")
	}
	for i, id := range table[:len(hashes)] {
		e.blocks.Commit(id, hashes[i])
	}
	e.blocks.Release(table)
	s, err := e.SubmitNow(Request{Prompt: prompt, Controller: &script{}})
	if err != nil {
		b.Fatal(err)
	}
	e.refreshView()
	if got := e.view.CachedPrefix(s); got != 32768-16 {
		b.Fatalf("cached prefix %d, want %d", got, 32768-16)
	}
	b.ResetTimer()
	for range b.N {
		e.view.CachedPrefix(s)
	}
}
