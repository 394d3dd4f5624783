package engine

import (
	"time"

	"github.com/pitstop-llm/pitstop/kvswap"
)

// BatchItem is one sequence's share of an iteration: compute the KV of
// tokens [Start, Start+Len) and, when Sample, sample the next token into
// Token as Sampling says.
type BatchItem struct {
	Seq      *Sequence
	Start    int
	Len      int
	Sample   bool
	Sampling Sampling // the call's (Request.Sampling)
	Token    int32    // set by the executor when Sample
}

// Batch is what the scheduler hands the executor for one iteration, all that
// any executor needs: the simulator and a model's executor take the same
// value. Swap-outs
// run before swap-ins, and both before the forward pass, so a block freed by a
// swap-out may be refilled in the same iteration.
type Batch struct {
	Items   []BatchItem
	SwapOut []kvswap.Move
	SwapIn  []kvswap.Move
}

// Prefill and decode token counts of the batch.
func (b *Batch) Tokens() (prefill, decode int) {
	for i := range b.Items {
		if b.Items[i].Len == 1 && b.Items[i].Sample && b.Items[i].Start > 0 {
			decode++
		} else {
			prefill += b.Items[i].Len
		}
	}
	return prefill, decode
}

func (b *Batch) reset() {
	clear(b.Items)
	b.Items = b.Items[:0]
	b.SwapOut = b.SwapOut[:0]
	b.SwapIn = b.SwapIn[:0]
}

// Executor runs one iteration: transfers, forward pass, sampling. It returns
// how long the iteration took: measured on real hardware, modelled by the
// simulator.
type Executor interface {
	Step(b *Batch) (time.Duration, error)
}
