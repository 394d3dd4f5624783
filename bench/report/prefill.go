package report

// prefillCount is what a run prefilled against what its calls asked for:
// the share of prompt tokens the prefix cache saved is 1 - (PrefillTokens -
// RecomputeTokens) / PromptTokens. A chain whose next call finds its
// context evicted pays its whole history again as prefill, which the
// recompute counter (a call's own lost KV) does not see.
type prefillCount struct {
	prefill int64 // tokens computed as prefill, recompute included
	prompt  int64 // input tokens: first-token prompts, plus what each resume appends
}

// AddPrefill adds one iteration's prefill tokens.
func (c *Collector) AddPrefill(tokens int) {
	c.mu.Lock()
	c.prefillCount.prefill += int64(tokens)
	c.mu.Unlock()
}

// AddPrompt adds input a call takes in: its prompt once it has produced its
// first token (its prefill is done, so prefill and prompt cover the same
// calls), or what a resume appends.
func (c *Collector) AddPrompt(tokens int) {
	c.mu.Lock()
	c.prefillCount.prompt += int64(tokens)
	c.mu.Unlock()
}
