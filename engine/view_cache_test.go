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
	var table []int32
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
