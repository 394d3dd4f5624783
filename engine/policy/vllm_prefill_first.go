package policy

import (
	"github.com/pitstop-llm/pitstop/engine"
	"github.com/pitstop-llm/pitstop/handling"
)

// VLLMPrefillFirst is vLLM's default scheduler before chunked prefill (V0
// without --enable-chunked-prefill; SOLA's vLLM-D, the "vLLM default" of its
// Figure 1). An iteration is all prefill whenever a waiting call can be
// admitted: whole prompts in arrival order, as many as the token budget, the
// sequence cap and free memory (less vLLM's 1% watermark) allow, stopping at
// the first that does not fit in memory; otherwise it is all decode (running
// calls in arrival order). Prompts are not chunked: one that does not fit in
// what is left of the budget waits for the next iteration. vLLM sizes the
// budget to the model's context (max_num_batched_tokens = max(max_model_len,
// 2048)) so that every prompt fits; under a smaller engine budget a prompt
// longer than the whole budget is chunked (the first of an iteration), as
// vLLM would refuse it. Preemption recomputes (vLLM's default); a tool call
// ends the request and its KV is discarded, as in fcfs. Through
// engine.Shaper.
type VLLMPrefillFirst struct {
	engine.BasePolicy
	prefill bool // a prefill is in this iteration's batch
	decode  bool // a decode is
	full    bool // a prompt did not fit in memory: no more prefills this iteration
	free    int  // blocks left for prefills this iteration
}

// vllmWatermark is vLLM's default watermark, the share of blocks an
// admission must leave free.
const vllmWatermark = 0.01

// Priority: prefills (waiting calls, and a prompt under way) first, then
// decodes, each by the time it entered its queue (fcfs).
func (p *VLLMPrefillFirst) Priority(_ *engine.View, s *engine.Sequence) engine.Priority {
	class := 1.0
	if vllmPrefill(s) {
		class = 0
	}
	return engine.Priority{Class: class, Key: s.ReadyAt().Seconds()}
}

// vllmPrefill reports whether the call's next step is a prefill (or the
// recompute of a preempted call) rather than one decode.
func vllmPrefill(s *engine.Sequence) bool {
	return s.State() != engine.Running || s.Remaining() > 1
}

func (p *VLLMPrefillFirst) Handle(*engine.View, *engine.Sequence) handling.Kind {
	return handling.Discard
}

func (p *VLLMPrefillFirst) Shape(v *engine.View) engine.BatchLimits {
	p.prefill, p.decode, p.full = false, false, false
	p.free = v.FreeBlocks - int(vllmWatermark*float64(v.TotalBlocks))
	return engine.BatchLimits{}
}

// Admit makes the iteration all prefill or all decode, admits whole prompts
// only, and stops prefills at the first prompt that does not fit in memory
// (vLLM's can_allocate).
func (p *VLLMPrefillFirst) Admit(v *engine.View, s *engine.Sequence, budget int) bool {
	if !vllmPrefill(s) {
		if p.prefill {
			return false
		}
		p.decode = true
		return true
	}
	if p.decode || p.full {
		return false
	}
	if s.Remaining() > budget && p.prefill {
		return false // not chunked: waits for the next iteration
	}
	need := (s.NumTokens()+v.BlockSize-1)/v.BlockSize - s.ResidentBlocks()
	if need > p.free {
		p.full = true
		return false
	}
	p.free -= need
	p.prefill = true
	return true
}
