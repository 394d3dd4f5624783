package remote

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"
)

// Headers pitstop passes to a pitstop backend (runtime/api's).
const (
	headerProgram = "X-Pitstop-Program"
	headerThread  = "X-Pitstop-Thread"
)

// maxEventBytes bounds one server-sent event line of a backend.
const maxEventBytes = 4 << 20

// body is the JSON the router sends: the request, with the backend kind's
// own fields.
func (b *Backend) body(req *Request, priority int, slot int) ([]byte, error) {
	s, _ := b.wires.Get().(*wireScratch)
	if s == nil {
		s = &wireScratch{}
	}
	defer s.release(&b.wires)
	s.w = wireRequest{Stream: true, StreamOptions: wireStreamOptions{IncludeUsage: true},
		MaxTokens: req.MaxTokens, Temperature: req.Temperature, TopP: req.TopP, Seed: req.Seed, Stop: req.Stop, ResponseFormat: req.ResponseFormat}
	w := &s.w
	w.Model = req.Model
	if w.Model == "" || !b.serves(w.Model) {
		w.Model = b.firstModel()
	}
	if len(req.Tools) > 0 {
		w.Tools = toWireTools(req.Tools)
		w.ToolChoice = req.ToolChoice
		w.ParallelToolCalls = req.ParallelToolCalls
	}
	switch b.spec.Kind {
	case KindVLLM, KindSGLang:
		// Lower is earlier in both, as the router's queue key
		// (docs/router.md).
		s.priority = priority
		w.Priority = &s.priority
		if b.spec.Kind == KindVLLM {
			w.CacheSalt = req.CacheSalt
		}
	case KindPitstop:
		w.CacheSalt = req.CacheSalt
	case KindLlamaCpp:
		w.CachePrompt = true
		if slot >= 0 {
			s.slot = slot
			w.IDSlot = &s.slot
		}
	}
	return req.encodeBody(w, &s.msgs)
}

// wireScratch is a body's wire values, kept from call to call in a
// backend's pool: made per call, the request's fields, the priority they
// point at, the messages' slice and that slice boxed for the encoder were
// four allocations (a value handed to the encoder in an interface is made
// on the heap).
type wireScratch struct {
	w              wireRequest
	priority, slot int
	msgs           []wireMessage
}

// maxScratchMessages bounds the messages' room a pooled wireScratch keeps.
const maxScratchMessages = 64

// release empties s (it keeps no call's strings while pooled) and puts it
// back in pool.
func (s *wireScratch) release(pool *sync.Pool) {
	s.w = wireRequest{}
	if cap(s.msgs) > maxScratchMessages {
		s.msgs = nil
	}
	clear(s.msgs[:cap(s.msgs)])
	s.msgs = s.msgs[:0]
	pool.Put(s)
}

// send runs one generation on the backend, streaming: emit sees every
// event as it arrives. A *failure says what went wrong. It goes to the
// transport itself, not through an http.Client: a generation follows no
// redirect and sets no cookie, and the client's copies of the request's
// headers and URL would be work on every call.
func (b *Backend) send(ctx context.Context, req *Request, priority, slot int, emit func(Event)) (rep Reply, err error) {
	data, err := b.body(req, priority, slot)
	if err != nil {
		return Reply{}, &failure{rejected: true, msg: fmt.Sprintf("encoding the request: %v", err)}
	}
	if b.inline != nil && b.client.Transport == b.inline {
		return b.sendInline(ctx, req, data, emit)
	}
	h := b.header
	if b.spec.Kind == KindPitstop && req.ProgramID != "" {
		h = h.Clone()
		h[headerProgram] = []string{req.ProgramID}
		if req.Thread != "" {
			h[headerThread] = []string{req.Thread}
		}
	}
	// The request follows ctx (the caller gone, the backend's generation
	// ends) until the reply is read; the reading of the body's end after
	// it (drainRest) is not cut by the call's end, which cancels ctx: a
	// context of the request's own, detached from ctx when the reply is
	// read. (The inline transport watches ctx itself, sendInline.)
	rctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	detach := context.AfterFunc(ctx, cancel)
	// The body is a bytes.Reader in io.NopCloser, a type net/http knows to
	// be in memory: with any other, (*http.Request).Write flushes the
	// headers before the body, two writes (and wake-ups) per request.
	hreq := (&http.Request{Method: http.MethodPost, URL: b.chatURL, Host: b.chatURL.Host, Header: h,
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Body: io.NopCloser(bytes.NewReader(data)), ContentLength: int64(len(data)),
		GetBody: func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil }}).WithContext(rctx)
	resp, err := b.client.Transport.RoundTrip(hreq)
	if err != nil {
		detach()
		cancel()
		return Reply{}, &failure{down: true, msg: err.Error()}
	}
	body := &endReader{r: resp.Body}
	defer func() {
		detach()
		if body.ended || err != nil {
			resp.Body.Close()
			cancel()
		} else {
			go drainRest(resp.Body, cancel)
		}
	}()
	return b.readReply(resp.StatusCode, strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json"), body, emit)
}

