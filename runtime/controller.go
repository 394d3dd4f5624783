package runtime

import (
	"fmt"
	"strings"
	"time"

	"github.com/pitstop-llm/pitstop/engine"
	"github.com/pitstop-llm/pitstop/models/chat"
	"github.com/pitstop-llm/pitstop/predictor"
)

// seqCtl is the engine.Controller of one call's sequence: it reads every
// token the model writes through the streaming decoder and the template's
// streaming tool-call parser with the token's provenance (a marker token
// opens a tool call, text that spells one is content; chat.TokenReader),
// streams content and client tool calls out, and decides at the end of a
// turn whether the call finishes or pauses for server-side tools. All its state is touched on the engine goroutine only
// (the first turn is prepared before the call is submitted).
type seqCtl struct {
	rt        *Runtime
	call      *Call
	ref       *seqRef
	seq       *engine.Sequence
	turn      Turn
	server    map[string]bool // offered tools that run server-side
	offered   map[string]bool // tools offered to the model: only their calls are tool calls
	thread    string
	anonymous bool

	// the current turn
	script     []int32 // forced tokens of a scripted model, or nil
	scriptTool float64 // the script's turn ends in server-side tools taking this long; -1: it does not
	pos        int
	reader     *chat.TokenReader
	turnText   strings.Builder // content of this turn
	wsHold     string          // whitespace held back: it may only separate tool calls
	turnCalls  []chat.ToolCall
	held       map[int]bool // parser call indexes whose deltas are held
	heldDeltas []Delta
	// undeclared are the parser's call indexes of tools the request did not
	// offer: they become text (undeclaredText); clientIndex renumbers the
	// others 0, 1, ... for the client.
	undeclared  map[int]bool
	clientIndex map[int]int

	// constrained decoding (nil: none) and logprobs; pendingLP is the
	// executor's entry for the token it just drew (Sampled).
	cons      *constraint
	wantLP    bool
	topLP     int
	pendingLP *TokenLogprob
	logprobs  []TokenLogprob
	inCall    bool // between a tool call's open and close markers

	// stop sequences (the request's stop): content is held while it may
	// be the start of one; stopped once one was written.
	stopper stopMatcher
	stopped bool

	// the whole call
	content      strings.Builder
	generated    int
	maxTokens    int
	promptTokens int
	toolTokens   int
	rounds       []Round
	pending      *pendingRound
	toolCalls    []chat.ToolCall // returned to the client
	finish       string
	failure      *Error
	done         bool
	timing       Timing
	// parking: the turn ended with client tool calls and the sequence
	// pauses across the client's gap; handedOff: the call was completed
	// at the park, the sequence lives on for the program's next call.
	parking   bool
	handedOff bool
	park      *parkEntry

	// set by the executor at the call's first prefill
	prefilled     bool
	cachedAtStart int

	// sampling of a real model's tokens (engine.Request.Sampling)
	sampling engine.Sampling
	// handling changes of the current tool pause (EvHandled)
	pausedAt      time.Time
	handlingLater []string

	// trace segments
	segGenStart  int
	segPrompt    int
	lastMessage  string
	systemPrompt string
	conv         string                 // the call's conversation in its program (conversationOf)
	history      predictor.History      // the conversation's, then the call's own segments
	blend        predictor.ProgramBlend // the conversation's own evidence on the length predictor
	predModel    int                    // the length predictor's output length of the current segment
	predServed   predictor.ServedPoint  // the served step's points, which observeLength books (predictor.ServedStep)
	predTokens   int                    // the mixture's point or the mode, by order (what policies see)
	predDist     *engine.Distribution   // the mixture's distribution (no length part without a model; tool part at the pause)
	// lastToolClass is the argument class (predictor.ArgumentClass) of the
	// call whose result the next segment reads (the previous segment's, or
	// for a call's first segment the request's, answeredCall): the class
	// only, never the arguments, which may hold a tenant's data.
	lastToolClass string
	requestTool   string // the tool whose result ends the request ("": none)
	// retry: the request goes back to an earlier point of its
	// conversation (programTable.retries); its first segment is a retry.
	retry    bool
	segments []predictor.TraceRecord
}

// pendingRound is a turn's server-side tool calls waiting to run.
type pendingRound struct {
	calls     []chat.ToolCall
	text      string
	predicted time.Duration
}

