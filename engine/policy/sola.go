package policy

import (
	"cmp"
	"math"
	"slices"
	"time"

	"github.com/pitstop-llm/pitstop/engine"
	"github.com/pitstop-llm/pitstop/handling"
)

// SOLA (MLSys'25) is state-aware scheduling for TTFT and TPOT SLOs (§4–5):
//
//   - State (§4.3): per call its real-time TTFT (waiting for its first
//     token) or TPOT (time between its output tokens, tool pauses excluded,
//     counting the gap since its last token) and its predicted remaining
//     output (Forecast().Predicted); per iteration p^TTFT = max TTFT /
//     T^TTFT over calls still waiting for their first token and p^TPOT =
//     max TPOT / T^TPOT over calls past it.
//   - Loosening (§4.4.1): when both p^TTFT and p^TPOT exceed 1, the maxima
//     (of the mode choice, of Eq. 1 and of Eq. 2) become a%-level maxima,
//     a% being the share of the calls in the system (waiting for a first
//     token or decoding) within their SLO: the (100−a)% furthest from their
//     SLO, already lost, no longer decide.
//   - Mode per iteration (§4.4.2, phase level): optimise the metric that is
//     worse off against its SLO, compared over a sliding window of
//     SOLAWindow iterations. TTFT mode puts prefills first, TPOT mode
//     decodes first.
//   - Order inside a phase (request level): prefills by descending predicted
//     TTFT (t^TTFT + C^p(r), here arrival − C^p(r), the same order);
//     decodes by descending predicted TPOT ((t^TPOT·l_out + C^d·l_left) /
//     (l_out + l_left)), with C^p and C^d from the engine's cost model.
//   - Workload (§4.4.3, through engine.Shaper). TTFT mode: k_i, the batch's
//     tokens, is the largest multiple of 128 (the A100 tile) whose
//     iteration keeps Eq. 1, t^TPOT + C(k_i)/l_out ≤ T^TPOT, for the decodes
//     it may leave out (all of them: prefills go first); at least one tile,
//     so that TTFT mode always makes progress. TPOT mode: every decode, then
//     n_i prefills, the fewest that keep Eq. 2 for the prefills left
//     waiting: t^TTFT + C(this iteration) + C^p(r) ≤ T^TTFT. C^p(r) is r's
//     predicted prefill latency once this iteration is over. The engine
//     prefills in rank order through its token budget, so that is the time
//     to prefill r and the prompts ranked ahead of it that this iteration
//     leaves; with an unchunked budget (the paper's TPOT mode, where k_i is
//     void) it is the one iteration that runs them all.
//   - Peak-memory admission (§5.1, LightLLM's rule; Algorithm 1 line 9): a
//     call not on the device is admitted only if the predicted peak KV of
//     the calls on the device, of those admitted this iteration and of it
//     stays below the device's capacity; a call that does not fit is
//     skipped and the next one is tried.
//
// Cost model (§5.2): C^p and C^d are the engine's linear cost model, scaled
// by γ, tuned after every iteration from the measured duration against the
// model's prediction for the batch: γ_i = α·measured/predicted +
// (1−α)·γ_{i−1}, with α = solaAlpha (the paper gives no value).
//
// What differs from the paper: the cost model is the engine's linear one
// (the paper fits a polynomial in the lengths); l_left is the forecast (oracle with noise in
// bench), not SOLA's length distribution; the engine's token budget (the
// profile's) bounds k_i and chunks prefills in TPOT mode, where the paper's
// TPOT mode runs them whole. Not preemptive; prefix cache on; a call paused
// at a tool is discarded.
type SOLA struct {
	engine.BasePolicy
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
	ttftR      []float64          // scratch: TTFT ratios of waiting calls
	tpotR      []float64          // scratch: TPOT ratios of decoding calls
	gamma      float64            // γ: measured over predicted iteration time (§5.2)
	model      handling.CostModel // the cost model Shape last saw (it prices the iteration that follows)

	// This iteration's workload (Shape), spent by Admit.
	kCap     int       // TTFT mode: k_i (0: none)
	nCap     int       // TPOT mode: prefills to admit (n_i less the decodes); < 0: no cap
	prefills int       // prefills admitted so far
	peak     solaPeak  // LightLLM's peak memory of the calls on the device and admitted
	slack    []float64 // scratch (Eq. 1)
	queue    []solaPre // scratch: prefills in rank order (Eq. 2)

	// Ablations, for the diagnostics test only: fcfsPrefills orders
	// prefills by arrival alone; eq2Own takes C^p(r) in Eq. 2 as r's own
	// prefill alone, as Eq. 2 is printed; noK, noN and noPeak turn off k_i,
	// n_i and the peak-memory admission.
	fcfsPrefills, eq2Own, noK, noN, noPeak, noGamma bool

	// Diagnostics of the last update.
	pTTFT, pTPOT float64 // the ratios compared (a%-level when loosened)
	level        float64 // a: 1 unless both SLOs were missed
}

