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
//
// "decode-first-late" is decode-first except that a prefilling call whose
// predicted rest on the device would end past the deadline lane's due time
// (now + rest > due: arrival order's deadline for it, floored at arrival
// order's p99 after its arrival) keeps its place ahead of the decodes, as
// in "arrival": a call already late for the tail bar is not also given only
// the budget the decodes leave. Without the lane (a tail rule with no
// arrival-order shadow) it is decode-first. An option, not the default:
// measured in docs/results-policies.md (session 14, lateprefill14), where
// the p99 calls of azure-code's sustained rate turn out to wait in the
// queue, not on the device.
type batchOrder struct{ decodeFirst, late bool }

// newBatchOrder reads Options.PitstopBatch.
func newBatchOrder(mode string) (batchOrder, error) {
	switch mode {
	case "", "arrival":
		return batchOrder{}, nil
	case "decode-first":
		return batchOrder{decodeFirst: true}, nil
	case "decode-first-late":
		return batchOrder{decodeFirst: true, late: true}, nil
	}
	return batchOrder{}, fmt.Errorf("unknown pitstop batch order %q (valid: arrival, decode-first, decode-first-late)", mode)
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

// lateOnDevice reports whether "decode-first-late" keeps the prefilling
// call s ahead of the decodes: the deadline lane holds it to a due time and
// its predicted rest on the device (tool time left out) ends past it.
func (p *Pitstop) lateOnDevice(v *engine.View, s *engine.Sequence, st *callState) bool {
	if !p.batch.late || !p.tail.shadowed() || !st.hasDeadline || s.Remaining() <= 1 {
		return false
	}
	dev, _ := restParts(v, s, st)
	return v.Now.Seconds()+dev > p.deadlines.due(v, s, st)
}

// badBatch is newBatchOrder's error on o.PitstopBatch.
func badBatch(o Options) error { _, err := newBatchOrder(o.PitstopBatch); return err }
