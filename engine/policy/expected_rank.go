package policy

import (
	"fmt"

	"github.com/pitstop-llm/pitstop/engine"
	"github.com/pitstop-llm/pitstop/handling"
)

// rankStat is the statistic of a waiting call's forecast that pitstop turns
// into its memory-over-time key.
type rankStat uint8

const (
	rankPoint    rankStat = iota // the point forecast alone (handling.RankAt on Forecast().Predicted)
	rankExpected                 // the expectation over the length model's bins (expectedRank)
	rankMean                     // the rank at the bins' mean length, conditioned as expectedRank's (an ablation)
	rankMedian                   // the rank at the bins' median length, conditioned as expectedRank's (an ablation)
	numRankStats
)

// rankMode is how pitstop ranks waiting calls (Options.PitstopRank): one
// statistic, or with auto the statistic chosen online and shrunk toward
// arrival order by how well it has ordered finished segments (rankChoice).
type rankMode struct {
	stat rankStat
	auto *rankChoice // nil unless "auto"
}

// rankStats names the statistics for Options.PitstopRank. "" is the
// expectation: on session 15's rebased grid (docs/results-policies.md) it met
// 114 of 117 points against the point's 111 and lost none, and its sustained
// rates matched the point's on 12 of 13 families (seed 1). Session 8 had
// kept the point because the expectation lost infercept-multi @5.2 then.
var rankStats = map[string]rankStat{"": rankExpected, "expected": rankExpected, "point": rankPoint, "mean": rankMean, "median": rankMedian}

func newRankMode(o Options) (rankMode, error) {
	if o.PitstopRank == "auto" {
		return rankMode{auto: newRankChoice()}, nil
	}
	m, ok := rankStats[o.PitstopRank]
	if !ok {
		return rankMode{}, fmt.Errorf("unknown pitstop rank %q (valid: auto, expected, point, mean, median)", o.PitstopRank)
	}
	return rankMode{stat: m}, nil
}

// rankOf is the call's memory-over-time key for the segment seg built from
// its point forecast: the chosen statistic's rank (statRank), or with auto
// rankChoice's key.
func (p *Pitstop) rankOf(v *engine.View, s *engine.Sequence, st *callState, seg handling.Segment) float64 {
	if p.rank.auto != nil {
		return p.rank.auto.key(v, s, st, seg)
	}
	return statRank(p.rank.stat, v, s, st, seg)
}

// statRank is seg's rank by the statistic stat: seg's own, or with a length
// distribution and a statistic other than the point, the expectation over
// it (expectedRank) or the rank at its conditioned mean or median
// (meanRank, medianRank).
func statRank(stat rankStat, v *engine.View, s *engine.Sequence, st *callState, seg handling.Segment) float64 {
	load, allowed := loadOf(v), allowedKinds(v, s)
	if d := s.Forecast().Dist; stat != rankPoint && d != nil {
		g := d.Decoded + s.Generated() - st.segBase
		rank := expectedRank
		switch stat {
		case rankMean:
			rank = meanRank
		case rankMedian:
			rank = medianRank
		}
		if r, ok := rank(seg, d, g, v.Cost, load, allowed...); ok {
			return r
		}
	}
	r, _ := handling.RankAt(seg, v.Cost, load, allowed...)
	return r
}

// expectedRank is E_L[RankAt(seg with the rest of L decoded)] over the
// segment's output length L as the length model's bins give it, conditioned
// on L > generated (the tokens the segment has already produced): the bins
// at or below what the call has generated are dropped, the one it is in
// keeps the part above, and the rest is renormalised. So a call that has
// outlived its likely length moves to the tail of its distribution, and
// ranks as the longer call it now probably is (the Gittins-like part),
// where the point forecast would say it is about to finish.
//
// A bin's lengths are represented by its midpoint (of the part above
// generated for the bin generated is in), and binsPerGroup neighbouring
// bins by their mass-weighted mean: one handling.RankAt per group with
// mass (the handling kind at the tool, and so the score's shape, depends on
// the context the call will have, so the groups cannot share a closed
// form). Memory-over-time is about quadratic in the length, so grouping
// misses only the spread inside a group (its width² / 12 for a flat one).
// The overflow bin (the last: everything past the other bins' range, mean
// d.OverflowTokens) is a Pareto tail with that mean: conditioned on L > g
// past its start lo, its mean is g·OverflowTokens/lo (a Pareto tail's mean
// residual life grows in proportion to the age). When no mass is left above
// generated (the model gave the call no chance to be this long) the call is
// taken as in that tail. ok is false when d is not a usable distribution.
// A call is re-scored only when it changed (Pitstop.score's cache).
func expectedRank(seg handling.Segment, d *engine.Distribution, generated int, m handling.CostModel, load handling.Load, allowed ...handling.Kind) (float64, bool) {
	g := max(generated, 0)
	var sum, mass float64
	ok := lengthPoints(d, g, func(length, p float64) {
		seg.PreDecode = max(int(length+0.5)-g, 1)
		r, _ := handling.RankAt(seg, m, load, allowed...)
		sum += p * r
		mass += p
	})
	if !ok {
		return 0, false
	}
	return sum / mass, true
}

