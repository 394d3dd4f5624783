package engine

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/pitstop-llm/pitstop/handling"
)

// tailScene runs call A (13-token prompt, 6 tokens, a tool, 4 tokens) under
// discard with the prefix cache on, in a pool of 16 blocks of 4 tokens. At
// its tool call A holds 18 computed tokens: 4 full blocks and a tail of 2.
// Its tool takes 1 s; half-way through, when steal > 0, call B arrives with
// a prompt that takes every free block ahead of A's and steal more (the
// free queue holds A's tail first, then its blocks 3, 2, 1, 0). It returns
// the run's recomputed tokens and the block manager's tail counts, after
// checking that no block or host slot is left held.
type tailResult struct {
	recompute      int
	cachedAtResume int // View.CachedPrefix of A as it comes back from its tool
	rescued        int
	swapOut        int // blocks
	swapIn         int
	tails          TailStats
}

func tailScene(t *testing.T, steal, hostBlocks int) (r tailResult) {
	t.Helper()
	cfg := baseConfig()
	cfg.NumBlocks = 16
	cfg.HostBlocks = hostBlocks
	p := &recomputeCounter{testPolicy: testPolicy{kind: handling.Discard, traits: Traits{PrefixCache: true}}}
	x := &fixedExec{}
	e, err := New(cfg, NewVirtualClock(), x, p)
	if err != nil {
		t.Fatal(err)
	}
	scA := &script{decode: []int{6, 4}}
	var a *Sequence
	checks := 0
	e.observer = append(e.observer, observerFunc(func(ev *Event) {
		switch {
		case ev.Kind == EvPaused && ev.Seq == a:
			if ev.Context != 18 || e.Blocks().Tails().Kept != 1 {
				e.Stop(fmt.Errorf("A paused with %d tokens computed, %d tails kept; want 18 and 1", ev.Context, e.Blocks().Tails().Kept))
			}
			if steal > 0 {
				e.At(ev.Time+500*time.Millisecond, func() {
					free := e.Blocks().FreeBlocks() - 5 // ahead of A's five
					if _, err := e.SubmitNow(Request{Prompt: prompts(2, 4*(free+steal))[1], Controller: &script{decode: []int{1}}}); err != nil {
						e.Stop(err)
					}
				})
			}
			e.At(ev.Time+time.Second, func() {
				scA.seg, scA.n = 1, 0
				if err := e.Resume(a.ID(), []int32{101, 102, 103, 104, 105}); err != nil {
					e.Stop(err)
				}
				v := e.View()
				r.cachedAtResume = v.CachedPrefix(a)
			})
		case ev.Kind == EvIteration:
			checks++
			r.rescued += ev.Iter.Rescued
			if err := e.Check(); err != nil {
				e.Stop(err)
			}
		}
	}))
	if a, err = e.SubmitNow(Request{Prompt: prompts(1, 13)[0], Controller: scA}); err != nil {
		t.Fatal(err)
	}
	if err := e.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if checks == 0 || a.State() != Finished || a.NumTokens() != 13+6+5+4 {
		t.Fatalf("A ended %v with %d tokens after %d checked iterations", a.State(), a.NumTokens(), checks)
	}
	if err := e.Check(); err != nil {
		t.Fatal(err)
	}
	if n := e.Leaked(); n != 0 || e.Blocks().UsedBlocks() != 0 || e.Host().Used() != 0 {
		t.Fatalf("after the run: %d leaked, %d device blocks and %d host slots held", n, e.Blocks().UsedBlocks(), e.Host().Used())
	}
	r.recompute, r.tails, r.swapOut, r.swapIn = p.total, e.Blocks().Tails(), x.swapOut, x.swapIn
	return r
}