// sendInline is send over the inline transport: the request written from
// the backend's template, ctx watched by the transport itself and let go
// of when the reply is read (inlineBody.detach), so no context of the
// request's own, which would cost a detached context, its cancel and a
// second watch on ctx (eight allocations a call, docs/results-router.md
// §4, session 11).
func (b *Backend) sendInline(ctx context.Context, req *Request, data []byte, emit func(Event)) (rep Reply, err error) {
	p := postRequest{t: &b.post, body: data}
	if b.spec.Kind == KindPitstop && req.ProgramID != "" {
		p.program, p.thread = req.ProgramID, req.Thread
	}
	ib, err := b.inline.post(ctx, &p)
	if err != nil {
		return Reply{}, &failure{down: true, msg: err.Error()}
	}
	defer func() {
		ib.detach()
		if ib.eof || err != nil {
			ib.Close()
		} else {
			go drainRest(ib, ib.abort)
		}
	}()
	return b.readReply(ib.status, ib.json, ib, emit)
}

// readReply reads a generation's reply, of status and (isJSON) Content-Type
// application/json, from its body.
func (b *Backend) readReply(status int, isJSON bool, body io.Reader, emit func(Event)) (Reply, error) {
	if status != http.StatusOK {
		msg := errorMessage(status, body)
		switch {
		case status >= 500 || status == http.StatusTooManyRequests:
			return Reply{}, &failure{down: status != http.StatusTooManyRequests, status: status, msg: msg}
		default:
			return Reply{}, &failure{rejected: true, status: status, msg: msg}
		}
	}
	if isJSON {
		return b.readJSON(body, emit)
	}
	return b.readStream(body, emit)
}

// endReader tells whether its reader reached its end.
type endReader struct {
	r     io.Reader
	ended bool
}

func (e *endReader) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	e.ended = e.ended || err == io.EOF
	return n, err
}

// A reply's body that did not end with its [DONE] (a chunked body's last
// chunk comes after it) is read to its end before it is closed, so the
// transport keeps the connection for the next call: a body closed before
// its end costs the connection, and the next call a dial. At most
// drainBytes are read, for at most drainWait; a backend that sends more
// or takes longer loses the connection.
const (
	drainBytes = 64 << 10
	drainWait  = time.Second
)

// drainRest reads the rest of body (on its own goroutine: the reply is
// complete and goes on meanwhile) and closes it; cancel (the request's
// context's, or the inline body's abort) ends a read that takes longer
// than drainWait, and the connection.
func drainRest(body io.ReadCloser, cancel context.CancelFunc) {
	t := time.AfterFunc(drainWait, cancel)
	_, _ = io.CopyN(io.Discard, body, drainBytes)
	t.Stop()
	body.Close()
	cancel()
}

