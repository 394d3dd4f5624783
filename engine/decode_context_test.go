package engine

import "testing"

// An iteration counts the context its decodes read: each decode at
// position p (Start) reads p+1 tokens. One call with a 10-token prompt and
// 5 tokens to write, on a budget that prefills it in one iteration: the
// decodes then read 11, 12, 13, 14 tokens (the first token comes with the
// prefill), 50 in all, one decode an iteration.
func TestIterationCountsDecodeContext(t *testing.T) {
	cfg := Config{NumBlocks: 40, BlockSize: 4, MaxBatchedTokens: 16, MaxSeqs: 8}
	ctx, decodes := 0, 0
	runEngine(t, cfg, testPolicy{}, prompts(1, 10), []int{5}, func(_ *Engine, ev *Event) {
		if ev.Kind != EvIteration {
			return
		}
		if ev.Iter.DecodeTokens > 0 && ev.Iter.DecodeContext != ev.Iter.DecodeTokens*(10+decodes+1) {
			t.Errorf("iteration with decode %d: context %d, want %d", decodes+1, ev.Iter.DecodeContext, 10+decodes+1)
		}
		ctx += ev.Iter.DecodeContext
		decodes += ev.Iter.DecodeTokens
	})
	if decodes != 4 || ctx != 11+12+13+14 {
		t.Errorf("%d decodes reading %d context tokens, want 4 reading 50", decodes, ctx)
	}
}
