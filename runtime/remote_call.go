package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/pitstop-llm/pitstop/models/chat"
	"github.com/pitstop-llm/pitstop/runtime/remote"
	"github.com/pitstop-llm/pitstop/tools"
)

// remoteCall is a chat call served by a backend the runtime does not run
// (Config.Remote): the backend generates each turn; the tool loop, the
// program table, the tenants' limits and the streaming to the client are
// the runtime's, as for a local model. Server-side tool calls run here and
// the continued conversation goes back to the same backend, whose prefix
// cache holds its context (preserve, by affinity).
type remoteCall struct {
	rt     *Runtime
	c      *Call
	req    remote.Request
	server map[string]bool
	res    Result
	pin    string // the backend of the call's last turn
	conv   string // the call's conversation in its program (conversationOf)
	retry  bool   // the request goes back in its conversation (programTable.retries)
	// anonymous: the call gave no program id (its program is its own)
	anonymous    bool
	completeOnce sync.Once

	// the current turn (reset per attempt)
	turnStart   int // len(res.Content) when the turn began
	turnText    strings.Builder
	clientIndex map[int]int
	heldIndex   map[int]bool
	heldDeltas  []Delta
}

// Remote is the router of the backends when the runtime serves remote
// backends (nil otherwise).
func (rt *Runtime) Remote() *remote.Router { return rt.cfg.Remote }

// chatRemote starts a chat call on a remote backend.
func (rt *Runtime) chatRemote(ctx context.Context, req ChatRequest, received time.Time) (*Call, error) {
	if down, retry := rt.cfg.Remote.Unavailable(); down {
		e := errorf(ErrUnavailable, "", "no_backend_available", "no backend is up; the health checks keep trying them")
		e.RetryAfter = retry
		return nil, e
	}
	if req.Model != "" && !rt.remoteServes(req.Model) {
		return nil, errorf(ErrNotFound, "model", "model_not_found", "The model %q does not exist; the backends serve %s.", req.Model, rt.remoteModelList())
	}
	if err := validateRequest(req); err != nil {
		return nil, err
	}
	if err := validateSampling(req); err != nil {
		return nil, err
	}
	if req.Logprobs {
		return nil, errorf(ErrInvalid, "logprobs", "unsupported_value", "logprobs are not passed on to remote backends")
	}
	if aerr := rt.tenants.admit(req.Tenant, received); aerr != nil {
		rt.metrics.tenantRejected.WithLabelValues(tenantLabel(req.Tenant), aerr.Code).Inc()
		return nil, aerr
	}
	offered, server, err := rt.resolveTools(req.Tenant, req.Tools)
	if err != nil {
		rt.tenants.release(req.Tenant)
		return nil, err
	}
	if rt.cfg.OfferTools == OfferRegistered {
		offered, server = rt.offerRegistered(req.Tenant, offered, server)
	}
	choice, err := toolChoiceJSON(req.ToolChoice, offered)
	if err != nil {
		rt.tenants.release(req.Tenant)
		return nil, err
	}
	prompt := estimateTokens(req.Messages, offered)
	rt.tenants.charge(req.Tenant, prompt, received)

	// The call and its remote record are one allocation, and an anonymous
	// call's program id ("call-" and its id) one string with the id.
	cr := &remoteCallRecord{}
	c, rc := &cr.call, &cr.remote
	anonymous := req.Program == ""
	id, program := rt.remoteCallID(anonymous), req.Program
	if anonymous {
		id, program = id[len(anonPrefix):], id
	}
	*c = Call{rt: rt, id: id, program: program, tenant: req.Tenant,
		stream: req.Stream, created: received, notify: make(chan struct{}, 1), done: make(chan struct{}), model: req.Model}
	c.key = programKey(c.tenant, c.program)
	c.toolCtx, c.toolCancel = context.WithCancel(context.Background())
	c.complete = rc.complete

	*rc = remoteCall{rt: rt, c: c, server: server, anonymous: anonymous}
	rc.req = remote.Request{Model: req.Model, Program: c.key, Thread: req.Thread, Messages: req.Messages, Tools: offered,
		ToolChoice: choice, MaxTokens: req.MaxTokens, Temperature: req.Temperature, TopP: req.TopP, Seed: req.Seed, Stop: req.Stop,
		ResponseFormat: responseFormatJSON(req.ResponseFormat), PromptTokens: prompt, Buffered: !req.Stream,
		CacheSalt: rt.salter.wire(c.tenant, req.CacheSalt)}
	if !anonymous {
		// The backend sees one client, the router: another tenant's program
		// of the same id must not share its program there.
		rc.req.ProgramID = req.Program
		if c.tenant != "" {
			rc.req.ProgramID = clip(c.tenant+"/"+req.Program, 256)
		}
	}
	if len(offered) > 0 {
		p := req.ParallelToolCalls
		rc.req.ParallelToolCalls = &p
	}
	rc.conv = conversationOf(req.Thread, req.Messages)
	hist, _ := rt.programs.history(c.key, rc.conv, startsOver(req.Messages))
	rc.retry = rt.programs.retries(c.key, rc.conv, turnPrefixes(req.Messages))
	rc.req.PredictedDecode = int(hist.MeanOutputTokens)
	rc.res = Result{ID: c.id, Program: c.program, Model: req.Model, Created: received}
	rc.res.Timing.Received = received

	rt.mu.Lock()
	if rt.closed {
		rt.mu.Unlock()
		rt.tenants.release(req.Tenant)
		return nil, errorf(ErrUnavailable, "", "server_shutting_down", "the runtime is shutting down")
	}
	rt.calls[c] = struct{}{}
	rt.mu.Unlock()
	gapTools, gap := rt.programs.arrive(c.key, c.program, c.tenant, req.Thread, anonymous, received)
	if len(gapTools) > 0 {
		rt.durations.Observe(clientToolKey(c.tenant, gapTools[0]), gap.Seconds())
	}
	rt.metrics.countCall(c.tenant)
	c.mu.Lock()
	c.stopWatch = context.AfterFunc(ctx, c.Cancel)
	c.mu.Unlock()
	rc.res.Timing.Submitted = time.Now()
	rc.res.Timing.Outside = rc.res.Timing.Submitted.Sub(received)
	if req.Stream {
		go rc.run() // the caller reads its deltas as they come
	} else {
		c.deferred.Store(rc) // the caller's Wait runs it
	}
	return c, nil
}

