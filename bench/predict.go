package bench

import (
	"slices"

	"github.com/pitstop-llm/pitstop/bench/report"
	"github.com/pitstop-llm/pitstop/bench/workload"
	"github.com/pitstop-llm/pitstop/bench/workload/infercept"
	"github.com/pitstop-llm/pitstop/engine"
	"github.com/pitstop-llm/pitstop/predictor"
)

// Predictors replaces the oracle-with-noise source of a replay's predictions
// with real predictors, as a server would have them: an output-length model
// for the tokens a segment generates before its tool call, and per-tool
// duration statistics learnt online from the tool calls already seen in the
// run. Policies read both through Sequence.Forecast().Predicted either way.
//
// What a trace cannot give a model is marked so: the workloads carry token
// counts, not text, so the model sees the context length, the tools offered,
// the tool whose result it resumes after and the program's history but no
// message text. The tools offered are those of the whole program (a request
// lists its tools up front), never the tool this segment will call, which is
// known only after the segment has run. Whether a segment ends in a tool call
// and how many tokens the tool returns are taken from the trace (a server
// knows the tool once it is called); tokens after the current segment are not
// predicted (After is 0).
//
// After the length model a segment's prediction goes through serve's own
// point step (predictor.ServedStep: the expert mixture, then the window
// mode where it orders better), one per deployment as serve has one per
// process: one per replica of the run, made by NewStep. The workloads carry
// no tool arguments, so a segment's class is the tool it resumes after
// without an argument class (predictor.Input.LastToolClass is empty).
type Predictors struct {
	Length   predictor.LengthPredictor
	Duration *predictor.DurationEstimator
	// NewStep makes a deployment's point step after the length model
	// (predictor.NewServedStep for --predictor serve), called once per
	// replica; nil: the program blend alone.
	NewStep func() predictor.ServedStep

	steps map[int]predictor.ServedStep // by replica
	// Segments and ModeChosen count the segments predicted through the
	// step, and of them those whose point was the window mode.
	Segments, ModeChosen int
}

// step is replica r's point step, made when first asked for.
func (p *Predictors) step(r int) predictor.ServedStep {
	st, ok := p.steps[r]
	if !ok && p.NewStep != nil {
		if p.steps == nil {
			p.steps = map[int]predictor.ServedStep{}
		}
		st = p.NewStep()
		p.steps[r] = st
	}
	return st
}

// stats is the run's predictor section of the report (nil without a
// length model).
func (p *Predictors) stats() *report.PredictorStats {
	if p == nil || p.Length == nil {
		return nil
	}
	return &report.PredictorStats{Segments: p.Segments, ModeChosen: p.ModeChosen}
}

// toolTimeLevels are the duration quantiles a forecast's Distribution holds.
var toolTimeLevels = []float64{0.5, 0.9} // the quantiles DurationEstimator tracks

// forecast fills the predicted view of the call's current segment, with the
// predictors' distributions when they have them.
func (p *Predictors) forecast(c *scriptCall, s *engine.Sequence, truth engine.Prediction) (engine.Prediction, *engine.Distribution) {
	pred := truth
	pred.After = 0
	seg := &c.call.Segments[c.seg]
	var dist *engine.Distribution
	if p.Length != nil {
		c.in = segmentInput(c, s.NumTokens())
		n, probs := p.Length.PredictLength(c.in)
		// As serve: the model, the model blended with the program's own
		// segments so far, and the history baseline, mixed; then the
		// mixture's point or the window mode, by order. Kept for
		// learnSegment, as serve keeps it until the segment ends.
		c.served = p.step(c.replica).Predict(c.prog.blend, c.in, n, probs, overflowTokens(p.Length))
		c.predicted = true
		p.Segments++
		if c.served.ModeChosen {
			p.ModeChosen++
		}
		probs = c.served.Dist
		pred.Decode = max(1, c.served.Point-c.decoded)
		if len(probs) == predictor.NumClasses {
			dist = &engine.Distribution{LengthProbs: probs, LengthBinWidth: predictor.BinWidth,
				OverflowTokens: overflowTokens(p.Length), Decoded: c.decoded}
		}
	}
	if truth.HasTool && p.Duration != nil {
		pred.ToolTime = p.Duration.PredictDuration(seg.Tool)
		if dist != nil {
			for _, q := range toolTimeLevels {
				if v, ok := p.Duration.Quantile(seg.Tool, q); ok {
					dist.ToolTimeLevels = append(dist.ToolTimeLevels, q)
					dist.ToolTimeQuantiles = append(dist.ToolTimeQuantiles, v)
				}
			}
		}
	}
	return pred, dist
}