// TestKeptTail: without a host tier, a call discarded at its tool comes
// back with nothing to recompute when its blocks survive, its partial last
// block included; when the tail or a full block is evicted meanwhile,
// exactly the lost tokens are recomputed and nothing leaks. View.CachedPrefix
// counts the tail when it would be taken back.
func TestKeptTail(t *testing.T) {
	cases := []struct {
		name          string
		steal         int
		wantRecompute int
		want          TailStats
	}{
		{"every block survives", 0, 0, TailStats{Kept: 1, Reused: 1}},
		{"the tail evicted", 1, 2, TailStats{Kept: 1, Evicted: 1}},
		{"the tail and full block 3 evicted", 2, 2 + 4, TailStats{Kept: 1, Evicted: 1}},
		{"the tail and full blocks 3, 2 evicted", 3, 2 + 8, TailStats{Kept: 1, Evicted: 1}},
	}
	for _, c := range cases {
		r := tailScene(t, c.steal, 0)
		if r.recompute != c.wantRecompute || r.tails != c.want || r.rescued != 0 {
			t.Errorf("%s: recomputed %d tokens, tails %+v, %d rescued; want %d and %+v, none rescued", c.name, r.recompute, r.tails, r.rescued, c.wantRecompute, c.want)
		}
		if r.cachedAtResume != 18-c.wantRecompute {
			t.Errorf("%s: CachedPrefix %d tokens at the resume, want %d", c.name, r.cachedAtResume, 18-c.wantRecompute)
		}
	}
}

// TestRescue: with a host tier, the first eviction of a discarded paused
// call's cached block swaps its context out instead (all five blocks, the
// tail among them), and the swap-in copies back only the blocks evicted
// after the rescue: nothing is recomputed, nothing leaks.
func TestRescue(t *testing.T) {
	for steal := range 4 {
		r := tailScene(t, steal, 64)
		wantRescued, wantOut := 1, 5
		if steal == 0 {
			wantRescued, wantOut = 0, 0
		}
		if r.recompute != 0 || r.rescued != wantRescued || r.swapOut != wantOut || r.swapIn != steal {
			t.Errorf("B takes %d of A's blocks: recomputed %d, rescued %d, swapped %d out and %d in; want 0, %d, %d and %d",
				steal, r.recompute, r.rescued, r.swapOut, r.swapIn, wantRescued, wantOut, steal)
		}
	}
	// A host tier of 4 blocks: A's five do not fit when the tail is evicted
	// (lost), its four full blocks do when block 3 is next: only the tail
	// is recomputed.
	if r := tailScene(t, 2, 4); r.rescued != 1 || r.recompute != 2 || r.swapOut != 4 {
		t.Errorf("host tier of 4 blocks: rescued %d, recomputed %d, swapped out %d; want 1, 2, 4", r.rescued, r.recompute, r.swapOut)
	}
}

// TestBlockManagerTails: a tail is reusable once, by TakeTail only, and is
// counted apart from the full blocks' evictions.
func TestBlockManagerTails(t *testing.T) {
	bm := NewBlockManager(4, 4, true)
	var table []int32
	bm.Grow(&table, 6) // one full block, one partial
	const h = 0xabc
	bm.CommitTail(table[1], h)
	bm.Release(table)
	if err := bm.Check(nil); err != nil {
		t.Fatal(err)
	}
	if id, ok := bm.TakeTail(h); !ok || id != table[1] {
		t.Fatalf("TakeTail = %d, %v; want the tail's block %d", id, ok, table[1])
	}
	if _, ok := bm.Lookup(h); ok {
		t.Fatal("a taken tail is still cached: its owner writes it")
	}
	if err := bm.Check([][]int32{{table[1]}}); err != nil {
		t.Fatal(err)
	}
	if _, ok := bm.TakeTail(h); ok {
		t.Fatal("a tail was taken twice")
	}
	bm.CommitTail(table[1], h)
	bm.Release(table[1:])
	bm.ForgetTail(h)
	if _, ok := bm.TakeTail(h); ok {
		t.Fatal("a forgotten tail was taken")
	}
	bm.CommitTail(table[1], h)
	bm.Commit(table[0], 0xdef) // a full block, for contrast
	var all []int32
	bm.Grow(&all, 16)
	if got := bm.Tails(); got != (TailStats{Kept: 3, Reused: 1, Evicted: 1}) {
		t.Fatalf("tails %+v, want 3 kept, 1 reused, 1 evicted", got)
	}
	if bm.Evicted() != 1 {
		t.Fatalf("%d full blocks evicted, want 1 (the tail counts apart)", bm.Evicted())
	}
	if err := bm.Check([][]int32{all}); err != nil {
		t.Fatal(err)
	}
	off := NewBlockManager(2, 4, false)
	off.CommitTail(0, h)
	if _, ok := off.TakeTail(h); ok || off.Tails().Kept != 0 {
		t.Fatal("a tail was kept without a prefix cache")
	}
}