// errorMessage reads an error answer's message (OpenAI's error JSON, or
// the start of whatever it is).
func errorMessage(status int, body io.Reader) string {
	data, _ := io.ReadAll(io.LimitReader(body, 64<<10))
	var e struct {
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal(data, &e) == nil && len(e.Error) > 0 {
		var we wireError
		if json.Unmarshal(e.Error, &we) == nil && we.Message != "" {
			return fmt.Sprintf("HTTP %d: %s", status, we.Message)
		}
		var s string
		if json.Unmarshal(e.Error, &s) == nil {
			return fmt.Sprintf("HTTP %d: %s", status, s)
		}
	}
	return fmt.Sprintf("HTTP %d: %.200s", status, strings.TrimSpace(string(data)))
}

// readStream reads a server-sent-events reply.
func (b *Backend) readStream(r io.Reader, emit func(Event)) (rep Reply, err error) {
	ed, _ := b.events.Get().(*eventDecoder)
	if ed == nil {
		ed = newEventDecoder()
	}
	defer func() {
		if err == nil {
			ed.resetChunk() // keeps no reply's strings while pooled
			b.events.Put(ed)
		}
	}()
	sc := bufio.NewScanner(r)
	sc.Buffer(ed.line[:0], maxEventBytes)
	// The reply's text, in the decoder's kept room: one allocation for the
	// string at the end, where a strings.Builder grows one per doubling.
	content := ed.content[:0]
	var calls toolCalls
	rep.Usage.CachedTokens = -1
	sawDone, sawChunk := false, false
	ch := &ed.chunk
	for sc.Scan() {
		line := sc.Bytes()
		if len(line) == 0 || line[0] == ':' {
			continue
		}
		data, ok := bytes.CutPrefix(line, []byte("data:"))
		if !ok {
			continue // event:, id:, retry: lines
		}
		data = bytes.TrimSpace(data)
		if string(data) == "[DONE]" {
			sawDone = true
			break
		}
		// ch is reused, from event to event and reply to reply: its
		// choices' room is kept, cleared (Unmarshal would otherwise leave
		// a field the new event lacks as it was).
		ed.resetChunk()
		if err := ed.decode(data, ch); err != nil {
			return rep, &failure{msg: fmt.Sprintf("malformed stream event: %v: %.120s", err, data)}
		}
		if ch.Error != nil {
			// A pitstop backend (or vLLM) failing mid-stream.
			return rep, &failure{down: true, msg: "error in the stream: " + ch.Error.Message}
		}
		sawChunk = true
		if ch.Pitstop != nil && len(ch.Pitstop.ToolRound) > 0 && string(ch.Pitstop.ToolRound) != "null" {
			emit(Event{Kind: EventBackendToolRound, Text: string(ch.Pitstop.ToolRound)})
		}
		if ch.Model.seen && ch.Model.name != "" {
			rep.Model = ch.Model.name
		}
		if ch.Usage != nil {
			applyUsage(&rep.Usage, ch.Usage)
		}
		for _, c := range ch.Choices {
			if c.Index != 0 {
				continue
			}
			if c.Delta.Content != "" {
				content = append(content, c.Delta.Content...)
				emit(Event{Kind: EventContent, Text: c.Delta.Content})
			}
			for _, tc := range c.Delta.ToolCalls {
				calls.add(tc, emit)
			}
			if c.FinishReason != "" {
				rep.FinishReason = c.FinishReason
			}
		}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return rep, &failure{msg: "a stream event longer than 4 MiB"}
		}
		return rep, &failure{down: true, msg: "reading the stream: " + err.Error()}
	}
	if !sawChunk {
		return rep, &failure{msg: "the reply is not an OpenAI chat-completion stream (no data events)"}
	}
	if !sawDone && rep.FinishReason == "" {
		return rep, &failure{down: true, msg: "the stream ended before the reply did (no finish_reason, no [DONE])"}
	}
	text := string(content)
	if cap(content) <= maxKeptContent {
		ed.content = content[:0]
	}
	return finishReply(rep, text, &calls)
}

// readJSON reads a non-stream reply (a server that ignores "stream").
func (b *Backend) readJSON(r io.Reader, emit func(Event)) (Reply, error) {
	var out struct {
		Model   string `json:"model"`
		Choices []struct {
			Message struct {
				Content   *string        `json:"content"`
				ToolCalls []wireToolCall `json:"tool_calls"`
			} `json:"message"`
			FinishReason string `json:"finish_reason"`
		} `json:"choices"`
		Usage *wireUsage `json:"usage"`
	}
	dec := json.NewDecoder(io.LimitReader(r, 64<<20))
	if err := dec.Decode(&out); err != nil || len(out.Choices) == 0 {
		return Reply{}, &failure{msg: "the reply is not an OpenAI chat completion"}
	}
	rep := Reply{Model: out.Model, FinishReason: out.Choices[0].FinishReason}
	rep.Usage.CachedTokens = -1
	if out.Usage != nil {
		applyUsage(&rep.Usage, out.Usage)
	}
	msg := out.Choices[0].Message
	content := ""
	if msg.Content != nil {
		content = *msg.Content
		if content != "" {
			emit(Event{Kind: EventContent, Text: content})
		}
	}
	var calls toolCalls
	for i, tc := range msg.ToolCalls {
		idx := i
		tc.Index = &idx
		calls.add(tc, emit)
	}
	return finishReply(rep, content, &calls)
}

func applyUsage(u *Usage, w *wireUsage) {
	u.PromptTokens, u.CompletionTokens = w.PromptTokens, w.CompletionTokens
	if w.PromptTokensDetails != nil {
		u.CachedTokens = w.PromptTokensDetails.CachedTokens
	}
}

func finishReply(rep Reply, content string, calls *toolCalls) (Reply, error) {
	rep.Content = content
	tcs, ok := calls.done()
	if !ok {
		return rep, &failure{msg: "a streamed tool call never got a name"}
	}
	rep.ToolCalls = tcs
	if len(tcs) > 0 && (rep.FinishReason == "" || rep.FinishReason == "stop") {
		rep.FinishReason = "tool_calls"
	}
	if rep.FinishReason == "" {
		rep.FinishReason = "stop"
	}
	return rep, nil
}
