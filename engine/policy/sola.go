package policy

import (
	"slices"
	"time"

	"github.com/pitstop-llm/pitstop/engine"
	"github.com/pitstop-llm/pitstop/handling"
)

// SOLA (MLSys'25) is state-aware scheduling for TTFT and TPOT SLOs, as far
// as it maps onto this engine:
//
//   - State (§4.3): per call its real-time TTFT (waiting for its first
//     token) or TPOT (time between its output tokens, tool pauses excluded,
//     counting the gap since its last token) and its predicted remaining
//     output (Forecast().Predicted); per iteration p^TTFT = max TTFT /
//     T^TTFT over calls still waiting for their first token and p^TPOT =
//     max TPOT / T^TPOT over calls past it.
//   - Loosening (§4.4.1): when both p^TTFT and p^TPOT exceed 1, the maxima
//     become a%-level maxima, a% being the share of the calls in the system
//     (waiting for a first token or decoding) within their SLO: the
//     (100−a)% furthest from their SLO, already lost, no longer decide.
//   - Mode per iteration (§4.4.2, phase level): optimise the metric that is
//     worse off against its SLO, compared over a sliding window of
//     SOLAWindow iterations. TPOT mode ("optimise TPOT subject to TTFT")
//     puts decodes first, then prefills. TTFT mode ("optimise TTFT subject
//     to TPOT") puts prefills first, except that a decode for which Eq. 1
//     would break if it were left out of a full prefill iteration —
//     t^TPOT + C^p/l^out > T^TPOT with C^p the cost of an iteration whose
//     token budget is all prefill, while t^TPOT is still within the SLO —
//     goes ahead of the prefills (see the caps below).
//   - Order inside a phase (request level): prefills by descending predicted
//     TTFT (t^TTFT + C^p(r), here arrival − C^p(r), the same order);
//     decodes by descending predicted TPOT ((t^TPOT·l_out + C^d·l_left) /
//     (l_out + l_left)), with C^p and C^d from the engine's cost model.
//
// What does not map: the caps n_i (prefills per iteration) and k_i (tokens
// per iteration, a multiple of 128) and the peak-memory admission (LightLLM's
// rule) need an engine hook that can refuse an admission or shrink this
// iteration's budget; the engine offers neither (a policy only ranks, and the
// engine fills its token budget in that order). The paper keeps Eq. 1 in TTFT
// mode by capping the prefill tokens k_i so that the decodes it leaves out
// stay within T^TPOT; with a fixed budget the same constraint can only be
// kept by not leaving out the decodes it protects, hence the at-risk decodes
// above. Eq. 2's n_i in TPOT mode (admit only the prefills that TTFT needs,
// so that iterations stay short) has no ordering equivalent: the engine
// fills the rest of the budget with prefills whatever their rank, so TPOT
// mode runs as fcfs does. Not preemptive; prefix cache on.
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
	risk       []bool             // by decoding index: ranked as at risk under Eq. 1 (TTFT mode)
	iterCost   float64            // last iteration's duration, seconds (C^d)
	fullCost   float64            // an iteration whose budget is all prefill, seconds (C^p of Eq. 1)
	ttftR      []float64          // scratch: TTFT ratios of waiting calls
	tpotR      []float64          // scratch: TPOT ratios of decoding calls

	// fcfsPrefills orders prefills by arrival alone (an ablation of the
	// predicted-TTFT order, for the diagnostics test only).
	fcfsPrefills bool

	// Diagnostics of the last update.
	pTTFT, pTPOT float64 // the ratios compared (a%-level when loosened)
	level        float64 // a: 1 unless both SLOs were missed
}

// NewSOLA builds the policy.
func NewSOLA(o Options) *SOLA {
	o = o.Defaults()
	return &SOLA{ttft: o.TTFTSLO, tpot: o.TPOTSLO, window: make([]float64, o.SOLAWindow), level: 1}
}

// TTFTMode reports whether the current iteration optimises TTFT (prefills
// first).
func (p *SOLA) TTFTMode() bool { return p.ttftMode }

// Ratios reports the last iteration's p^TTFT and p^TPOT as compared (at the
// a%-level when both SLOs were missed) and the level a (1: plain maxima).
func (p *SOLA) Ratios() (ttft, tpot, level float64) { return p.pTTFT, p.pTPOT, p.level }

// Priority classes: in TPOT mode decodes (solaDecode), then prefills; in
// TTFT mode decodes at risk under Eq. 1 (solaDecode), then prefills, then
// the other decodes (solaLate).
const (
	solaDecode  = 0
	solaPrefill = 1
	solaLate    = 2
)