// remoteCallRecord is a remote call's Call and remoteCall, allocated
// together: they live and die together.
type remoteCallRecord struct {
	call   Call
	remote remoteCall
}

// remoteCallID is a new call's id, "chatcmpl-" and two base-36 numbers
// (the runtime's start, the call's sequence number), made in one
// allocation; for an anonymous call it is preceded by anonPrefix, the
// call's program id, of which the id is the tail.
func (rt *Runtime) remoteCallID(anonymous bool) string {
	var buf [64]byte
	b := buf[:0]
	if anonymous {
		b = append(b, anonPrefix...)
	}
	b = append(b, "chatcmpl-"...)
	b = strconv.AppendUint(b, uint64(rt.started.UnixNano()&0xffffffff), 36)
	b = strconv.AppendUint(b, rt.nextID.Add(1), 36)
	return string(b)
}

// complete ends the call once (Call.complete).
func (rc *remoteCall) complete(r Result) {
	rc.completeOnce.Do(func() { rc.rt.completeCall(rc.c, r) })
}

// run drives the call's turns to its end.
func (rc *remoteCall) run() {
	rt, c := rc.rt, rc.c
	res := &rc.res
	for turn := 0; ; turn++ {
		rc.startTurn()
		rep, err := rt.cfg.Remote.Generate(c.toolCtx, &rc.req, rc.pin, rc.event)
		if err != nil {
			res.Err = remoteError(err)
			break
		}
		rc.pin = rep.Backend
		tool := ""
		if len(rep.ToolCalls) > 0 {
			tool = rep.ToolCalls[0].Name
		}
		rt.programs.segment(c.key, rc.conv, rep.Usage.CompletionTokens, tool, rc.req.PredictedDecode, rc.retry && turn == 0)
		if rep.Model != "" {
			res.Model = rep.Model
		}
		if turn == 0 {
			res.Usage.PromptTokens = rep.Usage.PromptTokens
			res.Usage.CachedTokens = max(rep.Usage.CachedTokens, 0)
		}
		res.Usage.CompletionTokens += rep.Usage.CompletionTokens
		text := rc.turnText.String()
		calls := rep.ToolCalls
		for i := range calls {
			if calls[i].ID == "" {
				calls[i].ID = fmt.Sprintf("call_%s_%d_%d", c.id, len(res.Rounds), i)
			}
		}
		if len(calls) == 0 {
			res.FinishReason = rep.FinishReason
			break
		}
		serverSide := true
		for _, tc := range calls {
			serverSide = serverSide && rc.server[tc.Name]
		}
		if !serverSide {
			c.push(rc.heldDeltas...)
			res.ToolCalls, res.FinishReason = calls, "tool_calls"
			break
		}
		if len(res.Rounds) >= rt.cfg.MaxToolRounds {
			res.Err = errorf(ErrToolLoop, "", "tool_round_limit_exceeded",
				"the model called tools in %d rounds in one call, more than the limit of %d; the call was stopped (last calls: %s)",
				len(res.Rounds)+1, rt.cfg.MaxToolRounds, describeCalls(calls))
			break
		}
		if !rc.toolRound(rep, strings.TrimSpace(text), calls) {
			res.Err = errorf(ErrCancelled, "", "cancelled", "the call was cancelled")
			break
		}
	}
	if res.Err == nil && c.toolCtx.Err() != nil {
		res.Err = errorf(ErrCancelled, "", "cancelled", "the call was cancelled")
	}
	if res.Err != nil && AsError(res.Err).Kind == ErrCancelled {
		res.FinishReason = ""
	}
	if rc.anonymous {
		// No later call has this program: the router's rank and home for
		// it would only grow its tables (a call each, kept for the
		// router's ProgramTTL: 900,000 entries at 1,000 calls/s) and the
		// scans that expire them.
		rt.cfg.Remote.ProgramDone(c.key)
	}
	res.Timing.Finished = time.Now()
	c.complete(*res)
}

