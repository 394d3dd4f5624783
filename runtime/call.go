package runtime

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pitstop-llm/pitstop/engine"
	"github.com/pitstop-llm/pitstop/models/chat"
	"github.com/pitstop-llm/pitstop/tools"
)

// Call is one chat call in flight. Read its output with Recv (streamed
// calls) and its outcome with Wait.
type Call struct {
	rt      *Runtime
	id      string
	program string // the program id the caller knows
	tenant  string
	key     string      // the program's key in the program table and the engine (programKey)
	length  *tenantStep // the tenant's length state, held until the call ends
	stream  bool
	created time.Time
	model   string // the model asked for ("": the runtime's)

	toolCtx    context.Context // cancelled when the caller gives up
	toolCancel context.CancelFunc
	stopWatch  func() bool

	mu       sync.Mutex
	deltas   []Delta
	notify   chan struct{}
	done     chan struct{}
	res      Result
	complete func(Result) // set once; see newCall

	// deferred is a remote non-stream call's turns not yet started: the
	// first Wait runs them on the waiter's own goroutine, which saves a
	// goroutine, its stack's growth and two hand-offs between threads per
	// call; Done, Recv and Cancel start them on a goroutine of their own,
	// so a caller that never Waits still sees the call end.
	deferred atomic.Pointer[remoteCall]

	// st is the call's engine-side state; touched only on the engine
	// goroutine (or after it ended).
	st *seqCtl
}

// ID is the call's id ("chatcmpl-...").
func (c *Call) ID() string { return c.id }

// Model is the model id the call's chunks name: the one asked for, else
// the runtime's model.
func (c *Call) Model() string {
	if c.model != "" {
		return c.model
	}
	return c.rt.model.Name()
}

// Program is the program the call belongs to.
func (c *Call) Program() string { return c.program }

// Created is when the call was made.
func (c *Call) Created() time.Time { return c.created }

// Done is closed when the call has finished.
func (c *Call) Done() <-chan struct{} {
	c.startDeferred()
	return c.done
}

// startDeferred starts the call's deferred turns, if any, on a goroutine.
func (c *Call) startDeferred() {
	if rc := c.deferred.Swap(nil); rc != nil {
		go rc.run()
	}
}

