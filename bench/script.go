package bench

import (
	"math"
	"math/rand/v2"

	"github.com/pitstop-llm/pitstop/bench/workload"
	"github.com/pitstop-llm/pitstop/engine"
	"github.com/pitstop-llm/pitstop/predictor"
)

// scriptCall drives one replayed call through its trace segments: it forces
// the number of tokens each segment generates and pauses at each tool call,
// as InferCept's and LAMPS's benchmarks do. The tokens themselves come from
// the driver's token source so that prefixes are shared exactly where the
// workload says.
type scriptCall struct {
	d       *driver
	prog    *programRun
	call    *workload.Call
	seg     int // current segment
	decoded int // tokens generated in the current segment
	seq     *engine.Sequence
	pred    engine.Prediction // prediction for the current segment, drawn once
	replica int               // the replica it runs on (Predictors' step)
	// in and served are the current segment's input and its prediction
	// through the point step (Predictors.forecast), which learnSegment
	// books; predicted says they are the current segment's.
	in        predictor.Input
	served    predictor.ServedPoint
	predicted bool
}

func (c *scriptCall) Next(_ *engine.Sequence, _ int32) engine.Action {
	tok := c.d.freshToken()
	c.decoded++
	seg := &c.call.Segments[c.seg]
	if c.decoded < max(seg.Decode, 1) {
		return engine.Action{Token: tok}
	}
	if c.seg == len(c.call.Segments)-1 {
		return engine.Action{Token: tok, Kind: engine.Finish}
	}
	return engine.Action{Token: tok, Kind: engine.Pause, Tool: engine.ToolCall{
		Name:     seg.Tool,
		Expected: c.pred.ToolTime,
	}}
}

// Forecast gives the truth of the current segment and a prediction drawn as
// LAMPS evaluates predictors: the true value plus N(0, p·value) noise.
func (c *scriptCall) Forecast(s *engine.Sequence) engine.Forecast {
	seg := &c.call.Segments[c.seg]
	truth := engine.Prediction{Decode: max(seg.Decode, 1) - c.decoded}
	if c.seg < len(c.call.Segments)-1 {
		truth.HasTool = true
		truth.ToolTime = seg.ToolTime
		truth.ToolReturn = seg.ToolReturn
	}
	for _, s := range c.call.Segments[c.seg+1:] {
		truth.After += max(s.Decode, 1)
	}
	pred := truth
	var dist *engine.Distribution
	if p := c.d.cfg.Predictors; p != nil {
		pred, dist = p.forecast(c, s, truth)
	} else {
		pred.Decode = max(1, int(math.Round(c.d.noisy(float64(truth.Decode)))))
		pred.ToolTime = c.d.noisy(truth.ToolTime)
		pred.After = max(0, int(math.Round(c.d.noisy(float64(truth.After)))))
	}
	c.pred = pred
	return engine.Forecast{Predicted: pred, Truth: truth, HasTruth: true, Dist: dist}
}

// resumed moves the script to the next segment after a tool returned.
func (c *scriptCall) resumed() {
	c.seg++
	c.decoded = 0
}

// noisy adds Gaussian error with standard deviation p·v, clamped at zero.
func (d *driver) noisy(v float64) float64 {
	if d.cfg.PredictionError == 0 || v == 0 {
		return v
	}
	return max(0, v+d.noise.NormFloat64()*d.cfg.PredictionError*v)
}

// tokenSource hands out token ids: fresh ones never repeat (within 2^31), and
// shared-prefix chunks map an id to the same tokens every time.
type tokenSource struct{ next uint32 }

func (d *driver) freshToken() int32 {
	d.tokens.next++
	return int32(d.tokens.next & math.MaxInt32)
}

func (d *driver) freshTokens(dst []int32, n int) []int32 {
	for range n {
		dst = append(dst, d.freshToken())
	}
	return dst
}

// sharedChunk appends the tokens of shared prefix chunk id: a deterministic
// stream seeded by the id, in the negative range so it never meets fresh tokens.
func sharedChunk(dst []int32, id uint64, n int) []int32 {
	r := rand.New(rand.NewPCG(id, 0x5eed))
	for range n {
		dst = append(dst, -1-int32(r.Uint32()&(math.MaxInt32-1)))
	}
	return dst
}