// startTurn starts a turn.
func (rc *remoteCall) startTurn() {
	rc.turnStart = len(rc.res.Content)
	rc.resetTurn()
}

// resetTurn voids what the current turn produced so far (its backend
// failed before any of it reached the client).
func (rc *remoteCall) resetTurn() {
	rc.res.Content = rc.res.Content[:rc.turnStart]
	rc.turnText.Reset()
	// The maps are made by the turn's first tool call: most turns have none.
	rc.clientIndex, rc.heldIndex, rc.heldDeltas = nil, nil, nil
}

// toolRound runs a turn's server-side tool calls, as runRound does for a
// local model, and appends the turn and the results to the conversation.
// It returns false when the call was cancelled meanwhile.
func (rc *remoteCall) toolRound(rep remote.Reply, text string, calls []chat.ToolCall) bool {
	rt, c := rc.rt, rc.c
	var expected float64
	for _, tc := range calls {
		expected = max(expected, rt.durations.PredictDuration(rt.toolStatsKey(c.tenant, tc.Name)))
	}
	round := Round{Index: len(rc.res.Rounds), Predicted: time.Duration(expected * float64(time.Second)), Handling: "preserve",
		HandlingReason: fmt.Sprintf("remote backend %s (%s): the router does not own its KV; the call's next turn goes back to the same backend, whose prefix cache holds the context (preserve by affinity)", rep.Backend, rt.remoteKind(rep.Backend))}
	if h, why := rt.cfg.Remote.ToolWait(c.toolCtx, c.key, rep.Backend, round.Predicted); h != "" {
		round.Handling, round.HandlingReason = h, "remote backend "+rep.Backend+": "+why
	}
	c.push(Delta{Kind: DeltaToolRoundStart, Round: roundStarted(round, calls)})
	tcalls := make([]tools.Call, len(calls))
	for i, tc := range calls {
		tcalls[i] = tools.Call{ID: tc.ID, Name: tc.Name, Arguments: tc.Arguments, Scope: c.tenant}
	}
	start := time.Now()
	results := rt.exec.RunAll(c.toolCtx, tcalls)
	round.Duration = time.Since(start)
	if c.toolCtx.Err() != nil {
		return false
	}
	round.Calls = make([]ToolRun, len(results))
	msgs := make([]chat.Message, 0, len(results)+1)
	msgs = append(msgs, chat.Message{Role: chat.RoleAssistant, Content: text, ToolCalls: calls})
	resultTokens := 0
	for i, r := range results {
		round.Calls[i] = ToolRun{ID: r.CallID, Name: calls[i].Name, Arguments: calls[i].Arguments,
			Content: r.Content, IsError: r.IsError, Truncated: r.Truncated, Cached: r.Cached, Duration: r.Duration()}
		msgs = append(msgs, chat.Message{Role: chat.RoleTool, Content: r.Content, ToolCallID: r.CallID, Name: calls[i].Name})
		resultTokens += (len(r.Content) + 3) / 4
	}
	rt.metrics.toolRounds.Inc()
	actual, pred := round.Duration.Seconds(), round.Predicted.Seconds()
	rt.metrics.predErr.WithLabelValues(calls[0].Name).Observe(math.Abs(pred - actual))
	rt.metrics.tokens.WithLabelValues("tool_result").Add(float64(resultTokens))
	rc.req.Messages = append(rc.req.Messages[:len(rc.req.Messages):len(rc.req.Messages)], msgs...)
	rc.req.PromptTokens += rep.Usage.CompletionTokens + resultTokens
	rc.res.Usage.ToolResultTokens += resultTokens
	rc.res.Usage.PromptTokens += rep.Usage.CompletionTokens + resultTokens
	rc.res.Timing.Tools += round.Duration
	rc.res.Rounds = append(rc.res.Rounds, round)
	c.push(Delta{Kind: DeltaToolRound, Round: &rc.res.Rounds[len(rc.res.Rounds)-1]})
	return true
}

