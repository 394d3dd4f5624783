package policy

import (
	"fmt"

	"github.com/pitstop-llm/pitstop/engine"
)

// batchOrder orders the calls on the device among themselves
// (Options.PitstopBatch). The engine fills an iteration's token budget in
// rank order and gives a prefilling call min(its rest, the budget left), so
// a call on the device with a long context to prefill (a tool's return on a
// discarded context, re-prefilled in chunks) takes the whole budget, and
// every call ranked after it that only needs its next token is left out of
// the batch for as many iterations as the chunks last. In "arrival" (the
// default until session 13) calls on the device go by their arrival (their
// program's in arrival order of programs), so an old call's re-prefill
// stalls the decodes
// of younger calls; measured on fanout (docs/results-policies.md, session
// 13), that stall, not the order of the waiting calls, is what pitstop's
// mean lost to vllm-opt, whose calls on the device go by the time they
// entered the queue, which puts the calls already decoding ahead of a call
// just admitted.
//
// "decode-first" is vLLM's chunked-prefill rule: the calls on the device
// that need one token go first, the prefilling ones take the budget left,
// each group in arrival's order. The default since session 13. A decode costs one token of budget and
// a stalled one delays a call that already holds its KV and its answer half
// written, while a chunk can be cut to whatever is left; so no call on the
// device waits for another's prefill, whatever the load or the workload.
type batchOrder struct{ decodeFirst bool }

// newBatchOrder reads Options.PitstopBatch.
func newBatchOrder(mode string) (batchOrder, error) {
	switch mode {
	case "", "arrival":
		return batchOrder{}, nil
	case "decode-first":
		return batchOrder{decodeFirst: true}, nil
	}
	return batchOrder{}, fmt.Errorf("unknown pitstop batch order %q (valid: arrival, decode-first)", mode)
}

// running is the priority of a call on the device whose order key is key:
// class 0, or with "decode-first" class 0.5 while it has more than its next
// token to compute (still ahead of every call not on the device: their
// classes start at 1).
func (b batchOrder) running(s *engine.Sequence, key float64) engine.Priority {
	if b.decodeFirst && s.Remaining() > 1 {
		return engine.Priority{Class: 0.5, Key: key}
	}
	return engine.Priority{Class: 0, Key: key}
}

// badBatch is newBatchOrder's error on o.PitstopBatch.
func badBatch(o Options) error { _, err := newBatchOrder(o.PitstopBatch); return err }