// overflowTokens is the value a length model gives its overflow bin.
func overflowTokens(l predictor.LengthPredictor) int {
	switch m := l.(type) {
	case *predictor.Model:
		return m.OverflowTokens()
	case predictor.GoClassifier:
		return m.OverflowTokens
	case *predictor.OnlineLength:
		return m.OverflowTokens()
	case *MemoLength:
		return m.OverflowTokens()
	}
	return predictor.DefaultOverflowTokens
}

// segmentInput is what the length predictor knows of c's current segment
// with promptTokens in context.
func segmentInput(c *scriptCall, promptTokens int) predictor.Input {
	lastTool := ""
	if c.seg > 0 {
		lastTool = c.call.Segments[c.seg-1].Tool
	}
	return predictor.Input{
		PromptTokens: promptTokens,
		ToolNames:    c.prog.offered(),
		LastTool:     lastTool,
		History:      c.prog.history,
	}
}

// onlineLearner is a length predictor that learns from finished segments
// (predictor.OnlineLength, as serve runs it).
type onlineLearner interface {
	Learn(predictor.TraceRecord)
}

// learnSegment teaches the run's point step (the program's blend, the
// replica's mixture and window modes: predictor.ServedStep) and an online
// length predictor c's segment that just finished (s has generated it),
// with what forecast predicted for it; the driver calls it before the
// program's history takes the segment in.
func (p *Predictors) learnSegment(c *scriptCall, s *engine.Sequence) {
	if p == nil || p.Length == nil {
		return
	}
	in := c.in
	if !c.predicted { // forecast always runs first; defensively, as it would
		in = segmentInput(c, s.NumTokens()-c.decoded)
		n, probs := p.Length.PredictLength(in)
		c.served = p.step(c.replica).Predict(c.prog.blend, in, n, probs, overflowTokens(p.Length))
	}
	c.predicted = false
	seg := c.call.Segments[c.seg]
	c.prog.blend = p.step(c.replica).Observe(c.prog.blend, in, c.served, c.decoded, seg.Tool)
	l, ok := p.Length.(onlineLearner)
	if !ok {
		return
	}
	l.Learn(predictor.TraceRecord{Source: "bench", Program: c.prog.id, Segment: c.prog.history.Calls,
		Input: in, PreToolOutputTokens: c.decoded, Tool: seg.Tool, PredictedTokens: max(c.served.Point, 1)})
}

// learnTool teaches the duration statistics a finished tool call.
func (p *Predictors) learnTool(tool string, seconds float64) {
	if p.Duration != nil && tool != "" {
		p.Duration.Observe(tool, seconds)
	}
}

// offered is programTools of the program, derived once per arrival.
func (p *programRun) offered() []string {
	if p.tools == nil {
		p.tools = programTools(p.prog)
		if p.tools == nil {
			p.tools = []string{}
		}
	}
	return p.tools
}

// programTools is the tool set a program's requests offer: the union of
// the sets of the tools its segments call, in first-seen order.
func programTools(prog *workload.Program) []string {
	var out []string
	for _, c := range prog.Calls {
		for _, seg := range c.Segments {
			for _, t := range offeredTools(seg.Tool) {
				if !slices.Contains(out, t) {
					out = append(out, t)
				}
			}
		}
	}
	return out
}

// offeredTools is the tool set a call of an InferCept family is offered, as
// the predictor's training records name them.
func offeredTools(tool string) []string {
	switch tool {
	case infercept.ToolMath, infercept.ToolQA:
		return []string{infercept.ToolMath, infercept.ToolQA}
	case infercept.ToolTTS, infercept.ToolImage:
		return []string{infercept.ToolTTS, infercept.ToolImage}
	case infercept.ToolVirtualEnv:
		return []string{infercept.ToolVirtualEnv}
	case "":
		return nil
	}
	return []string{tool}
}