// event streams a backend's event to the client: content, and client
// tool calls; server-side calls (and those after one, to keep indexes in
// order) are held until the turn ends. It reports whether the event went
// to the client (a streamed call's content or client tool call, or a
// backend's tool round), which fixes the turn to its backend.
func (rc *remoteCall) event(e remote.Event) bool {
	c := rc.c
	switch e.Kind {
	case remote.EventRestart:
		rc.resetTurn()
	case remote.EventContent:
		t := e.Text
		if rc.turnText.Len() == 0 && rc.res.Content != "" {
			t = "\n\n" + strings.TrimLeft(t, " \t\r\n")
		}
		rc.turnText.WriteString(t)
		rc.res.Content += t
		c.push(Delta{Kind: DeltaContent, Text: t})
		return c.stream
	case remote.EventBackendToolRound:
		// A pitstop backend ran its own tools inside this turn: the round
		// is the call's, with the backend's handling of its KV.
		var r Round
		if json.Unmarshal([]byte(e.Text), &r) != nil {
			return true
		}
		r.Index = len(rc.res.Rounds)
		r.HandlingReason = "on backend " + e.Backend + ": " + r.HandlingReason
		rc.res.Rounds = append(rc.res.Rounds, r)
		rc.res.Timing.Tools += r.Duration
		c.push(Delta{Kind: DeltaToolRound, Round: &rc.res.Rounds[len(rc.res.Rounds)-1]})
		return true
	case remote.EventToolCallStart:
		if rc.clientIndex == nil {
			rc.clientIndex, rc.heldIndex = map[int]int{}, map[int]bool{}
		}
		idx := len(rc.clientIndex)
		rc.clientIndex[e.Index] = idx
		d := Delta{Kind: DeltaToolCallStart, Index: idx, ID: e.ID, Name: e.Name}
		if rc.server[e.Name] || len(rc.heldIndex) > 0 {
			rc.heldIndex[e.Index] = true
			rc.heldDeltas = append(rc.heldDeltas, d)
			return false
		}
		c.push(d)
		return c.stream
	case remote.EventToolCallArgs:
		d := Delta{Kind: DeltaToolCallArgs, Index: rc.clientIndex[e.Index], Text: e.Text}
		if rc.heldIndex[e.Index] {
			rc.heldDeltas = append(rc.heldDeltas, d)
			return false
		}
		c.push(d)
		return c.stream
	}
	return false
}