// seqRef is the engine.Controller of a sequence: it forwards to the
// seqCtl of the call the sequence serves now. A sequence parked across a
// client's tool calls is handed to the program's next call.
type seqRef struct{ cur *seqCtl }

func (r *seqRef) Next(s *engine.Sequence, sampled int32) engine.Action { return r.cur.Next(s, sampled) }
func (r *seqRef) Forecast(s *engine.Sequence) engine.Forecast          { return r.cur.Forecast(s) }

func newSeqCtl(rt *Runtime, c *Call, turn Turn, server map[string]bool, maxTokens, promptTokens int) *seqCtl {
	offered := make(map[string]bool, len(turn.Tools))
	for _, t := range turn.Tools {
		offered[t.Name] = true
	}
	return &seqCtl{rt: rt, call: c, turn: turn, server: server, offered: offered, maxTokens: maxTokens,
		promptTokens: promptTokens, segPrompt: promptTokens}
}

// startTurn prepares the next assistant turn.
func (s *seqCtl) startTurn() {
	s.script = s.rt.model.Script(&s.turn)
	s.scriptTool = 0
	if s.script != nil {
		// A scripted model knows its turn: the forecast tells the policy
		// whether it ends in server-side tools and how long they take.
		res := chat.ParseTokens(s.rt.tmpl, s.rt.tok, s.rt.markup, s.script,
			chat.WithProvenance(s.rt.prov), chat.WithIDs(func(int) string { return "" }))
		all := len(res.ToolCalls) > 0
		for _, c := range res.ToolCalls {
			all = all && s.server[c.Name]
			s.scriptTool = max(s.scriptTool, s.rt.classDurations.Predict(s.rt.toolStatsKey(s.call.tenant, c.Name), c.Arguments))
		}
		if !all {
			s.scriptTool = -1
		}
	}
	s.pos = 0
	if s.cons != nil {
		s.cons.startTurn()
	}
	s.inCall = false
	s.reader = s.rt.newTokenReader()
	s.turnText.Reset()
	s.wsHold = ""
	s.turnCalls = nil
	s.held = nil
	s.heldDeltas = nil
	s.undeclared = nil
	s.clientIndex = nil
	s.segGenStart = s.generated
}

// Forecast implements engine.Controller. The predicted output length is
// the length predictor's (Config.Length), whatever the model. A scripted
// model knows its turn: its length, and whether the turn ends in
// server-side tools and how long they take, are the forecast's truth (for
// oracle policies), and the tool part of the prediction.
func (s *seqCtl) Forecast(*engine.Sequence) engine.Forecast {
	var f engine.Forecast
	if s.script != nil {
		f.Truth.Decode = max(len(s.script)-s.pos, 1)
		if s.scriptTool >= 0 {
			f.Truth.HasTool, f.Truth.ToolTime, f.Truth.ToolReturn = true, s.scriptTool, 32
		}
		f.HasTruth = true
		f.Predicted = f.Truth
	}
	f.Predicted.Decode = max(s.predTokens-(s.generated-s.segGenStart), 1)
	f.Dist = s.predDist
	return f
}

// Next implements engine.Controller.
func (s *seqCtl) Next(_ *engine.Sequence, sampled int32) engine.Action {
	tok := sampled
	if s.script != nil {
		tok = s.rt.eos
		if s.pos < len(s.script) {
			tok = s.script[s.pos]
			s.pos++
		}
	}
	if s.cons != nil {
		if s.script != nil && !s.cons.allows(tok) {
			// A scripted model has no distribution to mask: a forced token
			// outside the grammar fails the call rather than break it.
			s.failure = errorf(ErrInternal, "", "grammar_violation",
				"the scripted model wrote token %d (%q), which %s does not allow here", tok, s.rt.tok.TokenBytes(tok), s.cons.describe())
			return engine.Action{Token: tok, Kind: engine.Finish}
		}
		if err := s.cons.accept(tok); err != nil {
			s.failure = errorf(ErrInternal, "", "grammar_violation", "%s: %v", s.cons.describe(), err)
			return engine.Action{Token: tok, Kind: engine.Finish}
		}
	}
	s.logprob(tok)
	s.generated++
	s.rt.metrics.tokens.WithLabelValues("generated").Inc()
	if s.rt.stop[tok] {
		return s.endTurn(tok)
	}
	s.events(s.reader.Add(tok))
	if s.stopped {
		// A stop sequence was written: the call ends before it (the turn's
		// tool calls, if any came before it, are dropped with the rest).
		s.finish = "stop"
		return engine.Action{Token: tok, Kind: engine.Finish}
	}
	if s.generated >= s.maxTokens || (s.rt.ctxCap > 0 && s.seq != nil && s.seq.NumTokens()+2 > s.rt.ctxCap) {
		// The token budget is spent, or the model's context is full after
		// this token (no position for the next one).
		s.closeTurn()
		s.finish = "length"
		return engine.Action{Token: tok, Kind: engine.Finish}
	}
	return engine.Action{Token: tok}
}

