package policy

import (
	"github.com/pitstop-llm/pitstop/engine"
	"github.com/pitstop-llm/pitstop/handling"
)

// decodeCost is the time an iteration spends on its decodes, learned from
// the last iteration that had any (balance's -measured): its duration less
// what its prefill tokens cost on the cost model (PerToken each), per
// decode, beside the iteration's fixed IterBase. A decode reads its whole
// context's KV, so on long contexts it costs several prompt tokens' time;
// the cost model's IterBase + PerToken·n prices it as one, and so
// understates what every iteration of a longer backlog costs the calls
// waiting in it.
type decodeCost struct {
	dur     float64 // seconds
	prefill int     // prompt tokens computed
	decodes int     // 0: nothing measured yet
}

func (d *decodeCost) observe(it *engine.IterationStats) {
	if it.DecodeTokens > 0 {
		d.dur, d.prefill, d.decodes = it.Duration.Seconds(), it.PrefillTokens, it.DecodeTokens
	}
}

// fixed is the time of an iteration of n decodes and no prompt tokens:
// IterBase plus n times the measured cost of a decode, the cost model's
// IterTime(n) until an iteration with decodes has been seen.
func (d *decodeCost) fixed(m handling.CostModel, n int) float64 {
	if d.decodes == 0 {
		return m.IterTime(n)
	}
	per := max((d.dur-m.PerToken*float64(d.prefill)-m.IterBase)/float64(d.decodes), 0)
	return m.IterBase + per*float64(n)
}