// meanRank is the rank at the conditioned mean length E[L | L > generated]
// over the same points as expectedRank: one RankAt, but blind to the spread
// (memory-over-time is convex in the length, so it ranks a wide
// distribution ahead of what its expectation would).
func meanRank(seg handling.Segment, d *engine.Distribution, generated int, m handling.CostModel, load handling.Load, allowed ...handling.Kind) (float64, bool) {
	g := max(generated, 0)
	var sum, mass float64
	if !lengthPoints(d, g, func(length, p float64) { sum += p * length; mass += p }) {
		return 0, false
	}
	seg.PreDecode = max(int(sum/mass+0.5)-g, 1)
	r, _ := handling.RankAt(seg, m, load, allowed...)
	return r, true
}

// medianRank is the rank at the conditioned median length: the point
// forecast's order (the forecast's point is the distribution's median) with
// expectedRank's conditioning on what was generated, bin by bin (a length
// uniform inside a bin), the overflow bin at its tail's mean.
func medianRank(seg handling.Segment, d *engine.Distribution, generated int, m handling.CostModel, load handling.Load, allowed ...handling.Kind) (float64, bool) {
	n, w := len(d.LengthProbs), d.LengthBinWidth
	if n < 2 || w <= 0 {
		return 0, false
	}
	g := max(generated, 0)
	above := float64(max(d.LengthProbs[n-1], 0)) // the mass above g: the overflow's all of it
	for b, pb := range d.LengthProbs[:n-1] {
		if hi := (b + 1) * w; pb > 0 && hi > g {
			above += float64(pb) * float64(hi-max(b*w, g)) / float64(w)
		}
	}
	length := -1.0
	if above > 0 {
		var cum float64
		for b, pb := range d.LengthProbs[:n-1] {
			hi := (b + 1) * w
			if pb <= 0 || hi <= g {
				continue
			}
			start := max(b*w, g)
			pm := float64(pb) * float64(hi-start) / float64(w) / above
			if cum+pm >= 0.5 {
				length = float64(start) + float64(hi-start)*(0.5-cum)/pm
				break
			}
			cum += pm
		}
	}
	if length < 0 { // the median is in the overflow bin, or nothing is left above g
		lo := (n - 1) * w
		length = float64(max(d.OverflowTokens, lo, g+1))
		if g >= lo && lo > 0 {
			length = max(float64(g)*float64(max(d.OverflowTokens, lo))/float64(lo), float64(g+1))
		}
	}
	seg.PreDecode = max(int(length+0.5)-g, 1)
	r, _ := handling.RankAt(seg, m, load, allowed...)
	return r, true
}

// lengthPoints calls at with the points that stand for d's output length
// conditioned on L > g (see expectedRank): a length and its mass, the
// masses summing to more than 0. It reports false when d is not a usable
// distribution.
func lengthPoints(d *engine.Distribution, g int, at func(length, p float64)) bool {
	n, w := len(d.LengthProbs), d.LengthBinWidth
	if n < 2 || w <= 0 {
		return false
	}
	lo := (n - 1) * w // where the overflow bin starts
	var mass float64
	var gMass, gLen float64 // the group being summed: its mass and mass·length
	for b, pb := range d.LengthProbs[:n-1] {
		if hi := (b + 1) * w; pb > 0 && hi > g {
			start := max(b*w, g)
			pm := float64(pb) * float64(hi-start) / float64(w)
			gMass += pm
			gLen += pm * float64(start+hi) / 2
		}
		if (b+1)%binsPerGroup == 0 || b == n-2 {
			if gMass > 0 {
				at(gLen/gMass, gMass)
				mass += gMass
			}
			gMass, gLen = 0, 0
		}
	}
	tail := float64(max(d.OverflowTokens, lo))
	if g >= lo && lo > 0 {
		tail = float64(g) * tail / float64(lo)
	}
	if po := float64(d.LengthProbs[n-1]); po > 0 {
		at(tail, po)
		mass += po
	}
	if mass <= 0 {
		at(max(tail, float64(g+1)), 1)
	}
	return true
}

// binsPerGroup is how many neighbouring length bins expectedRank scores as
// one: 5 bins of the shipped model's 10 tokens, 11 scores per call instead
// of 51 (BenchmarkExpectedRank).
const binsPerGroup = 5