func (p *SOLA) Priority(v *engine.View, s *engine.Sequence) engine.Priority {
	p.costs(v)
	if s.Generated() == 0 {
		// Descending t^TTFT + C^p(r) = ascending arrival − C^p(r).
		cp := v.Cost.RecomputeTime(s.Remaining(), v.Running)
		if p.fcfsPrefills {
			cp = 0
		}
		return engine.Priority{Class: solaPrefill, Key: s.Arrival().Seconds() - cp}
	}
	class := float64(solaDecode)
	if p.ttftMode {
		st := stateOf(s)
		atRisk := p.atRisk(st, v.Now)
		if st.decIdx >= 0 {
			p.risk[st.decIdx] = atRisk
		}
		if !atRisk {
			class = solaLate
		}
	}
	return engine.Priority{Class: class, Key: -p.predictedTPOT(v, s)}
}

// costs reads the cost model once: C^p of an iteration whose token budget
// is all prefill.
func (p *SOLA) costs(v *engine.View) {
	if p.fullCost > 0 {
		return
	}
	if b := v.Cost.TokenBudget; b > 0 {
		p.fullCost = v.Cost.IterTime(b)
	}
}

// atRisk is Eq. 1 for one decode: left out of an all-prefill iteration, its
// TPOT would pass the SLO while it is still within it now.
func (p *SOLA) atRisk(st *callState, now time.Duration) bool {
	t, out := p.currentTPOT(st, now)
	c := p.fullCost
	if c == 0 {
		c = p.iterCost
	}
	return t <= p.tpot && t+c/float64(out) > p.tpot
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

// Refresh re-ranks every runnable call when the mode changed, or in TTFT
// mode when a decode left out of the batch came to be at risk (or stopped
// being).
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
		p.risk = append(p.risk, false)
	}
}

func (p *SOLA) removeDecoding(st *callState) {
	i := st.decIdx
	if i < 0 {
		return
	}
	n := len(p.decoding) - 1
	last := p.decoding[n]
	p.decoding[i] = last
	p.risk[i] = p.risk[n]
	stateOf(last).decIdx = i
	p.decoding[n] = nil
	p.decoding = p.decoding[:n]
	p.risk = p.risk[:n]
	st.decIdx = -1
}

// update measures p^TTFT and p^TPOT after an iteration, loosened to the
// a%-level when both SLOs are missed, and picks the next iteration's mode
// from the sliding window.
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
	// TTFT ratios in arrival order, so descending.
	p.ttftR = p.ttftR[:0]
	for _, s := range p.pending[p.head:] {
		if s.Generated() == 0 && s.State() != engine.Finished {
			p.ttftR = append(p.ttftR, (now-s.Arrival()).Seconds()/p.ttft)
		}
	}
	slices.Reverse(p.ttftR)
	p.tpotR = p.tpotR[:0]
	for _, s := range p.decoding {
		t, _ := p.currentTPOT(stateOf(s), now)
		p.tpotR = append(p.tpotR, t/p.tpot)
	}
	slices.Sort(p.tpotR)
	pTTFT, pTPOT := solaMax(p.ttftR), solaMax(p.tpotR)
	p.level = 1
	if pTTFT > 1 && pTPOT > 1 {
		// Both missed: a%-level maxima, a% = the share within their SLO.
		within := solaWithin(p.ttftR) + solaWithin(p.tpotR)
		p.level = float64(within) / float64(len(p.ttftR)+len(p.tpotR))
		pTTFT, pTPOT = solaLevel(p.ttftR, p.level), solaLevel(p.tpotR, p.level)
	}
	p.pTTFT, p.pTPOT = pTTFT, pTPOT
	d := pTTFT - pTPOT
	p.sum += d - p.window[p.pos]
	p.window[p.pos] = d
	p.pos = (p.pos + 1) % len(p.window)
	if mode := p.sum > 0; mode != p.ttftMode {
		p.ttftMode = mode
		p.changed = true
	}
	if p.ttftMode && !p.changed {
		for i, s := range p.decoding {
			if p.atRisk(stateOf(s), now) != p.risk[i] {
				p.changed = true
				break
			}
		}
	}
}

// solaMax is the largest of ascending xs, 0 for none.
func solaMax(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	return xs[len(xs)-1]
}

// solaWithin counts the ratios of ascending xs that are at most 1.
func solaWithin(xs []float64) int {
	n, _ := slices.BinarySearch(xs, 1.0+1e-12)
	return n
}

// solaLevel is the a-quantile (nearest rank) of ascending xs, 0 for none.
func solaLevel(xs []float64, a float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	i := int(a*float64(len(xs))+0.999999999) - 1
	return xs[min(max(i, 0), len(xs)-1)]
}
