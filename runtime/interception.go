package runtime

import (
	"math"
	"time"

	"github.com/pitstop-llm/pitstop/models/chat"
	"github.com/pitstop-llm/pitstop/tools"
)

// runRound runs one turn's server-side tool calls in parallel (its own
// goroutine), renders their results with the chat template, tokenizes them
// and resumes the paused sequence on the engine goroutine.
func (rt *Runtime) runRound(s *seqCtl, p *pendingRound, round Round) {
	c := s.call
	calls := make([]tools.Call, len(p.calls))
	for i, tc := range p.calls {
		calls[i] = tools.Call{ID: tc.ID, Name: tc.Name, Arguments: tc.Arguments}
	}
	start := time.Now()
	results := rt.exec.RunAll(c.toolCtx, calls)
	end := time.Now()
	round.Duration = end.Sub(start)
	round.Calls = make([]ToolRun, len(results))
	msgs := make([]chat.Message, len(results))
	for i, r := range results {
		round.Calls[i] = ToolRun{ID: r.CallID, Name: p.calls[i].Name, Arguments: p.calls[i].Arguments,
			Content: r.Content, IsError: r.IsError, Truncated: r.Truncated, Cached: r.Cached, Duration: r.Duration()}
		msgs[i] = chat.Message{Role: chat.RoleTool, Content: r.Content, ToolCallID: r.CallID, Name: p.calls[i].Name}
	}
	// The results are tokenized as plain text (a tool's "<|im_end|>" stays
	// text), at the places the template reports.
	text, err := rt.tmpl.RenderToolResultsSpans(msgs, true)
	if err != nil { // cannot happen with role "tool" messages; keep the call alive anyway
		rt.log.Error("rendering tool results", "call", c.id, "err", err)
		text = chat.Rendered{Text: err.Error(), Spans: []chat.Span{{End: len(err.Error()), Kind: chat.SpanContent, Role: chat.RoleTool}}}
	}
	toks, err := text.Encode(rt.tok)
	if err != nil { // spans from the template are in order and in bounds
		rt.log.Error("tokenizing tool results", "call", c.id, "err", err)
		toks = rt.tok.Encode(text.Text, false)
	}
	prepared := time.Now()

	rt.metrics.toolRounds.Inc()
	actual := round.Duration.Seconds()
	pred := p.predicted.Seconds()
	tool := p.calls[0].Name
	rt.metrics.predErr.WithLabelValues(tool).Observe(math.Abs(pred - actual))
	if actual > 0 {
		rt.metrics.predRelErr.WithLabelValues(tool).Observe(math.Abs(pred-actual) / actual)
	}
	rt.metrics.tokens.WithLabelValues("tool_result").Add(float64(len(toks)))

	rt.eng.Post(func() {
		if s.done || s.seq == nil {
			return // cancelled while the tools ran
		}
		s.timing.Tools += round.Duration
		s.timing.Outside += prepared.Sub(end)
		round.HandlingLater, s.handlingLater, s.pausedAt = s.handlingLater, nil, time.Time{}
		if n := s.seq.NumTokens() + len(toks) + 1; rt.ctxCap > 0 && n > rt.ctxCap {
			s.failure = errorf(ErrContextLength, "", "context_length_exceeded",
				"the tool results of round %d do not fit the model's context: %d tokens with them, the maximum is %d", round.Index+1, n, rt.ctxCap)
			rt.eng.Cancel(s.seq.ID())
			return
		}
		s.resumed(p, round, msgs, len(toks))
		if err := rt.eng.Resume(s.seq.ID(), toks); err != nil {
			rt.log.Error("resuming after tools", "call", c.id, "err", err)
			s.failure = errorf(ErrInternal, "", "internal_error", "resuming after tools: %v", err)
			rt.eng.Cancel(s.seq.ID())
		}
	})
}