// Mask implements engine.SamplingHook: the constraint's mask.
func (s *seqCtl) Mask(logits []float32) {
	if s.cons != nil {
		// The budget the grammar closes the output within: max_tokens, and
		// the context's room (Next ends the call once a token leaves no
		// position for the next one).
		left := s.maxTokens - s.generated
		if s.rt.ctxCap > 0 && s.seq != nil {
			left = min(left, s.rt.ctxCap-s.seq.NumTokens())
		}
		s.cons.left = max(left, 1)
		s.cons.apply(logits)
	}
}

// Sampled implements engine.SamplingHook: the drawn token's logprobs.
func (s *seqCtl) Sampled(tok int32, logits []float32) {
	if s.wantLP {
		e := logprobsOf(s.rt.tok, logits, tok, s.topLP)
		s.pendingLP = &e
	}
}

// logprob books the logprobs of a content token (not a stop token, a
// marker or a token inside a tool call).
func (s *seqCtl) logprob(tok int32) {
	pending := s.pendingLP
	s.pendingLP = nil
	if !s.wantLP {
		return
	}
	if m, ok := s.rt.markup[tok]; ok {
		s.inCall = m == s.rt.tmpl.ToolCallMarkup().Open
		return
	}
	if s.rt.stop[tok] || s.inCall {
		return
	}
	var e TokenLogprob
	if pending != nil && s.script == nil {
		e = *pending
	} else {
		e = certain(s.rt.tok, tok, s.topLP)
	}
	s.logprobs = append(s.logprobs, e)
	s.call.push(Delta{Kind: DeltaLogprobs, Logprobs: []TokenLogprob{e}})
}

// closeTurn flushes the decoder and the parser.
func (s *seqCtl) closeTurn() {
	s.events(s.reader.Close())
	if !s.stopped {
		s.emit(s.stopper.flush())
	}
}

// endTurn decides what a turn's end token means.
func (s *seqCtl) endTurn(tok int32) engine.Action {
	s.closeTurn()
	calls := s.turnCalls
	if len(calls) == 0 {
		s.finish = "stop"
		return engine.Action{Token: tok, Kind: engine.Finish}
	}
	serverSide := true
	for _, c := range calls {
		serverSide = serverSide && s.server[c.Name]
	}
	if !serverSide {
		// Back to the client, the whole turn: its tool calls (server-side
		// ones included: the client may run them with /v1/tools/{name}/invoke).
		s.call.push(s.heldDeltas...)
		s.heldDeltas = nil
		s.toolCalls = calls
		s.finish = "tool_calls"
		if s.rt.cfg.ClientToolTTL > 0 && !s.anonymous {
			// The call ends for the client; the sequence pauses until the
			// program's next call brings the results (a tool call of
			// the client's duration, handled like any other).
			s.parking = true
			expected := s.rt.durations.PredictDuration(clientToolKey(s.call.tenant, calls[0].Name))
			s.forecastToolTime(calls[:1], func(c chat.ToolCall, q float64) (float64, bool) {
				return s.rt.durations.Quantile(clientToolKey(s.call.tenant, c.Name), q)
			})
			return engine.Action{Token: tok, Kind: engine.Pause, Tool: engine.ToolCall{Name: clientToolKey(s.call.tenant, describeCalls(calls)), Expected: expected}}
		}
		return engine.Action{Token: tok, Kind: engine.Finish}
	}
	if len(s.rounds) >= s.rt.cfg.MaxToolRounds {
		s.failure = errorf(ErrToolLoop, "", "tool_round_limit_exceeded",
			"the model called tools in %d rounds in one call, more than the limit of %d; the call was stopped (last calls: %s)",
			len(s.rounds)+1, s.rt.cfg.MaxToolRounds, describeCalls(calls))
		return engine.Action{Token: tok, Kind: engine.Finish}
	}
	var expected float64
	for _, c := range calls {
		expected = max(expected, s.rt.classDurations.Predict(s.rt.toolStatsKey(s.call.tenant, c.Name), c.Arguments))
	}
	s.forecastToolTime(calls, func(c chat.ToolCall, q float64) (float64, bool) {
		return s.rt.classDurations.Quantile(s.rt.toolStatsKey(s.call.tenant, c.Name), c.Arguments, q)
	})
	s.pending = &pendingRound{calls: calls, text: strings.TrimSpace(s.turnText.String()),
		predicted: time.Duration(expected * float64(time.Second))}
	return engine.Action{Token: tok, Kind: engine.Pause, Tool: engine.ToolCall{Name: describeCalls(calls), Expected: expected}}
}

