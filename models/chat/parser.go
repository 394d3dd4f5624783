package chat

import (
	"crypto/rand"
	"encoding/hex"
	"strings"
)

// EventKind says what a parser Event carries.
type EventKind int

const (
	// EventText is content outside tool calls (Text).
	EventText EventKind = iota
	// EventToolCallStart opens tool call Index with its ID and Name.
	EventToolCallStart
	// EventToolCallArgs is a fragment of call Index's arguments (Text), in
	// order; the fragments of a call that ends add up to its Arguments.
	EventToolCallArgs
	// EventToolCallEnd closes call Index: Arguments is the complete JSON
	// object, validated.
	EventToolCallEnd
	// EventError reports a malformed tool call (Err, Raw). Index is the
	// call's index if its start was already emitted, else -1.
	EventError
)

func (k EventKind) String() string {
	switch k {
	case EventText:
		return "text"
	case EventToolCallStart:
		return "tool_call_start"
	case EventToolCallArgs:
		return "tool_call_args"
	case EventToolCallEnd:
		return "tool_call_end"
	case EventError:
		return "error"
	}
	return "unknown"
}

// Event is one step of a parsed model output.
type Event struct {
	Kind      EventKind
	Text      string // EventText: content; EventToolCallArgs: arguments fragment
	Index     int    // tool-call index, 0, 1, ... in the turn
	ID        string // tool-call id
	Name      string // function name (start and end)
	Arguments string // EventToolCallEnd: the complete JSON arguments
	Err       string // EventError: what is wrong
	Raw       string // EventError: the malformed call as the model wrote it
}

// ToolCallParser reads a model's output as it streams and splits it into
// content and tool calls. Feed takes each new piece of the output: text
// decoded from the model's ordinary tokens, or (special set) the text of
// one marker token, a token of the tokenizer's own for the template's
// tool-call markup (Template.ToolCallMarkup, MarkerTokens) that the model
// produced as such. Which markup counts from which kind of piece is the
// parser's Provenance: a marker token always counts; text that spells a
// marker is content unless the Provenance says otherwise. Close ends the
// output and flushes what was held back. However the ordinary text is cut
// into pieces, the events come out the same once adjacent text and
// adjacent argument fragments are merged (Coalesce); a special piece is
// one token and is never cut.
type ToolCallParser interface {
	Feed(text string, special bool) []Event
	Close() []Event
}

// ParserOption configures a parser.
type ParserOption func(*parserConfig)

type parserConfig struct {
	newID func(index int) string
	prov  Provenance
}

// WithIDs makes the parser name call index with f(index) instead of a
// random "call_..." id (for tests and replays).
func WithIDs(f func(index int) string) ParserOption {
	return func(c *parserConfig) { c.newID = f }
}

func newConfig(opts []ParserOption) parserConfig {
	c := parserConfig{newID: func(int) string { return RandomCallID() }}
	for _, o := range opts {
		o(&c)
	}
	return c
}

// RandomCallID returns a fresh id of the form call_<24 hex digits>.
func RandomCallID() string {
	var b [12]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	return "call_" + hex.EncodeToString(b[:])
}

// Coalesce merges adjacent text events, and adjacent argument fragments of
// the same call, into one event each.
func Coalesce(events []Event) []Event {
	var out []Event
	for _, e := range events {
		if n := len(out); n > 0 {
			last := &out[n-1]
			if e.Kind == EventText && last.Kind == EventText {
				last.Text += e.Text
				continue
			}
			if e.Kind == EventToolCallArgs && last.Kind == EventToolCallArgs && last.Index == e.Index {
				last.Text += e.Text
				continue
			}
		}
		if e.Kind == EventText && e.Text == "" {
			continue
		}
		out = append(out, e)
	}
	return out
}

// Result is a whole parsed output: the content, the tool calls that parsed,
// and the errors of those that did not.
type Result struct {
	Content   string
	ToolCalls []ToolCall
	Errors    []Event
}

// Summarize folds a parser's events into a Result.
func Summarize(events []Event) Result {
	var r Result
	var content strings.Builder
	for _, e := range events {
		switch e.Kind {
		case EventText:
			content.WriteString(e.Text)
		case EventToolCallEnd:
			r.ToolCalls = append(r.ToolCalls, ToolCall{ID: e.ID, Name: e.Name, Arguments: e.Arguments})
		case EventError:
			r.Errors = append(r.Errors, e)
		}
	}
	r.Content = content.String()
	return r
}

// Parse runs a fresh parser from t over a complete output held as text,
// whose tokens are unknown: markup spelled in it counts (TextProvenance)
// unless opts set another Provenance. What a model generates is read token
// by token with its provenance instead (TokenReader).
func Parse(t Template, output string, opts ...ParserOption) Result {
	p := t.NewParser(append([]ParserOption{WithProvenance(TextProvenance())}, opts...)...)
	events := p.Feed(output, false)
	events = append(events, p.Close()...)
	return Summarize(events)
}

// callState is the call being parsed and what of it was already emitted.
type callState struct {
	index    int // -1 until started
	id, name string
	started  bool
	streamed bool // argument fragments were emitted
	sc       *objScanner
}

// emitter holds the events of one Feed or Close and the turn's counters.
type emitter struct {
	cfg    parserConfig
	next   int
	events []Event
}

func (em *emitter) text(s string) {
	if s != "" {
		em.events = append(em.events, Event{Kind: EventText, Text: s, Index: -1})
	}
}

func (em *emitter) take() []Event {
	ev := em.events
	em.events = nil
	return ev
}

// progress emits the start once the name is known and any argument bytes
// scanned since.
func (em *emitter) progress(c *callState) {
	sc := c.sc
	if !c.started && sc.nameOK {
		c.started = true
		c.index = em.next
		em.next++
		c.id = em.cfg.newID(c.index)
		c.name = sc.name
		em.events = append(em.events, Event{Kind: EventToolCallStart, Index: c.index, ID: c.id, Name: c.name})
	}
	if c.started && len(sc.pending) > 0 {
		em.events = append(em.events, Event{Kind: EventToolCallArgs, Index: c.index, ID: c.id, Text: string(sc.pending)})
		sc.pending = sc.pending[:0]
		c.streamed = true
	}
}

// finish validates the call and emits its end, or an error.
func (em *emitter) finish(c *callState, raw string, trailing string) {
	em.progress(c)
	args, err := c.sc.result(trailing)
	if err != "" {
		idx := -1
		if c.started {
			idx = c.index
		}
		em.events = append(em.events, Event{Kind: EventError, Index: idx, ID: c.id, Name: c.name, Err: err, Raw: raw})
		return
	}
	if !c.streamed {
		em.events = append(em.events, Event{Kind: EventToolCallArgs, Index: c.index, ID: c.id, Text: args})
	}
	em.events = append(em.events, Event{Kind: EventToolCallEnd, Index: c.index, ID: c.id, Name: c.name, Arguments: args})
}
