package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/pitstop-llm/pitstop/models/chat"
	"github.com/pitstop-llm/pitstop/runtime"
)

type chatCompletion struct {
	ID                string       `json:"id"`
	Object            string       `json:"object"`
	Created           int64        `json:"created"`
	Model             string       `json:"model"`
	SystemFingerprint string       `json:"system_fingerprint"`
	Choices           []choice     `json:"choices"`
	Usage             usage        `json:"usage"`
	Pitstop           *pitstopInfo `json:"pitstop,omitempty"`
}

type choice struct {
	Index        int             `json:"index"`
	Message      responseMessage `json:"message"`
	FinishReason string          `json:"finish_reason"`
	Logprobs     *logprobsOut    `json:"logprobs"`
}

type responseMessage struct {
	Role      string     `json:"role"`
	Content   *string    `json:"content"`
	ToolCalls []toolCall `json:"tool_calls,omitempty"`
}

type toolCall struct {
	Index    *int         `json:"index,omitempty"`
	ID       string       `json:"id,omitempty"`
	Type     string       `json:"type,omitempty"`
	Function functionCall `json:"function"`
}

type functionCall struct {
	Name      string `json:"name,omitempty"`
	Arguments string `json:"arguments"`
}

type usage struct {
	PromptTokens        int                 `json:"prompt_tokens"`
	CompletionTokens    int                 `json:"completion_tokens"`
	TotalTokens         int                 `json:"total_tokens"`
	PromptTokensDetails promptTokensDetails `json:"prompt_tokens_details"`
}

type promptTokensDetails struct {
	CachedTokens int `json:"cached_tokens"`
}

// pitstopInfo is pitstop's extension of a response: the program and the
// server-side tool rounds (clients that do not know it ignore it).
type pitstopInfo struct {
	Program          string          `json:"program"`
	ToolRounds       []runtime.Round `json:"tool_rounds,omitempty"`
	ToolResultTokens int             `json:"tool_result_tokens,omitempty"`
}

type chunk struct {
	ID                string        `json:"id"`
	Object            string        `json:"object"`
	Created           int64         `json:"created"`
	Model             string        `json:"model"`
	SystemFingerprint string        `json:"system_fingerprint"`
	Choices           []chunkChoice `json:"choices"`
	Usage             *usage        `json:"usage,omitempty"`
	Pitstop           *pitstopChunk `json:"pitstop,omitempty"`
}

// pitstopChunk is pitstop's extension of the stream: a chunk with no
// choices that reports one server-side tool round as it finishes (the
// calls the model made, their results, the handling decision of the KV and
// why). OpenAI clients skip it as they skip the usage chunk.
type pitstopChunk struct {
	ToolRound *runtime.Round `json:"tool_round"`
}

type chunkChoice struct {
	Index        int          `json:"index"`
	Delta        delta        `json:"delta"`
	FinishReason *string      `json:"finish_reason"`
	Logprobs     *logprobsOut `json:"logprobs"`
}

type delta struct {
	Role      string     `json:"role,omitempty"`
	Content   *string    `json:"content,omitempty"`
	ToolCalls []toolCall `json:"tool_calls,omitempty"`
}

const fingerprint = "fp_pitstop"

func toUsage(u runtime.Usage) usage {
	return usage{PromptTokens: u.PromptTokens, CompletionTokens: u.CompletionTokens,
		TotalTokens: u.PromptTokens + u.CompletionTokens, PromptTokensDetails: promptTokensDetails{CachedTokens: u.CachedTokens}}
}

