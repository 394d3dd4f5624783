package predictor

import (
	"math"
	"testing"
)

// The hit trade is a question about the mixture's distribution, so it is
// decided and booked against the distribution's own median, not against a
// point the spread calibration moved. Here the calibration first moves the
// point far off while the median hits: booked against the moved point the
// candidate would look like a gain and switch the trade on; booked against
// the median it never pays, so once the calibration lets go (the point is
// the median again) the median is served, not the candidate.
func TestServedTradeBooksTheDistributionsMedian(t *testing.T) {
	d := bimodalDist(0.45)
	median := LengthQuantile(d, 0.5, DefaultOverflowTokens)
	in := Input{LastTool: "search", History: History{Calls: 1, LastOutputTokens: 30}}
	m := NewModeLed(-1)
	for range 2 * hitTradeMinSegments { // the calibration holds
		p := ServedPoint{Mixed: median + 250, Median: median, Dist: d}
		m.predictServed(in, &p, DefaultOverflowTokens)
		if p.Candidate == median {
			t.Fatalf("test distribution: no candidate apart from the median %d", median)
		}
		if p.Traded != p.Mixed {
			t.Fatalf("trade off: served %d, want the mixture's (calibrated) point %d", p.Traded, p.Mixed)
		}
		m.observeServed(in, p, median)
	}
	p := ServedPoint{Mixed: median, Median: median, Dist: d} // the calibration let go
	m.predictServed(in, &p, DefaultOverflowTokens)
	if p.Traded != median {
		t.Fatalf("after segments the median hit and the candidate missed: served %d (candidate %d), want the median %d", p.Traded, p.Candidate, median)
	}
}

// Once the trade has paid against the distribution's median, a calibrated
// point is replaced by the candidate as an uncalibrated one is; where the
// distribution offers no candidate, the calibrated point is served.
func TestServedTradeServesTheCandidateOverACalibratedPoint(t *testing.T) {
	d := bimodalDist(0.45)
	median := LengthQuantile(d, 0.5, DefaultOverflowTokens)
	in := Input{LastTool: "search", History: History{Calls: 1, LastOutputTokens: 30}}
	m := NewModeLed(-1)
	var cand int
	for i := range 2 * hitTradeMinSegments { // the call's window hits
		p := ServedPoint{Mixed: median, Median: median, Dist: d}
		m.predictServed(in, &p, DefaultOverflowTokens)
		cand = p.Candidate
		m.observeServed(in, p, 13+i%3)
	}
	p := ServedPoint{Mixed: median + 20, Median: median, Dist: d}
	m.predictServed(in, &p, DefaultOverflowTokens)
	if p.Traded != cand {
		t.Fatalf("trade paid: served %d, want the candidate %d over the calibrated point %d", p.Traded, cand, p.Mixed)
	}
	flat := make([]float32, NumClasses)
	for b := range 40 {
		flat[b] = 0.025
	}
	flat[0], flat[39] = 0.024, 0.026
	fm := LengthQuantile(flat, 0.5, DefaultOverflowTokens)
	q := ServedPoint{Mixed: fm + 20, Median: fm, Dist: flat}
	m.predictServed(in, &q, DefaultOverflowTokens)
	if q.Candidate != fm || q.Traded != q.Mixed {
		t.Fatalf("no candidate (flat distribution): candidate %d, served %d; want the median %d as candidate and the calibrated point %d served", q.Candidate, q.Traded, fm, q.Mixed)
	}
}

// A served step (NewServedStep: its mixture reads the model at its shown
// spread) keeps the distribution's own median beside the moved point;
// with a plain order-scored mixture the two are the same.
func TestServedStepKeepsTheMedianBesideTheCalibratedPoint(t *testing.T) {
	const over, median = 750, 40
	plain, calibrated := ServedStep{Mix: OrderScored(median), Led: NewModeLed(median)}, NewServedStep(median)
	b := ProgramBlend{}.Observe(20, 150, "")
	in := Input{LastTool: "search", History: History{Calls: 1, LastOutputTokens: 30}}
	for i := range 100 {
		actual := 140 + i%21
		for _, s := range []ServedStep{plain, calibrated} {
			p := s.Predict(b, in, 20, oneBin(20), over)
			s.Observe(b, in, p, actual, "")
		}
	}
	pp := plain.Predict(b, in, 20, oneBin(20), over)
	cp := calibrated.Predict(b, in, 20, oneBin(20), over)
	if pp.Median != pp.Mixed {
		t.Fatalf("plain step: median %d, point %d; want the same", pp.Median, pp.Mixed)
	}
	if cp.Median != pp.Mixed || math.Abs(float64(cp.Mixed-150)) >= math.Abs(float64(cp.Median-150)) {
		t.Fatalf("calibrated step: median %d (plain point %d), point %d; want the plain median kept and the point nearer the mean 150", cp.Median, pp.Mixed, cp.Mixed)
	}
}