// solaTile is the token granularity of k_i (SOLA: 128 on A100 GPUs).
const solaTile = 128

// solaAlpha is α of the cost model's tuning (§5.2, Eq. 5): the weight of the
// last iteration's measured/predicted ratio in γ.
const solaAlpha = 0.5

// solaPre is a waiting prefill as Eq. 2 sees it.
type solaPre struct {
	key  float64 // rank key (the engine's order)
	id   engine.SeqID
	wait float64 // t^TTFT, seconds
	rem  int     // tokens left to prefill
}

// NewSOLA builds the policy.
func NewSOLA(o Options) *SOLA {
	o = o.Defaults()
	return &SOLA{ttft: o.TTFTSLO, tpot: o.TPOTSLO, window: make([]float64, o.SOLAWindow), level: 1, nCap: -1, gamma: 1}
}

// TTFTMode reports whether the current iteration optimises TTFT (prefills
// first).
func (p *SOLA) TTFTMode() bool { return p.ttftMode }

// Ratios reports the last iteration's p^TTFT and p^TPOT as compared (at the
// a%-level when both SLOs were missed) and the level a (1: plain maxima).
func (p *SOLA) Ratios() (ttft, tpot, level float64) { return p.pTTFT, p.pTPOT, p.level }

// Caps reports the workload of the iteration being built: k_i in tokens (0:
// none: TPOT mode, no decode to protect, or the engine's whole budget) and
// the prefills n_i admits (−1: no cap: TTFT mode, or the prefills Eq. 2
// needs fill the budget).
func (p *SOLA) Caps() (k, n int) { return p.kCap, p.nCap }

// Priority classes: the phase that goes first this iteration, then the other.
const (
	solaFirst  = 0
	solaSecond = 1
)

func (p *SOLA) Priority(v *engine.View, s *engine.Sequence) engine.Priority {
	if s.Generated() == 0 {
		// Descending t^TTFT + C^p(r) = ascending arrival − C^p(r).
		cp := p.gamma * v.Cost.RecomputeTime(s.Remaining(), v.Running)
		if p.fcfsPrefills {
			cp = 0
		}
		class := float64(solaSecond)
		if p.ttftMode {
			class = solaFirst
		}
		return engine.Priority{Class: class, Key: s.Arrival().Seconds() - cp}
	}
	class := float64(solaFirst)
	if p.ttftMode {
		class = solaSecond
	}
	return engine.Priority{Class: class, Key: -p.predictedTPOT(v, s)}
}

// Shape sets this iteration's workload: k_i in TTFT mode, n_i in TPOT mode,
// and the peak-memory baseline of the calls on the device.
func (p *SOLA) Shape(v *engine.View) engine.BatchLimits {
	p.model = v.Cost
	p.prefills = 0
	p.kCap, p.nCap = 0, -1
	if !p.noPeak {
		p.peak.reset()
		for _, s := range p.decoding {
			if s.State() == engine.Running {
				p.peak.add(p.held(v, s), p.outputLeft(s))
			}
		}
		for _, s := range p.pending[p.head:] {
			if s.State() == engine.Running && s.Generated() == 0 {
				p.peak.add(p.held(v, s), p.outputLeft(s))
			}
		}
		p.peak.build()
	}
	if p.ttftMode {
		if !p.noK {
			p.kCap = p.eq1Tokens(v)
		}
		return engine.BatchLimits{Tokens: p.kCap}
	}
	if !p.noN {
		p.nCap = p.eq2Prefills(v)
	}
	return engine.BatchLimits{}
}