// events applies parser events: content is streamed (whitespace held until
// it turns out not to be a separator of tool calls); client tool calls are
// streamed; server-side ones are held.
func (s *seqCtl) events(evs []chat.Event) {
	for i := range evs {
		e := &evs[i]
		switch e.Kind {
		case chat.EventText:
			s.text(e.Text)
		case chat.EventError:
			// A malformed tool call is text the model wrote.
			s.text(e.Raw)
		case chat.EventToolCallStart:
			if !s.offered[e.Name] {
				// A call of a tool the request did not offer is never a
				// tool call: it becomes text at its end.
				if s.undeclared == nil {
					s.undeclared = map[int]bool{}
				}
				s.undeclared[e.Index] = true
				continue
			}
			s.wsHold = ""
			if !s.stopped {
				s.emit(s.stopper.flush())
			}
			if s.clientIndex == nil {
				s.clientIndex = map[int]int{}
			}
			s.clientIndex[e.Index] = len(s.clientIndex)
			d := Delta{Kind: DeltaToolCallStart, Index: s.clientIndex[e.Index], ID: e.ID, Name: e.Name}
			// Server-side calls are held until the turn ends (they go to
			// the client only if the turn does); so are the calls after a
			// held one, so the client sees indexes in order.
			if s.server[e.Name] || len(s.held) > 0 {
				if s.held == nil {
					s.held = map[int]bool{}
				}
				s.held[e.Index] = true
				s.heldDeltas = append(s.heldDeltas, d)
			} else {
				s.call.push(d)
			}
		case chat.EventToolCallArgs:
			if s.undeclared[e.Index] {
				continue
			}
			d := Delta{Kind: DeltaToolCallArgs, Index: s.clientIndex[e.Index], Text: e.Text}
			if s.held[e.Index] {
				s.heldDeltas = append(s.heldDeltas, d)
			} else {
				s.call.push(d)
			}
		case chat.EventToolCallEnd:
			if s.undeclared[e.Index] {
				s.text(undeclaredText(e.Name, e.Arguments))
				continue
			}
			s.turnCalls = append(s.turnCalls, chat.ToolCall{ID: e.ID, Name: e.Name, Arguments: e.Arguments})
		}
	}
}

func (s *seqCtl) text(t string) {
	if strings.TrimSpace(t) == "" {
		s.wsHold += t
		return
	}
	t = s.wsHold + t
	s.wsHold = ""
	if s.stopped {
		return
	}
	t, s.stopped = s.stopper.feed(t)
	s.emit(t)
}

// emit writes content out: to the turn, the call and the stream.
func (s *seqCtl) emit(t string) {
	if t == "" {
		return
	}
	if s.turnText.Len() == 0 && s.content.Len() > 0 {
		t = "\n\n" + strings.TrimLeft(t, " \t\r\n")
	}
	s.turnText.WriteString(t)
	s.content.WriteString(t)
	s.call.push(Delta{Kind: DeltaContent, Text: t})
}

// paused starts the tools of a call that paused at server-side tool calls
// (engine goroutine, from the EvPaused event).
func (s *seqCtl) paused(ev *engine.Event) {
	if s.parking {
		s.parking = false
		s.rt.park(s, ev.Seq.Tool().Expected)
		return
	}
	p := s.pending
	if p == nil {
		return
	}
	s.pending = nil
	round := Round{Index: len(s.rounds), Predicted: p.predicted, Handling: ev.Handling.String(),
		HandlingReason: s.rt.explainHandling(ev.Seq, ev.Handling, ev.Context)}
	s.pausedAt, s.handlingLater = time.Now(), nil
	s.call.push(Delta{Kind: DeltaToolRoundStart, Round: roundStarted(round, p.calls)})
	go s.rt.runRound(s, p, round, ev.Seq.NumTokens())
}

