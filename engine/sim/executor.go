package sim

import (
	"time"

	"github.com/pitstop-llm/pitstop/engine"
	"github.com/pitstop-llm/pitstop/handling"
)

// Executor prices iterations with a profile and moves no bytes. The token it
// "samples" is a placeholder: simulated calls follow a script that forces the
// real token choice.
type Executor struct {
	p    *Profile
	cost handling.CostModel // prices the swaps
	// Busy is the total simulated time, for sanity checks.
	Busy time.Duration
}

// NewExecutor simulates the profile's device.
func NewExecutor(p *Profile) *Executor {
	return &Executor{p: p, cost: p.HandlingCost()}
}

// Cost is the modelled duration of a batch, in seconds.
func (x *Executor) Cost(b *engine.Batch) float64 {
	c := &x.p.Iter
	t := c.Base
	for i := range b.Items {
		it := &b.Items[i]
		if it.Len == 1 && it.Sample && it.Start > 0 {
			t += c.DecodeSeq + c.DecodeCtx*float64(it.Start+1)
		} else {
			t += c.PrefillToken*float64(it.Len) + c.PrefillAttn*float64(it.Len)*float64(it.Start+it.Len)
		}
	}
	if len(b.Items) == 0 {
		t = 0 // an iteration of transfers only
	}
	swap := x.cost.TransferTime(len(b.SwapOut)) + x.cost.TransferTime(len(b.SwapIn))
	return t + swap*(1-x.p.Swap.Overlap)
}

// Step returns the modelled duration; sampled tokens are placeholders.
func (x *Executor) Step(b *engine.Batch) (time.Duration, error) {
	for i := range b.Items {
		b.Items[i].Token = 0
	}
	d := time.Duration(x.Cost(b) * float64(time.Second))
	x.Busy += d
	return d, nil
}