// Admit spends n_i on prefills (the next chunk of a prefill under way
// counts) and applies the peak-memory rule to calls not on the device.
func (p *SOLA) Admit(v *engine.View, s *engine.Sequence, _ int) bool {
	prefill := s.Generated() == 0
	if prefill && p.nCap >= 0 && p.prefills >= p.nCap {
		return false
	}
	if s.State() != engine.Running && !p.noPeak {
		cur, left := p.held(v, s), p.outputLeft(s)
		if p.peak.with(cur, left) >= v.TotalBlocks*v.BlockSize {
			return false
		}
		p.peak.insert(cur, left)
	}
	if prefill {
		p.prefills++
	}
	return true
}

// held is the call's context in the peak-memory rule: its tokens and a
// block's worth less one, so that the token-level rule bounds the blocks it
// will hold (⌈(cur + τ)/B⌉ ≤ (cur + B − 1 + τ)/B).
func (p *SOLA) held(v *engine.View, s *engine.Sequence) int {
	return s.NumTokens() + max(v.BlockSize-1, 0)
}

// outputLeft is the call's predicted remaining output (l_left), at least 1.
func (p *SOLA) outputLeft(s *engine.Sequence) int {
	pred := s.Forecast().Predicted
	return decodeLeft(pred, s, stateOf(s)) + max(pred.After, 0)
}

// solaBudget is the engine's token budget (unbounded when the cost model
// has none).
func solaBudget(v *engine.View) int {
	if b := v.Cost.TokenBudget; b > 0 {
		return b
	}
	return math.MaxInt32
}

// eq1Tokens is k_i (TTFT mode): the largest multiple of the tile whose
// iteration, C(k) = IterTime(k), keeps t + C/l_out ≤ T^TPOT for the decodes
// (at the a%-level: for ⌈a·N⌉ of the N), at least one tile; 0 when that is
// the engine's whole budget or there is no decode.
func (p *SOLA) eq1Tokens(v *engine.View) int {
	sl := p.slack[:0]
	for _, s := range p.decoding {
		t, out := p.currentTPOT(stateOf(s), v.Now)
		sl = append(sl, (p.tpot-t)*float64(out)) // C ≤ (T − t)·l_out
	}
	p.slack = sl
	if len(sl) == 0 {
		return 0
	}
	slices.Sort(sl)
	keep := max(int(math.Ceil(p.level*float64(len(sl))-1e-9)), 1) // decodes Eq. 1 must hold for
	cmax := sl[len(sl)-keep]
	k := solaTile
	cmax /= p.gamma // γ·IterTime(k) ≤ cmax
	if per := v.Cost.PerToken; per > 0 && cmax > v.Cost.IterBase {
		k = max(int(math.Min((cmax-v.Cost.IterBase)/per, math.MaxInt32))/solaTile*solaTile, solaTile)
	}
	if k >= solaBudget(v) {
		return 0
	}
	return k
}

// eq2Prefills is n_i less the decodes (TPOT mode): the fewest prefills, in
// rank order, whose admission keeps Eq. 2 for the prefills left waiting (at
// the a%-level: for ⌈a·M⌉ of the M left), at least one when no decode
// runs, or −1 when that takes the engine's whole budget.
func (p *SOLA) eq2Prefills(v *engine.View) (n int) {
	q := p.queue[:0]
	for _, s := range p.pending[p.head:] {
		if s.Generated() == 0 && s.Runnable() {
			q = append(q, solaPre{key: s.Priority().Key, id: s.ID(), wait: (v.Now - s.Arrival()).Seconds(), rem: s.Remaining()})
		}
	}
	p.queue = q
	if len(q) == 0 {
		return -1
	}
	slices.SortFunc(q, func(a, b solaPre) int {
		if c := cmp.Compare(a.key, b.key); c != 0 {
			return c
		}
		return cmp.Compare(a.id, b.id)
	})
	dec := len(p.decoding)
	if dec == 0 {
		// An idle device: Eq. 2 may ask for no prefill at all, and the
		// device would wait for one to come due. Admit at least the first.
		defer func() {
			if n == 0 {
				n = 1
			}
		}()
	}
	room := solaBudget(v) - dec // prefill tokens this iteration can take
	if room <= 0 {
		return 0
	}
	admitted := 0 // prompt tokens of the j prefills admitted
	for j := range q {
		ran := min(admitted, room)
		iter := p.gamma * v.Cost.IterTime(dec+ran) // C^p(Q_run) + C^d(Q_run)
		left := len(q) - j
		allowed := left - max(int(math.Ceil(p.level*float64(left)-1e-9)), 1) // a%-level: misses that may remain
		ahead := admitted - ran                                              // admitted prompt tokens this iteration leaves
		miss := 0
		for _, r := range q[j:] {
			var cp float64
			if p.eq2Own {
				cp = p.gamma * v.Cost.RecomputeTime(r.rem, dec)
			} else {
				ahead += r.rem
				cp = p.gamma * v.Cost.RecomputeTime(ahead, dec)
			}
			if r.wait+iter+cp > p.ttft {
				if miss++; miss > allowed {
					break
				}
			}
		}
		if miss <= allowed {
			return j
		}
		if admitted += q[j].rem; admitted >= room {
			return -1 // the budget is full: more prefills would not run
		}
	}
	return -1
}