// Recv returns the deltas produced since the last Recv, waiting for at
// least one. It returns io.EOF once the call has finished and every delta
// was received, or ctx's error.
func (c *Call) Recv(ctx context.Context) ([]Delta, error) {
	c.startDeferred()
	for {
		c.mu.Lock()
		if len(c.deltas) > 0 {
			d := c.deltas
			c.deltas = nil
			c.mu.Unlock()
			return d, nil
		}
		c.mu.Unlock()
		select {
		case <-c.done:
			c.mu.Lock()
			d := c.deltas
			c.deltas = nil
			c.mu.Unlock()
			if len(d) > 0 {
				return d, nil
			}
			return nil, io.EOF
		default:
		}
		select {
		case <-c.notify:
		case <-c.done:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// Wait waits for the call to finish and returns its result, or ctx's error.
func (c *Call) Wait(ctx context.Context) (*Result, error) {
	if rc := c.deferred.Swap(nil); rc != nil {
		// ctx's end cancels the call (its stopWatch), which ends run.
		rc.run()
		if err := ctx.Err(); err != nil {
			return nil, err
		}
	}
	select {
	case <-c.done:
		c.mu.Lock()
		r := c.res
		c.mu.Unlock()
		return &r, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Cancel gives up on the call: its tools are cancelled and its sequence is
// ended in the engine, freeing its KV blocks. The call ends with
// ErrCancelled unless it had already finished.
func (c *Call) Cancel() {
	c.toolCancel()
	c.startDeferred() // it ends at once, cancelled
	c.rt.eng.Post(func() {
		// A call completed at a park has handed its sequence on.
		if st := c.st; st != nil && !st.done && !st.handedOff && st.seq != nil {
			c.rt.eng.Cancel(st.seq.ID())
		}
	})
}

// push adds deltas for Recv (engine goroutine or a tool goroutine).
func (c *Call) push(ds ...Delta) {
	if !c.stream || len(ds) == 0 {
		return
	}
	c.mu.Lock()
	c.deltas = append(c.deltas, ds...)
	c.mu.Unlock()
	select {
	case c.notify <- struct{}{}:
	default:
	}
}

// partialResult is the result so far of a call that did not finish in the
// engine (engine goroutine, or after it ended).
func (c *Call) partialResult() Result {
	if c.st != nil {
		return c.st.result()
	}
	return Result{ID: c.id, Program: c.program, Model: c.rt.model.Name(), Created: c.created}
}

// anonPrefix names the program of a call that gave none.
const anonPrefix = "call-"

// Chat starts a chat call. Errors in the request are *Error values
// (ErrInvalid, ErrNotFound, ErrContextLength, ErrUnavailable); errors that
// happen later are in the Result. Cancelling ctx cancels the call.
func (rt *Runtime) Chat(ctx context.Context, req ChatRequest) (*Call, error) {
	received := req.Received
	if received.IsZero() {
		received = time.Now()
	}
	if rt.cfg.Remote != nil {
		return rt.chatRemote(ctx, req, received)
	}
	if req.Model != "" && req.Model != rt.model.Name() {
		return nil, errorf(ErrNotFound, "model", "model_not_found", "The model %q does not exist; this server serves %q.", req.Model, rt.model.Name())
	}
	if err := validateRequest(req); err != nil {
		return nil, err
	}
	if err := rt.promptTooLong(req); err != nil {
		return nil, err
	}
	// The tenant's limits come before any work on the prompt; the slot is
	// given back when the call ends, or at once if it does not start.
	if aerr := rt.tenants.admit(req.Tenant, received); aerr != nil {
		rt.metrics.tenantRejected.WithLabelValues(tenantLabel(req.Tenant), aerr.Code).Inc()
		return nil, aerr
	}
	started := false
	var length *tenantStep
	defer func() {
		if !started {
			rt.tenants.release(req.Tenant)
			rt.length.tenants.release(length)
		}
	}()
	if err := validateSampling(req); err != nil {
		return nil, err
	}
	offered, server, err := rt.resolveTools(req.Tenant, req.Tools)
	if err != nil {
		return nil, err
	}
	if rt.cfg.OfferTools == OfferRegistered {
		offered, server = rt.offerRegistered(req.Tenant, offered, server)
	}
	choice := req.ToolChoice
	if choice.Mode == "" {
		choice.Mode = ChoiceAuto
	}
	switch choice.Mode {
	case ChoiceAuto, ChoiceNone:
	case ChoiceRequired, ChoiceFunction:
		if len(offered) == 0 {
			return nil, errorf(ErrInvalid, "tool_choice", "invalid_value", "tool_choice %q needs tools", choice.Mode)
		}
		if choice.Mode == ChoiceFunction {
			found := false
			for _, t := range offered {
				found = found || t.Name == choice.Name
			}
			if !found {
				return nil, errorf(ErrInvalid, "tool_choice", "invalid_value", "tool_choice names function %q, which is not among the tools", choice.Name)
			}
		}
	default:
		return nil, errorf(ErrInvalid, "tool_choice", "invalid_value", "unknown tool_choice %q (valid: none, auto, required, or a function)", choice.Mode)
	}

	if req.TopLogprobs < 0 || req.TopLogprobs > MaxTopLogprobs {
		return nil, errorf(ErrInvalid, "top_logprobs", "invalid_value", "top_logprobs must be between 0 and %d, got %d", MaxTopLogprobs, req.TopLogprobs)
	}
	if req.TopLogprobs > 0 && !req.Logprobs {
		return nil, errorf(ErrInvalid, "top_logprobs", "invalid_value", "top_logprobs needs logprobs: true")
	}
	cons, err := rt.newConstraint(&req, &Turn{Tools: offered, ToolChoice: choice, ParallelToolCalls: req.ParallelToolCalls})
	if err != nil {
		return nil, err
	}

	rendered, err := rt.tmpl.RenderSpans(req.Messages, offered, true)
	if err != nil {
		return nil, errorf(ErrInvalid, "messages", "invalid_value", "%v", err)
	}
	// The conversation's text is tokenized without special tokens, at the
	// places the template reports (a user's "<|im_start|>" stays text).
	toks, err := rendered.Encode(rt.tok)
	if err != nil {
		return nil, errorf(ErrInternal, "", "internal_error", "tokenizing the prompt: %v", err)
	}
	if len(toks) > rt.maxPrompt {
		return nil, errorf(ErrContextLength, "messages", "context_length_exceeded",
			"This model's maximum context length is %d tokens; your messages resulted in %d tokens.", rt.maxPrompt, len(toks))
	}
	rt.tenants.charge(req.Tenant, len(toks), received)

	id := rt.nextID.Add(1)
	c := &Call{rt: rt, id: "chatcmpl-" + strconv.FormatUint(uint64(rt.started.UnixNano()&0xffffffff), 36) + strconv.FormatUint(id, 36),
		stream: req.Stream, created: received, notify: make(chan struct{}, 1), done: make(chan struct{})}
	c.program, c.tenant = req.Program, req.Tenant
	anonymous := c.program == ""
	if anonymous {
		c.program = anonPrefix + c.id
	}
	c.key = programKey(c.tenant, c.program)
	c.toolCtx, c.toolCancel = context.WithCancel(context.Background())
	var once sync.Once
	c.complete = func(r Result) {
		once.Do(func() { rt.completeCall(c, r) })
	}

	turn := Turn{Messages: req.Messages, Tools: offered, ToolChoice: choice, ParallelToolCalls: req.ParallelToolCalls, ResponseFormat: req.ResponseFormat}
	maxTok := rt.cfg.MaxGenerated
	if req.MaxTokens > 0 {
		maxTok = min(maxTok, req.MaxTokens)
	}
	st := newSeqCtl(rt, c, turn, server, maxTok, len(toks))
	st.sampling = samplingOf(req, id)
	st.cons = cons
	st.wantLP, st.topLP = req.Logprobs, req.TopLogprobs
	if cons != nil || req.Logprobs {
		st.sampling.Hook = st
	}
	st.stopper = stopMatcher{stops: req.Stop}
	st.thread, st.anonymous = req.Thread, anonymous
	st.timing.Received = received
	st.lastMessage, st.systemPrompt = lastMessage(req.Messages), systemPrompt(req.Messages)
	st.requestTool, st.lastToolClass = answeredCall(req.Messages)
	st.conv = conversationOf(req.Thread, req.Messages)
	st.history, st.blend = rt.programs.history(c.key, st.conv, startsOver(req.Messages))
	st.retry = rt.programs.retries(c.key, st.conv, turnPrefixes(req.Messages))
	length = rt.length.tenants.acquire(c.tenant)
	c.length = length
	st.predictLength()
	st.startTurn() // the first turn's script, on this goroutine

	rt.mu.Lock()
	if rt.closed {
		rt.mu.Unlock()
		return nil, errorf(ErrUnavailable, "", "server_shutting_down", "the runtime is shutting down")
	}
	rt.calls[c] = struct{}{}
	rt.mu.Unlock()
	started = true

	gapTools, gap := rt.programs.arrive(c.key, c.program, c.tenant, req.Thread, anonymous, received)
	if len(gapTools) > 0 {
		// The time the client took to run the tools it was given.
		rt.durations.Observe(clientToolKey(c.tenant, gapTools[0]), gap.Seconds())
	}
	rt.metrics.countCall(c.tenant)
	rt.metrics.tokens.WithLabelValues("prompt").Add(float64(len(toks)))

	salt := rt.salter.salt(c.tenant, req.CacheSalt)
	var park, stale *parkEntry
	var rest []int32
	if !anonymous && rt.cfg.ClientToolTTL > 0 {
		park, rest, stale = rt.parkedFor(c.key, req.Thread, salt, rendered)
	}
	ref := &seqRef{cur: st}
	st.ref = ref
	ereq := engine.Request{Name: c.id, Program: c.key, Tenant: c.tenant, Thread: req.Thread, Parents: req.Parents, Prompt: toks, Sampling: st.sampling, Controller: ref,
		ProgramTTL: rt.programTTL(anonymous), CacheSalt: salt, Class: c.tenant}
	c.mu.Lock()
	c.stopWatch = context.AfterFunc(ctx, c.Cancel)
	c.mu.Unlock()
	st.timing.Submitted = time.Now()
	st.timing.Outside = st.timing.Submitted.Sub(received)
	rt.eng.Post(func() {
		if stale != nil {
			rt.dropParked(stale, "replaced")
		}
		if park != nil && rt.resumeParked(park, st, rest) {
			if c.toolCtx.Err() != nil { // cancelled before it was resumed
				rt.eng.Cancel(st.seq.ID())
			}
			return
		}
		c.st = st
		seq, err := rt.eng.SubmitNow(ereq)
		if err != nil {
			res := st.result()
			res.Err = errorf(ErrContextLength, "messages", "context_length_exceeded", "%v", err)
			st.done = true
			c.complete(res)
			return
		}
		st.seq = seq
		rt.live[seq.ID()] = st
		if c.toolCtx.Err() != nil { // cancelled before it was submitted
			rt.eng.Cancel(seq.ID())
		}
	})
	return c, nil
}

// validateRequest checks what every call needs, local or remote.
func validateRequest(req ChatRequest) *Error {
	if len(req.Messages) == 0 {
		return errorf(ErrInvalid, "messages", "invalid_value", "messages must contain at least one message")
	}
	if req.MaxTokens < 0 {
		return errorf(ErrInvalid, "max_tokens", "invalid_value", "max_tokens must not be negative, got %d", req.MaxTokens)
	}
	return nil
}

// validateSampling checks the sampling fields and stop sequences.
func validateSampling(req ChatRequest) *Error {
	if t := req.Temperature; t != nil && (*t < 0 || *t > 2 || *t != *t) {
		return errorf(ErrInvalid, "temperature", "invalid_value", "temperature must be between 0 and 2, got %g", *t)
	}
	if p := req.TopP; p != nil && (*p < 0 || *p > 1 || *p != *p) {
		return errorf(ErrInvalid, "top_p", "invalid_value", "top_p must be between 0 and 1, got %g", *p)
	}
	if len(req.Stop) > MaxStop {
		return errorf(ErrInvalid, "stop", "invalid_value", "stop has %d sequences, at most %d are allowed", len(req.Stop), MaxStop)
	}
	for i, s := range req.Stop {
		if s == "" {
			return errorf(ErrInvalid, fmt.Sprintf("stop[%d]", i), "invalid_value", "a stop sequence must not be empty")
		}
	}
	return nil
}

// samplingOf is a request's sampling: greedy without a temperature; the
// request's seed, else one of the call's own (its sequence number, mixed).
func samplingOf(req ChatRequest, callNum uint64) engine.Sampling {
	var p engine.Sampling
	if req.Temperature != nil {
		p.Temperature = *req.Temperature
	}
	if req.TopP != nil {
		p.TopP = *req.TopP
		if p.TopP == 0 { // the nucleus of mass 0 is the most likely token
			p.Temperature = 0
		}
	}
	if req.Seed != nil {
		p.Seed = uint64(*req.Seed)
	} else {
		p.Seed = callNum*0x9e3779b97f4a7c15 + 0x632be59bd9b4e019
	}
	return p
}

// clientToolKey is the duration-statistics key of a tool run by a tenant's
// client (each tenant's clients keep their own statistics).
func clientToolKey(tenant, name string) string { return "client:" + tools.StatsKey(tenant, name) }

// toolStatsKey is the duration-statistics key of a server-side tool as a
// tenant's call names it: the tenant's own tool has statistics of its own.
func (rt *Runtime) toolStatsKey(tenant, name string) string {
	if rt.reg.Scoped(tenant, name) {
		return tools.StatsKey(tenant, name)
	}
	return name
}

// ChatSync runs a call to its end and returns its result; a failed call's
// error is returned as well.
func (rt *Runtime) ChatSync(ctx context.Context, req ChatRequest) (*Result, error) {
	req.Stream = false
	c, err := rt.Chat(ctx, req)
	if err != nil {
		return nil, err
	}
	res, err := c.Wait(ctx)
	if err != nil {
		c.Cancel()
		<-c.done
		return nil, err
	}
	return res, res.Err
}

// resolveTools checks the declared tools and returns those to offer the
// model (a registered tool, global or the tenant's own, with its registered
// definition) and the names that run server-side.
func (rt *Runtime) resolveTools(tenant string, declared []chat.Tool) ([]chat.Tool, map[string]bool, error) {
	if len(declared) == 0 {
		return nil, nil, nil
	}
	offered := make([]chat.Tool, 0, len(declared))
	server := map[string]bool{}
	seen := map[string]bool{}
	for i, t := range declared {
		param := fmt.Sprintf("tools[%d].function", i)
		if !tools.ValidName(t.Name) {
			return nil, nil, errorf(ErrInvalid, param+".name", "invalid_value", "tool name %q must match ^[a-zA-Z0-9_-]{1,64}$", t.Name)
		}
		if seen[t.Name] {
			return nil, nil, errorf(ErrInvalid, param+".name", "invalid_value", "tool %q is declared twice", t.Name)
		}
		seen[t.Name] = true
		if reg, ok := rt.reg.GetIn(tenant, t.Name); ok {
			// A declared tool of a registered tool's name runs server-side
			// with the registered definition when the client leaves its
			// parameters open (none, or {"type":"object"}) or they have the
			// same shape (the same properties, of the same types;
			// descriptions, required ones and constraints may differ: the
			// registered schema validates). Other parameters mean another
			// tool: say so rather than swap it.
			regParams := reg.Definition().Function.Parameters
			if declaresProperties(t.Parameters) && !sameShape(t.Parameters, regParams) {
				return nil, nil, errorf(ErrInvalid, param+".parameters", "tool_name_clash",
					"tool %q is registered on this server with other parameters (%s); declare it with the registered parameters, with none, or rename your client-side tool", t.Name, clip(string(regParams), 300))
			}
			server[t.Name] = true
			offered = append(offered, chat.Tool{Name: reg.Name, Description: reg.Description, Parameters: reg.Definition().Function.Parameters})
			continue
		}
		// A client-side tool: its schema must be a valid JSON Schema of an
		// object, as the model is told to follow it.
		if _, err := tools.New(t.Name, t.Description, t.Parameters, noHandler); err != nil {
			return nil, nil, errorf(ErrInvalid, param+".parameters", "invalid_tool_schema", "tool %q: %v", t.Name, err)
		}
		offered = append(offered, t)
	}
	return offered, server, nil
}

func noHandler(context.Context, json.RawMessage) (string, error) { return "", nil }

// declaresProperties reports whether a declared schema says which
// properties it takes (no schema, or {"type":"object"} alone, defers to the
// registered tool's).
func declaresProperties(schema json.RawMessage) bool {
	var s struct {
		Properties json.RawMessage `json:"properties"`
	}
	return len(schema) > 0 && json.Unmarshal(schema, &s) == nil && len(s.Properties) > 0
}

// sameShape reports whether two object schemas take the same arguments:
// the same property names with the same "type" (which are required, and
// other constraints, may differ: the registered schema validates).
func sameShape(a, b json.RawMessage) bool {
	type schema struct {
		Properties map[string]struct {
			Type any `json:"type"`
		} `json:"properties"`
	}
	var x, y schema
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil || len(x.Properties) != len(y.Properties) {
		return false
	}
	for name, p := range x.Properties {
		q, ok := y.Properties[name]
		if !ok || fmt.Sprint(p.Type) != fmt.Sprint(q.Type) {
			return false
		}
	}
	return true
}

func lastMessage(msgs []chat.Message) string {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == chat.RoleUser || msgs[i].Role == chat.RoleTool {
			return clip(msgs[i].Content, 2000)
		}
	}
	return ""
}

func systemPrompt(msgs []chat.Message) string {
	if len(msgs) > 0 && msgs[0].Role == chat.RoleSystem {
		return clip(msgs[0].Content, 2000)
	}
	return ""
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n]
}

// completeCall delivers a call's result (once).
func (rt *Runtime) completeCall(c *Call, r Result) {
	now := time.Now()
	if r.Timing.Finished.IsZero() {
		r.Timing.Finished = now
	}
	c.mu.Lock()
	c.res = r
	stop := c.stopWatch
	c.mu.Unlock()
	if stop != nil {
		stop()
	}
	c.toolCancel()
	rt.mu.Lock()
	delete(rt.calls, c)
	rt.mu.Unlock()
	rt.tenants.release(c.tenant)
	rt.length.tenants.release(c.length)
	rt.tenants.charge(c.tenant, r.Usage.CompletionTokens, now)
	rt.metrics.countTokens(c.tenant, r.Usage.PromptTokens, r.Usage.CompletionTokens)
	rt.programs.finish(c.key, &r, now)
	finish := r.FinishReason
	if r.Err != nil {
		finish = "error"
		if AsError(r.Err).Kind == ErrCancelled {
			finish = "cancelled"
		}
	}
	rt.metrics.calls.WithLabelValues(finish).Inc()
	rt.metrics.callSeconds.Observe(now.Sub(r.Timing.Received).Seconds())
	rt.metrics.prefixCached.Add(float64(r.Usage.CachedTokens))
	if len(r.ToolCalls) > 0 && r.Err == nil {
		rt.metrics.clientCalls.Add(float64(len(r.ToolCalls)))
	}
	close(c.done)
}

// ObserveOutside records a call's time outside the engine and the tools,
// once the HTTP layer has written the response (Timing.Outside plus the
// time after the finish).
func (rt *Runtime) ObserveOutside(d time.Duration) {
	rt.metrics.outside.Observe(d.Seconds())
}

// describeCalls is "a, b" for logs and the engine's ToolCall.Name.
func describeCalls(calls []chat.ToolCall) string {
	names := make([]string, len(calls))
	for i, c := range calls {
		names[i] = c.Name
	}
	return strings.Join(names, ",")
}
