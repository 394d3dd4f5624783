package runtime

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/pitstop-llm/pitstop/models/chat"
	"github.com/pitstop-llm/pitstop/tools"
)

// runRound runs one turn's server-side tool calls in parallel (its own
// goroutine), renders their results with the chat template, tokenizes them
// and resumes the paused sequence on the engine goroutine. ctxTokens is the
// sequence's context at the pause: results that would not leave the model
// room to answer within its context are cut to fit (fitResults).
func (rt *Runtime) runRound(s *seqCtl, p *pendingRound, round Round, ctxTokens int) {
	c := s.call
	calls := make([]tools.Call, len(p.calls))
	for i, tc := range p.calls {
		calls[i] = tools.Call{ID: tc.ID, Name: tc.Name, Arguments: tc.Arguments, Scope: c.tenant}
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
		if !r.Cached {
			// The executor's observer learnt the tool's duration; its
			// argument class is learnt here, where the arguments are.
			rt.classDurations.ObserveClass(rt.toolStatsKey(c.tenant, p.calls[i].Name), p.calls[i].Arguments, r.Duration().Seconds())
		}
	}
	toks := rt.encodeResults(c, msgs)
	if rt.ctxCap > 0 {
		room := rt.ctxCap - ctxTokens - 1 - answerRoom(rt.ctxCap)
		if len(toks) > room {
			if fitted, kept := rt.fitResults(msgs, room); fitted != nil {
				for i, k := range kept {
					if k >= 0 {
						msgs[i].Content = fitted[i].Content
						round.Calls[i].Content, round.Calls[i].Truncated = fitted[i].Content, true
					}
				}
				toks = rt.encodeResults(c, msgs)
				rt.metrics.resultsCut.Inc()
				rt.log.Info("tool results cut to fit the context", "call", c.id, "round", round.Index+1, "room", room, "tokens", len(toks))
			}
		}
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

// encodeResults renders tool results with the chat template and tokenizes
// them as plain text (a tool's "<|im_end|>" stays text), at the places the
// template reports.
func (rt *Runtime) encodeResults(c *Call, msgs []chat.Message) []int32 {
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
	return toks
}

// answerRoom is the context a call keeps free for the model's answer after
// tool results: an eighth of the context, at most 256 tokens.
func answerRoom(ctxCap int) int { return min(ctxCap/8, 256) }

// fitResults cuts tool results so that, rendered, they take at most room
// tokens: the template's markup is kept whole, and the room left for the
// contents is shared max-min fairly (a short result is kept whole, the long
// ones are cut to equal shares), each cut one ending with a note of what was
// kept. It returns the messages and, per message, the tokens kept (-1: not
// cut); nil when even the markup does not fit.
func (rt *Runtime) fitResults(msgs []chat.Message, room int) ([]chat.Message, []int) {
	empty := slices.Clone(msgs)
	ids := make([][]int32, len(msgs))
	for i := range empty {
		empty[i].Content = ""
		ids[i] = rt.tok.Encode(msgs[i].Content, false)
	}
	markup, err := rt.resultTokens(empty)
	if err != nil {
		return nil, nil
	}
	note := len(rt.tok.Encode(cutNote(1<<20, 1<<20), false)) + 1
	avail := room - len(markup) - note*len(msgs)
	for range 4 { // tokens do not add up exactly across a cut: retry with the excess taken off
		if avail < 0 {
			return nil, nil
		}
		out, kept := slices.Clone(msgs), shares(ids, avail)
		for i := range out {
			if kept[i] >= 0 {
				out[i].Content = strings.ToValidUTF8(rt.tok.Decode(ids[i][:kept[i]]), "") + cutNote(kept[i], len(ids[i]))
			}
		}
		toks, err := rt.resultTokens(out)
		if err != nil {
			return nil, nil
		}
		if len(toks) <= room {
			return out, kept
		}
		avail -= len(toks) - room
	}
	return nil, nil
}

// resultTokens renders tool results and tokenizes them as encodeResults
// does, with the errors returned.
func (rt *Runtime) resultTokens(msgs []chat.Message) ([]int32, error) {
	text, err := rt.tmpl.RenderToolResultsSpans(msgs, true)
	if err != nil {
		return nil, err
	}
	return text.Encode(rt.tok)
}

func cutNote(kept, of int) string {
	return fmt.Sprintf("\n[cut by pitstop to fit the model's context: %d of %d tokens kept]", kept, of)
}

// shares splits avail tokens between contents of len(ids[i]) tokens
// max-min fairly; per content, the tokens kept, or -1 when it fits whole.
func shares(ids [][]int32, avail int) []int {
	order := make([]int, len(ids))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return len(ids[a]) - len(ids[b]) })
	kept := make([]int, len(ids))
	for j, i := range order {
		share := avail / (len(order) - j)
		if n := len(ids[i]); n <= share {
			kept[i] = -1
			avail -= n
			continue
		}
		kept[i] = share
		avail -= share
	}
	return kept
}
