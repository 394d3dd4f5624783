package policy

import "github.com/pitstop-llm/pitstop/engine"

// finalStretch is the deadline lane's end test (PitstopTail
// "aging+warm+final", "aging+warm+first-final"): a call is promoted only if
// its predicted rest has no tool call, so the promotion carries it to its
// end and the device time it buys ends with the call's memory freed.
//
// Why: a deadline is on the call's end. A call with a tool still ahead
// that is promoted gets one segment served early, then pauses holding or
// swapping its context and waits in the rank again for the rest, so the
// promotion buys part of an end-to-end time at the price of memory held
// across the tool; where the device's throughput binds that is what the
// lane's promotions cost (infercept-multi, several tools per call: 5.0
// programs/s with aging+warm, 4.333–4.667 with the lane promoting any
// call, docs/results-policies.md, session 10). A call in its last segment
// (infercept-single after its one tool, any call of azure-code) ends when
// it is served. The predictor says whether a tool is ahead
// (Prediction.HasTool): no threshold.
func finalStretch(s *engine.Sequence) bool { return !s.Forecast().Predicted.HasTool }
