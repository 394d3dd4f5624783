package remote

import "github.com/pitstop-llm/pitstop/models/chat"

// EventKind says what an Event carries.
type EventKind uint8

const (
	// EventContent is answer text (Text).
	EventContent EventKind = iota
	// EventToolCallStart opens tool call Index (ID, Name).
	EventToolCallStart
	// EventToolCallArgs is a fragment (Text) of tool call Index's
	// arguments, always after its start.
	EventToolCallArgs
	// EventBackendToolRound is a tool round a pitstop backend ran itself
	// (Text: its JSON, runtime.Round's form).
	EventBackendToolRound
	// EventRestart says the events seen so far of this generation are void:
	// its backend failed before any reached the client, and it starts
	// again on another.
	EventRestart
)

// Event is one piece of a backend's streamed reply, in order.
type Event struct {
	Kind  EventKind
	Index int // tool calls: 0, 1, ... in the order they opened
	ID    string
	Name  string
	Text  string
	// Backend is the backend the event came from.
	Backend string
}

// toolCalls reassembles streamed tool calls from their fragments: a
// fragment names its call by index (OpenAI, vLLM, SGLang) or, from servers
// that send none, by a new id; the name may arrive after the id, and
// argument fragments before the name are held until it comes, so that the
// events are always start, then its arguments.
type toolCalls struct {
	calls   []*partialCall
	byIndex map[int]int // the wire's index → position in calls
}

type partialCall struct {
	id, name string
	args     string
	started  bool
	held     string // arguments that came before the name
}

// add applies one fragment and returns the events it makes.
func (t *toolCalls) add(f wireToolCall, emit func(Event)) {
	pos := -1
	switch {
	case f.Index != nil:
		if t.byIndex == nil {
			t.byIndex = map[int]int{}
		}
		p, ok := t.byIndex[*f.Index]
		if !ok {
			p = len(t.calls)
			t.byIndex[*f.Index] = p
			t.calls = append(t.calls, &partialCall{})
		}
		pos = p
	case len(t.calls) == 0 || (f.ID != "" && f.ID != t.calls[len(t.calls)-1].id && t.calls[len(t.calls)-1].id != ""):
		t.calls = append(t.calls, &partialCall{})
		pos = len(t.calls) - 1
	default:
		pos = len(t.calls) - 1
	}
	c := t.calls[pos]
	if f.ID != "" && c.id == "" {
		c.id = f.ID
	}
	if f.Function.Name != "" && !c.started {
		c.name += f.Function.Name
	}
	if !c.started && c.name != "" {
		c.started = true
		emit(Event{Kind: EventToolCallStart, Index: pos, ID: c.id, Name: c.name})
		if c.held != "" {
			c.args += c.held
			emit(Event{Kind: EventToolCallArgs, Index: pos, Text: c.held})
			c.held = ""
		}
	}
	if a := f.Function.Arguments; a != "" {
		if !c.started {
			c.held += a
			return
		}
		c.args += a
		emit(Event{Kind: EventToolCallArgs, Index: pos, Text: a})
	}
}

// done returns the complete calls; a call that never got a name is
// malformed (ok false).
func (t *toolCalls) done() ([]chat.ToolCall, bool) {
	out := make([]chat.ToolCall, len(t.calls))
	for i, c := range t.calls {
		if !c.started {
			return nil, false
		}
		args := c.args
		if args == "" {
			args = "{}"
		}
		out[i] = chat.ToolCall{ID: c.id, Name: c.name, Arguments: args}
	}
	return out, true
}