// remoteError maps a router error to the runtime's.
func remoteError(err error) *Error {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return errorf(ErrCancelled, "", "cancelled", "the call was cancelled")
	}
	var re *remote.Error
	if !errors.As(err, &re) {
		return errorf(ErrInternal, "", "internal_error", "%v", err)
	}
	switch re.Kind {
	case remote.ErrNoBackend:
		e := errorf(ErrUnavailable, "", "no_backend_available", "%s", re.Error())
		e.RetryAfter = re.RetryAfter
		return e
	case remote.ErrRejected:
		return errorf(ErrInvalid, "", "backend_rejected", "%s", re.Error())
	case remote.ErrBackendFailed:
		return errorf(ErrBadGateway, "", "backend_failed", "the backend failed while the reply was streaming: %s", re.Error())
	default:
		return errorf(ErrBadGateway, "", "bad_backend_reply", "%s", re.Error())
	}
}

// remoteServes reports whether some backend serves a model.
func (rt *Runtime) remoteServes(model string) bool { return rt.cfg.Remote.Serves(model) }

func (rt *Runtime) remoteModelList() string {
	var ids []string
	for _, m := range rt.cfg.Remote.Models() {
		ids = append(ids, strconv.Quote(m.ID))
	}
	if len(ids) == 0 {
		return "none now (no backend is up)"
	}
	return strings.Join(ids, ", ")
}

func (rt *Runtime) remoteKind(backend string) remote.Kind {
	for _, b := range rt.cfg.Remote.Backends() {
		if b.Name == backend {
			return b.Kind
		}
	}
	return ""
}

// estimateTokens is a conversation's length in tokens as the balancer
// needs it: about 4 bytes a token, as with common BPE vocabularies, and
// the tools' definitions, which chat templates render into the prompt.
func estimateTokens(msgs []chat.Message, offered []chat.Tool) int {
	n := 0
	for _, t := range offered {
		n += 16 + (len(t.Name)+len(t.Description)+len(t.Parameters))/4
	}
	for _, m := range msgs {
		n += 4 + len(m.Content)/4
		for _, tc := range m.ToolCalls {
			n += 4 + (len(tc.Name)+len(tc.Arguments))/4
		}
	}
	return n
}

// toolChoiceJSON is OpenAI's tool_choice of a request (nil: the default).
func toolChoiceJSON(choice ToolChoice, offered []chat.Tool) (json.RawMessage, error) {
	switch choice.Mode {
	case "":
		return nil, nil
	case ChoiceAuto, ChoiceNone:
		return json.RawMessage(`"` + string(choice.Mode) + `"`), nil // a bare word: nothing to escape
	case ChoiceRequired, ChoiceFunction:
		if len(offered) == 0 {
			return nil, errorf(ErrInvalid, "tool_choice", "invalid_value", "tool_choice %q needs tools", choice.Mode)
		}
		if choice.Mode == ChoiceRequired {
			return json.RawMessage(`"required"`), nil
		}
		return json.Marshal(map[string]any{"type": "function", "function": map[string]string{"name": choice.Name}})
	}
	return nil, errorf(ErrInvalid, "tool_choice", "invalid_value", "unknown tool_choice %q (valid: none, auto, required, or a function)", choice.Mode)
}

// responseFormatJSON is OpenAI's response_format of a request (nil: text).
func responseFormatJSON(rf *ResponseFormat) json.RawMessage {
	if rf == nil || rf.Type == "" || rf.Type == "text" {
		return nil
	}
	m := map[string]any{"type": rf.Type}
	if rf.Type == "json_schema" {
		js := map[string]any{"name": rf.Name, "strict": rf.Strict}
		if len(rf.Schema) > 0 {
			js["schema"] = rf.Schema
		}
		m["json_schema"] = js
	}
	data, _ := json.Marshal(m)
	return data
}