// solaPeak is LightLLM's predicted peak KV of a set of calls, each holding
// cur tokens and generating left more: with the calls sorted by left
// descending, the usage when the j-th finishes is A_j = Σ_{k≤j} cur_k +
// j·left_j, and the peak is the largest A_j. With one more call inserted at
// place q, the terms before q stay, the call's own is S_q + cur + (q+1)·left
// and each later A_j becomes A_j + left_j + cur: prefix and suffix maxima
// answer that in O(log n).
type solaPeak struct {
	left, cur []int // sorted by left, descending
	sum       []int // sum[j]: Σ cur of the first j
	pre       []int // pre[j]: max A over the first j
	suf       []int // suf[j]: max A_k + left_k over k > j
	idx       []int // scratch
}

func (m *solaPeak) reset() { m.left, m.cur = m.left[:0], m.cur[:0] }

// add appends a call; build sorts them.
func (m *solaPeak) add(cur, left int) {
	m.left = append(m.left, left)
	m.cur = append(m.cur, cur)
}

func (m *solaPeak) build() {
	n := len(m.left)
	m.idx = m.idx[:0]
	for i := range n {
		m.idx = append(m.idx, i)
	}
	slices.SortStableFunc(m.idx, func(a, b int) int { return cmp.Compare(m.left[b], m.left[a]) })
	// Permute through sum/pre as scratch.
	m.sum = append(m.sum[:0], m.left...)
	m.pre = append(m.pre[:0], m.cur...)
	for i, j := range m.idx {
		m.left[i], m.cur[i] = m.sum[j], m.pre[j]
	}
	m.prepare()
}

func (m *solaPeak) prepare() {
	n := len(m.left)
	m.sum = slices.Grow(m.sum[:0], n+1)[:n+1]
	m.pre = slices.Grow(m.pre[:0], n+1)[:n+1]
	m.suf = slices.Grow(m.suf[:0], n+1)[:n+1]
	m.sum[0], m.pre[0], m.suf[n] = 0, 0, 0
	for j := 1; j <= n; j++ {
		m.sum[j] = m.sum[j-1] + m.cur[j-1]
		m.pre[j] = max(m.pre[j-1], m.sum[j]+j*m.left[j-1])
	}
	for j := n; j >= 1; j-- {
		m.suf[j-1] = max(m.suf[j], m.sum[j]+(j+1)*m.left[j-1])
	}
}

// pos is the place of a call generating left more: after every call that
// generates at least as much.
func (m *solaPeak) pos(left int) int {
	lo, hi := 0, len(m.left)
	for lo < hi {
		mid := (lo + hi) / 2
		if m.left[mid] >= left {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo
}

// peak is the current peak.
func (m *solaPeak) peak() int { return m.pre[len(m.left)] }

// with is the peak with one more call.
func (m *solaPeak) with(cur, left int) int {
	q := m.pos(left)
	return max(m.pre[q], m.sum[q]+cur+(q+1)*left, m.suf[q]+cur)
}

// insert adds a call for the rest of the iteration.
func (m *solaPeak) insert(cur, left int) {
	q := m.pos(left)
	m.left = slices.Insert(m.left, q, left)
	m.cur = slices.Insert(m.cur, q, cur)
	m.prepare()
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
		if pred := p.model.IterTime(e.Iter.PrefillTokens + e.Iter.DecodeTokens); pred > 0 && !p.noGamma {
			p.gamma = solaAlpha*p.iterCost/pred + (1-solaAlpha)*p.gamma
		}
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
	n := len(p.decoding) - 1
	last := p.decoding[n]
	p.decoding[i] = last
	stateOf(last).decIdx = i
	p.decoding[n] = nil
	p.decoding = p.decoding[:n]
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