func (s *Server) chatCompletions(c echo.Context) error {
	received := time.Now()
	body, aerr := s.readBody(c)
	if aerr != nil {
		return aerr
	}
	params, aerr := DecodeChatRequest(body)
	if aerr != nil {
		return aerr
	}
	program, thread, parents, aerr := programHeaders(c)
	if aerr != nil {
		return aerr
	}
	req := params.Request
	req.Program, req.Thread, req.Parents, req.Received = program, thread, parents, received
	req.Tenant = who(c).tenant
	ctx := c.Request().Context()
	call, err := s.rt.Chat(ctx, req)
	if err != nil {
		return fromRuntime(err)
	}
	c.Response().Header().Set(HeaderProgram, call.Program())
	if req.Stream {
		return s.stream(c, call, params.IncludeUsage, received)
	}
	res, err := call.Wait(ctx)
	if err != nil {
		<-call.Done() // the client went away: the call is being cancelled
		return nil
	}
	if res.Err != nil {
		s.callDone(call, res, received, true)
		return fromRuntime(res.Err)
	}
	var content *string
	if res.Content != "" || len(res.ToolCalls) == 0 {
		content = &res.Content
	}
	msg := responseMessage{Role: chat.RoleAssistant, Content: content}
	for _, tc := range res.ToolCalls {
		msg.ToolCalls = append(msg.ToolCalls, toolCall{ID: tc.ID, Type: "function", Function: functionCall{Name: tc.Name, Arguments: tc.Arguments}})
	}
	var lp *logprobsOut
	if req.Logprobs {
		lp = toLogprobs(res.Logprobs)
	}
	out := chatCompletion{
		ID: res.ID, Object: "chat.completion", Created: res.Created.Unix(), Model: res.Model, SystemFingerprint: fingerprint,
		Choices: []choice{{Index: 0, Message: msg, FinishReason: res.FinishReason, Logprobs: lp}},
		Usage:   toUsage(res.Usage),
		Pitstop: &pitstopInfo{Program: res.Program, ToolRounds: res.Rounds, ToolResultTokens: res.Usage.ToolResultTokens},
	}
	if len(res.Rounds) == 0 {
		setFixed(c.Response().Header(), HeaderToolRounds, valueZero)
	} else {
		c.Response().Header().Set(HeaderToolRounds, strconv.Itoa(len(res.Rounds)))
	}
	err = writeJSON(c, http.StatusOK, out)
	s.callDone(call, res, received, false)
	return err
}

// callDone books a call's time outside the engine and the tools.
func (s *Server) callDone(call *runtime.Call, res *runtime.Result, received time.Time, stream bool) {
	now := time.Now()
	t := res.Timing
	st := CallStats{ID: res.ID, Program: res.Program, Stream: stream, Err: res.Err, Total: now.Sub(received), Tools: t.Tools}
	if !t.Submitted.IsZero() && !t.Finished.IsZero() {
		st.Engine = t.Finished.Sub(t.Submitted) - t.Tools
	}
	st.Outside = t.Outside
	if !t.Submitted.IsZero() {
		st.Prepare = t.Submitted.Sub(received)
	}
	if !t.Finished.IsZero() {
		st.Respond = now.Sub(t.Finished)
		st.Outside += st.Respond
	}
	s.rt.ObserveOutside(st.Outside)
	if s.cfg.OnCallDone != nil {
		s.cfg.OnCallDone(st)
	}
}

// sseWriter writes a chat completion as server-sent events, committing the
// response (status 200) only when the first event is written, so an error
// before any output can still be a JSON error with its status.
type sseWriter struct {
	c         echo.Context
	call      *runtime.Call
	model     string
	created   int64
	committed bool
	failed    bool
	rounds    []*runtime.Round // tool rounds not yet written
	progress  bool             // HeaderStreamProgress: tool rounds are written as they start and end
	// buf holds one event at a time; enc encodes into it (one buffer for
	// the stream, where json.Marshal and the framing cost two per event).
	buf bytes.Buffer
	enc *json.Encoder
}

func (w *sseWriter) commit() {
	if w.committed {
		return
	}
	w.committed = true
	h := w.c.Response().Header()
	setFixed(h, echo.HeaderContentType, valueEventStream)
	setFixed(h, "Cache-Control", valueNoCache)
	setFixed(h, "Connection", valueKeepAlive)
	setFixed(h, "X-Accel-Buffering", valueNo)
	w.c.Response().WriteHeader(http.StatusOK)
	role := ""
	w.event(chunk{Choices: []chunkChoice{{Delta: delta{Role: chat.RoleAssistant, Content: &role}}}})
}

// commitRounds commits the stream and writes the held tool-round chunks.
func (w *sseWriter) commitRounds() {
	w.commit()
	for _, r := range w.rounds {
		w.event(chunk{Choices: []chunkChoice{}, Pitstop: &pitstopChunk{ToolRound: r}})
	}
	w.rounds = nil
}

func (w *sseWriter) event(ch chunk) {
	ch.ID, ch.Object, ch.Created, ch.Model, ch.SystemFingerprint = w.call.ID(), "chat.completion.chunk", w.created, w.model, fingerprint
	if ch.Choices == nil {
		ch.Choices = []chunkChoice{}
	}
	w.encode(ch)
}

// encode writes v as one event.
func (w *sseWriter) encode(v any) {
	if w.failed {
		return
	}
	if w.enc == nil {
		w.enc = json.NewEncoder(&w.buf)
	}
	w.buf.Reset()
	w.buf.WriteString("data: ")
	if w.enc.Encode(v) != nil { // as json.Marshal, then a newline
		return
	}
	w.buf.WriteByte('\n')
	w.write()
}

func (w *sseWriter) raw(data []byte) {
	if w.failed {
		return
	}
	w.buf.Reset()
	w.buf.WriteString("data: ")
	w.buf.Write(data)
	w.buf.WriteString("\n\n")
	w.write()
}

