package policy

import (
	"math"

	"github.com/pitstop-llm/pitstop/engine"
	"github.com/pitstop-llm/pitstop/handling"
)

// rankChoice is --pitstop-rank auto: no statistic of the forecast ranks
// best everywhere (docs/results-policies.md, session 8: the point at
// infercept-multi @5.2, the expectation at azure-conv @6 and
// infercept-single-vicuna @1.8), so each call is scored by all of them once
// (when its score is computed, Pitstop.score's cache), the scores are kept
// with the call, and when its segment ends (a tool call or the call's end)
// each statistic is credited with the pairs of recently finished segments
// (a ring of rankRing) that it ordered as their realized memory-over-time
// orders them (a tie half), as predictor.OrderScored scores its experts.
// The key is the statistic with the highest concordance c, shrunk toward
// arrival order by its Kendall's τ = 2c − 1, less what noise would give:
//
//	key = exp(μ + w·(ln rank − μ)), w = (τ − 2σ₀) / (1 − 2σ₀) in [0, 1]
//
// μ a fixed centre (the mean log rank of the calls scored during warm-up)
// and σ₀ the standard deviation of τ for a forecast of pure noise over the
// segments the score stands on (Kendall's null: √(2(2n+5)/(9n(n−1)))). So
// w = 1 (a forecast that orders every pair right) is the rank itself; the
// order among keys is the rank's for any w > 0, and w scales the rank's
// log-spread against pitstop's aging (agedKey divides the key by the
// call's marginal delay cost, growing with its age): as w falls the aging,
// the pull toward arrival order, weighs more, and at w = 0 (a forecast
// that orders no better than chance) every key is exp(μ) and calls go by
// age alone (or, without aging, by submission: the run queue's tie-break),
// infercept's order. Until rankWarmup pairs have been scored the key is
// the point's rank (the measured default). Written by hand: a few running
// sums over the project's own rank function.
type rankChoice struct {
	ring  [rankRing]rankSample // the segments finished last
	seen  int                  // segments put in the ring
	right [numRankStats]float64
	pairs float64 // decayed pairs scored; right[k] those stat k ordered right
	cost  handling.CostModel

	centre  float64 // μ: fixed at the end of warm-up
	logSum  float64 // Σ ln rank over warm-up scores
	logN    float64
	centred bool
}

// rankRing is how many of the segments finished last each finished segment
// is paired with (predictor.OrderScored's window).
const rankRing = 32

// rankDecay forgets old pairs: each scored pair multiplies the sums by it,
// so the score stands on about the last 1/(1−rankDecay) pairs (about 256
// segments' worth at rankRing pairs each).
const rankDecay = 1 - 1.0/8192

// rankWarmup is the pairs scored before the key leaves the point's rank.
const rankWarmup = 512

// rankSample is what a call's current segment was ranked on: its scores
// by each statistic, and what the realized rank is computed from when the
// segment ends.
type rankSample struct {
	segBase  int // callState.segBase of the segment scored
	gen0     int // Generated() when scored
	seg      handling.Segment
	load     handling.Load
	noSwap   bool
	open     bool // scored, not finished yet
	score    [numRankStats]float64
	realized float64
}

func newRankChoice() *rankChoice { return &rankChoice{} }

// key scores the call by every statistic, remembers the scores for its
// segment (the first time the segment is scored: what the policy predicted
// before it ran), and returns the key (see rankChoice).
func (c *rankChoice) key(v *engine.View, s *engine.Sequence, st *callState, seg handling.Segment) float64 {
	c.cost = v.Cost
	var score [numRankStats]float64
	score[rankPoint] = statRank(rankPoint, v, s, st, seg)
	for k := rankPoint + 1; k < numRankStats; k++ {
		if s.Forecast().Dist == nil {
			score[k] = score[rankPoint] // without a distribution every statistic is the point
			continue
		}
		score[k] = statRank(k, v, s, st, seg)
	}
	if st.rankSample == nil {
		st.rankSample = &rankSample{}
	}
	if rs := st.rankSample; !rs.open || rs.segBase != st.segBase {
		*rs = rankSample{segBase: st.segBase, gen0: s.Generated(), seg: seg, load: loadOf(v), noSwap: !hostFits(v, s), open: true, score: score}
	}
	best, w := c.weight()
	r := score[best]
	if !c.centred {
		c.logSum += math.Log(max(r, math.SmallestNonzeroFloat64))
		c.logN++
		return r
	}
	return math.Exp(c.centre + w*(math.Log(max(r, math.SmallestNonzeroFloat64))-c.centre))
}

// weight is the statistic ranked by and its w (see rankChoice). Ties go to
// the lower statistic (the point first).
func (c *rankChoice) weight() (rankStat, float64) {
	if c.pairs < rankWarmup {
		return rankPoint, 1
	}
	best := rankPoint
	for k := range numRankStats {
		if c.right[k] > c.right[best] {
			best = k
		}
	}
	tau := 2*c.right[best]/c.pairs - 1
	n := 2 * c.pairs / rankRing // segments the score stands on: each brings rankRing pairs, each pair two segments
	sigma0 := math.Sqrt(2 * (2*n + 5) / (9 * n * (n - 1)))
	return best, min(max((tau-2*sigma0)/(1-2*sigma0), 0), 1)
}

// observe closes a call's segment at its tool call or its end: its realized
// rank is the rank of the segment as scored with the tokens it really
// decoded since (at its end, with no tool after), paired with the ring.
func (c *rankChoice) observe(e *engine.Event) {
	if e.Kind != engine.EvPaused && e.Kind != engine.EvFinished {
		return
	}
	st, ok := e.Seq.PolicyState.(*callState)
	if !ok || st.rankSample == nil || !st.rankSample.open || st.rankSample.segBase != st.segBase {
		return
	}
	rs := st.rankSample
	rs.open = false
	if e.Kind == engine.EvFinished && (e.Seq.Cancelled() || e.Err != nil) {
		return // its length is not the segment's
	}
	seg := rs.seg
	seg.PreDecode = max(e.Seq.Generated()-rs.gen0, 1)
	if e.Kind == engine.EvFinished {
		seg.ToolTime, seg.ToolReturn, seg.PostDecode = 0, 0, 0
	}
	var allowed []handling.Kind
	if rs.noSwap {
		allowed = []handling.Kind{handling.Preserve, handling.Discard}
	}
	rs.realized, _ = handling.RankAt(seg, c.cost, rs.load, allowed...)
	c.add(*rs)
	if c.pairs >= rankWarmup && !c.centred && c.logN > 0 {
		c.centre, c.centred = c.logSum/c.logN, true
	}
}

// add credits each statistic with the pairs of f and the ring's segments it
// ordered as realized, and puts f in the ring.
func (c *rankChoice) add(f rankSample) {
	for i := range min(c.seen, rankRing) {
		o := &c.ring[i]
		truth := cmpFloat(f.realized, o.realized)
		if truth == 0 {
			continue
		}
		c.pairs = c.pairs*rankDecay + 1
		for k := range numRankStats {
			c.right[k] *= rankDecay
			switch cmpFloat(f.score[k], o.score[k]) {
			case truth:
				c.right[k]++
			case 0:
				c.right[k] += 0.5
			}
		}
	}
	c.ring[c.seen%rankRing] = f
	c.seen++
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