// handled notes a change of the handling while the call's tools run
// (engine goroutine, from the EvHandled event).
func (s *seqCtl) handled(ev *engine.Event) {
	if s.pausedAt.IsZero() {
		return
	}
	s.handlingLater = append(s.handlingLater, fmt.Sprintf("%s after %v", ev.Handling, time.Since(s.pausedAt).Round(10*time.Microsecond)))
}

// resumed appends a finished round to the conversation and starts the next
// turn (engine goroutine, just before engine.Resume).
func (s *seqCtl) resumed(p *pendingRound, round Round, results []chat.Message, resultTokens int) {
	s.turn.Messages = append(s.turn.Messages[:len(s.turn.Messages):len(s.turn.Messages)],
		chat.Message{Role: chat.RoleAssistant, Content: p.text, ToolCalls: p.calls})
	s.turn.Messages = append(s.turn.Messages, results...)
	s.rounds = append(s.rounds, round)
	s.toolTokens += resultTokens
	dur := round.Duration.Seconds()
	s.endSegment(p.calls[0].Name, &dur, resultTokens)
	s.lastToolClass = predictor.ArgumentClass(p.calls[0].Arguments)
	s.lastMessage = clip(results[len(results)-1].Content, 2000)
	s.segPrompt = s.seq.NumTokens() + resultTokens
	s.predictLength()
	s.startTurn()
	s.call.push(Delta{Kind: DeltaToolRound, Round: &s.rounds[len(s.rounds)-1]})
}

// endSegment books a trace record for the segment that just ended.
func (s *seqCtl) endSegment(tool string, toolSeconds *float64, returnTokens int) {
	out := s.generated - s.segGenStart
	in := s.segmentInput()
	idx := s.rt.programs.segment(s.call.key, s.conv, out, tool, s.predModel, in.Retry)
	s.segments = append(s.segments, predictor.TraceRecord{
		Source:              "runtime",
		Program:             s.call.program,
		Thread:              s.conv,
		Segment:             idx,
		Input:               in,
		PreToolOutputTokens: out,
		Tool:                tool,
		ToolDurationS:       toolSeconds,
		ToolReturnTokens:    returnTokens,
		PredictedTokens:     s.predTokens,
	})
	s.rt.length.observe(s.predTokens, s.segments[len(s.segments)-1])
	s.history = s.history.Observe(out, tool)
	s.observeLength(in, out, tool)
}

// result is the call's result as it stands.
func (s *seqCtl) result() Result {
	c := s.call
	r := Result{
		ID: c.id, Program: c.program, Model: s.rt.model.Name(), Created: c.created,
		Content: s.content.String(), ToolCalls: s.toolCalls, FinishReason: s.finish,
		Usage: Usage{
			PromptTokens: s.promptTokens + s.toolTokens, CompletionTokens: s.generated,
			CachedTokens: min(s.cachedAtStart, s.promptTokens), ToolResultTokens: s.toolTokens,
		},
		Rounds: s.rounds, Timing: s.timing, Logprobs: s.logprobs,
	}
	if s.failure != nil {
		r.Err = s.failure
	}
	return r
}

// finished completes the call when its sequence ends (engine goroutine).
func (s *seqCtl) finished(ev *engine.Event) {
	s.done = true
	if s.handedOff { // a parked sequence that expired or was replaced
		if s.park != nil {
			s.rt.unpark(s.park)
		}
		return
	}
	s.timing.Finished = time.Now()
	seq := ev.Seq
	res := s.result()
	switch {
	case s.failure != nil:
	case seq.Cancelled():
		res.Err = errorf(ErrCancelled, "", "cancelled", "the call was cancelled")
	case ev.Err != nil:
		res.Err = errorf(ErrContextLength, "", "context_length_exceeded", "%v", ev.Err)
	case res.FinishReason == "":
		res.FinishReason = "length"
	}
	if p := s.rt.eng.Programs().Get(seq.Program()); p != nil {
		s.rt.programs.engineStats(p.ID, p.Service, p.Wait, p.CriticalPath())
	}
	if res.Err == nil || AsError(res.Err).Kind == ErrToolLoop {
		tool := ""
		if len(res.ToolCalls) > 0 {
			tool = res.ToolCalls[0].Name
		}
		s.endSegment(tool, nil, 0)
		if s.rt.trace != nil {
			recs := s.segments
			go s.rt.trace.write(recs)
		}
	}
	s.call.complete(res)
}