func (w *sseWriter) write() {
	if _, err := w.c.Response().Write(w.buf.Bytes()); err != nil {
		w.failed = true
	}
}

func (w *sseWriter) flush() {
	if w.committed && !w.failed {
		w.c.Response().Flush()
	}
}

// deltas writes a batch of runtime deltas, merging adjacent content and
// adjacent argument fragments of one call into one event each.
func (w *sseWriter) deltas(ds []runtime.Delta) {
	for i := 0; i < len(ds); {
		d := ds[i]
		switch d.Kind {
		case runtime.DeltaContent, runtime.DeltaLogprobs:
			// Content and the logprobs of its tokens go in one chunk.
			text := ""
			var lps []runtime.TokenLogprob
			for i < len(ds) && (ds[i].Kind == runtime.DeltaContent || ds[i].Kind == runtime.DeltaLogprobs) {
				text += ds[i].Text
				lps = append(lps, ds[i].Logprobs...)
				i++
			}
			w.commitRounds()
			ch := chunkChoice{Delta: delta{Content: &text}}
			if len(lps) > 0 {
				ch.Logprobs = toLogprobs(lps)
			}
			w.event(chunk{Choices: []chunkChoice{ch}})
		case runtime.DeltaToolCallStart:
			idx := d.Index
			tc := toolCall{Index: &idx, ID: d.ID, Type: "function", Function: functionCall{Name: d.Name}}
			i++
			for i < len(ds) && ds[i].Kind == runtime.DeltaToolCallArgs && ds[i].Index == idx {
				tc.Function.Arguments += ds[i].Text
				i++
			}
			w.commitRounds()
			w.event(chunk{Choices: []chunkChoice{{Delta: delta{ToolCalls: []toolCall{tc}}}}})
		case runtime.DeltaToolCallArgs:
			idx := d.Index
			args := d.Text
			i++
			for i < len(ds) && ds[i].Kind == runtime.DeltaToolCallArgs && ds[i].Index == idx {
				args += ds[i].Text
				i++
			}
			w.commitRounds()
			w.event(chunk{Choices: []chunkChoice{{Delta: delta{ToolCalls: []toolCall{{Index: &idx, Function: functionCall{Arguments: args}}}}}}})
		case runtime.DeltaToolRound:
			// Not part of OpenAI's stream: an extension chunk (pitstopChunk),
			// written with the next event so that an error before any
			// output is still a plain HTTP error.
			i++
			if d.Round != nil {
				w.rounds = append(w.rounds, d.Round)
			}
		case runtime.DeltaToolRoundStart:
			i++
			w.roundStart(d.Round)
		default:
			i++
		}
	}
	w.progressRounds()
	w.flush()
}

func (s *Server) stream(c echo.Context, call *runtime.Call, includeUsage bool, received time.Time) error {
	ctx := c.Request().Context()
	w := &sseWriter{c: c, call: call, model: call.Model(), created: call.Created().Unix(), progress: streamProgress(c)}
	res := relay(ctx, call, func(ds []runtime.Delta) bool { w.deltas(ds); return !w.failed })
	if res == nil {
		return nil
	}
	if res.Err != nil {
		defer s.callDone(call, res, received, true)
		if !w.committed {
			return fromRuntime(res.Err)
		}
		// The stream is committed (status 200): the failure is a final
		// event with OpenAI's error object, and the stream still ends with
		// [DONE] so that a client tells a failed call from a cut connection.
		w.commitRounds() // the rounds that ran before the failure
		data, _ := json.Marshal(errorBody{Error: fromRuntime(res.Err)})
		w.raw(data)
		w.raw([]byte("[DONE]"))
		w.flush()
		return nil
	}
	w.commitRounds()
	finish := res.FinishReason
	w.event(chunk{Choices: []chunkChoice{{Delta: delta{}, FinishReason: &finish}}})
	if includeUsage {
		u := toUsage(res.Usage)
		w.event(chunk{Choices: []chunkChoice{}, Usage: &u})
	}
	w.raw([]byte("[DONE]"))
	w.flush()
	s.callDone(call, res, received, true)
	return nil
}

// relay hands a streamed call's deltas to write until the call ends and
// returns its result. It returns nil when the client went away or write
// reported a failed write (the call is then cancelled and has ended).
func relay(ctx context.Context, call *runtime.Call, write func([]runtime.Delta) bool) *runtime.Result {
	for {
		ds, err := call.Recv(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			<-call.Done() // the client went away: the call is being cancelled
			return nil
		}
		if !write(ds) {
			call.Cancel()
			<-call.Done()
			return nil
		}
	}
	res, err := call.Wait(ctx)
	if err != nil {
		<-call.Done()
		return nil
	}
	return res
}
