package policy

import (
	"time"

	"github.com/pitstop-llm/pitstop/engine"
	"github.com/pitstop-llm/pitstop/handling"
)

// SOLA (MLSys'25) is state-aware scheduling for TTFT and TPOT SLOs, as far
// as it maps onto this engine:
//
//   - State: per call its real-time TTFT (waiting for its first token) or
//     TPOT (time between its output tokens, tool pauses excluded) and its
//     predicted remaining output (Forecast().Predicted); per iteration
//     p^TTFT = max TTFT / T^TTFT over calls still waiting for their first
//     token and p^TPOT = max TPOT / T^TPOT over calls past it.
//   - Mode per iteration: optimise the metric that is worse off against its
//     SLO, compared over a sliding window of SOLAWindow iterations. TTFT
//     mode puts prefills first, TPOT mode decodes first (Figure 6, phase
//     level).
//   - Order inside a phase (request level): prefills by descending predicted
//     TTFT (t^TTFT + C^p(r), here arrival − C^p(r), the same order);
//     decodes by descending predicted TPOT ((t^TPOT·l_out + C^d·l_left) /
//     (l_out + l_left)), with C^p and C^d from the engine's cost model.
//
// What does not map: the caps n_i (prefills per iteration) and k_i (tokens
// per iteration, a multiple of 128) and the peak-memory admission (LightLLM's
// rule) need an engine hook that can refuse an admission or shrink this
// iteration's budget; the engine offers neither, so SOLA here is its ordering
// only, and the engine's own budget and block checks stand in for the caps.
// The a%-level loosening when both metrics miss is not modelled (only the
// mode choice would use it here). Not preemptive; prefix cache on.
type SOLA struct {
	ttft, tpot float64
	window     []float64 // p^TTFT − p^TPOT of the last iterations
	pos        int
	sum        float64
	ttftMode   bool
	changed    bool
	pending    []*engine.Sequence // calls waiting for their first token, in arrival order
	head       int
	decoding   []*engine.Sequence // calls past their first token and not paused or finished
	iterCost   float64            // last iteration's duration, seconds (C^d)
}

// NewSOLA builds the policy.
func NewSOLA(o Options) *SOLA {
	o = o.Defaults()
	return &SOLA{ttft: o.TTFTSLO, tpot: o.TPOTSLO, window: make([]float64, o.SOLAWindow)}
}

// TTFTMode reports whether the current iteration optimises TTFT (prefills
// first).
func (p *SOLA) TTFTMode() bool { return p.ttftMode }

func (p *SOLA) Priority(v *engine.View, s *engine.Sequence) engine.Priority {
	prefill := s.Generated() == 0
	var class float64
	if prefill != p.ttftMode {
		class = 1
	}
	if prefill {
		// Descending t^TTFT + C^p(r) = ascending arrival − C^p(r).
		cp := v.Cost.RecomputeTime(s.Remaining(), v.Running)
		return engine.Priority{Class: class, Key: s.Arrival().Seconds() - cp}
	}
	return engine.Priority{Class: class, Key: -p.predictedTPOT(v, s)}
}

// predictedTPOT is SOLA's (t^TPOT·l_out + C^d·l_left) / (l_out + l_left).
func (p *SOLA) predictedTPOT(v *engine.View, s *engine.Sequence) float64 {
	st := stateOf(s)
	tpot, out := p.currentTPOT(st, v.Now)
	pred := s.Forecast().Predicted
	left := decodeLeft(pred, s, st) + max(pred.After, 0)
	cd := p.iterCost
	if cd == 0 {
		cd = v.Cost.IterTime(v.Running + 1)
	}
	return (tpot*float64(out) + cd*float64(left)) / float64(out+left)
}

// currentTPOT is the call's TPOT so far counting the gap since its last
// token, and the output tokens it covers.
func (p *SOLA) currentTPOT(st *callState, now time.Duration) (float64, int) {
	n := st.decodeN + 1
	return (st.decodeTime + now - st.lastTok).Seconds() / float64(n), n
}

func (p *SOLA) Handle(*engine.View, *engine.Sequence) handling.Kind { return handling.Discard }

func (p *SOLA) Traits() engine.Traits { return engine.Traits{PrefixCache: true} }

// Refresh re-ranks every runnable call when the mode changed.
func (p *SOLA) Refresh(*engine.View) bool {
	c := p.changed
	p.changed = false
	return c
}

func (p *SOLA) Observe(e *engine.Event) {
	switch e.Kind {
	case engine.EvArrived:
		stateOf(e.Seq)
		p.pending = append(p.pending, e.Seq)
	case engine.EvToken:
		st := stateOf(e.Seq)
		if e.Seq.Generated() == 1 {
			p.addDecoding(e.Seq, st)
		} else if st.decIdx >= 0 {
			st.decodeTime += e.Time - st.lastTok
			st.decodeN++
		}
		st.lastTok = e.Time
	case engine.EvResumed:
		st := stateOf(e.Seq)
		st.newSegment(e.Seq)
		if e.Seq.Generated() > 0 {
			p.addDecoding(e.Seq, st)
			st.lastTok = e.Time
		}
	case engine.EvPaused, engine.EvFinished:
		p.removeDecoding(stateOf(e.Seq))
	case engine.EvIteration:
		p.iterCost = e.Iter.Duration.Seconds()
		p.update(e.Time)
	}
}

func (p *SOLA) addDecoding(s *engine.Sequence, st *callState) {
	if st.decIdx < 0 {
		st.decIdx = len(p.decoding)
		p.decoding = append(p.decoding, s)
	}
}

func (p *SOLA) removeDecoding(st *callState) {
	i := st.decIdx
	if i < 0 {
		return
	}
	last := p.decoding[len(p.decoding)-1]
	p.decoding[i] = last
	stateOf(last).decIdx = i
	p.decoding[len(p.decoding)-1] = nil
	p.decoding = p.decoding[:len(p.decoding)-1]
	st.decIdx = -1
}

// update measures p^TTFT and p^TPOT after an iteration and picks the next
// iteration's mode from the sliding window.
func (p *SOLA) update(now time.Duration) {
	for p.head < len(p.pending) {
		s := p.pending[p.head]
		if s.Generated() == 0 && s.State() != engine.Finished {
			break
		}
		p.pending[p.head] = nil
		p.head++
	}
	if p.head > 1024 && p.head*2 > len(p.pending) {
		n := copy(p.pending, p.pending[p.head:])
		clear(p.pending[n:])
		p.pending = p.pending[:n]
		p.head = 0
	}
	var pTTFT, pTPOT float64
	if p.head < len(p.pending) {
		pTTFT = (now - p.pending[p.head].Arrival()).Seconds() / p.ttft
	}
	for _, s := range p.decoding {
		t, _ := p.currentTPOT(stateOf(s), now)
		pTPOT = max(pTPOT, t/p.tpot)
	}
	d := pTTFT - pTPOT
	p.sum += d - p.window[p.pos]
	p.window[p.pos] = d
	p.pos = (p.pos + 1) % len(p.window)
	if mode := p.sum > 0; mode != p.ttftMode {
		p.ttftMode = mode
		p.changed = true
	}
}
