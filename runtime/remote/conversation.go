package remote

import (
	"slices"

	segjson "github.com/segmentio/encoding/json"

	"github.com/pitstop-llm/pitstop/models/chat"
)

// appendJSON appends v's JSON to b with segmentio/encoding's json, which
// writes what encoding/json.Marshal writes for the wire types (HTML
// escaped, raw messages compacted; FuzzEncodeBody holds it to
// encoding/json's bytes) without reflection's per-value work, and into
// the body's own buffer, not a copy of a pooled one. The wire types hold
// no time.Duration, which the two encode differently.
func appendJSON(b []byte, v any) ([]byte, error) {
	return segjson.Append(b, v, segjson.EscapeHTML|segjson.SortMapKeys)
}

// sentConversation is the JSON of the messages a Request's last
// generation sent. A tool round's continuation re-sends the whole
// conversation, longer by the round's messages: its encoding reuses this
// one's and encodes only what was appended.
type sentConversation struct {
	msgs []chat.Message // the messages as sent (a copy: the caller may reuse its slice's array)
	json []byte         // their JSON array, in the body sent: never changed
}

// encodeBody is the request body: {"messages":[...]} and w's fields.
// For a request that offers tools (only a tool round's continuation sends
// a conversation again) the messages' encoding is kept for the next
// generation of the request: when the messages of the last one are
// still its first ones (compared field by field: a string compares at
// once with itself), that encoding is copied and only the new messages
// are encoded. A Request is used by one generation at a time. room is
// the room for the new messages' wire form, reused (wireScratch).
func (req *Request) encodeBody(w *wireRequest, room *[]wireMessage) ([]byte, error) {
	const head = `{"messages":`
	s := &req.sent
	k := len(s.msgs)
	if k == 0 || k > len(req.Messages) || !sameMessages(s.msgs, req.Messages[:k]) {
		k, s.msgs, s.json = 0, nil, nil
	}
	// The messages' array, then w's object, encoded into one buffer and
	// joined: [a,b] and {"model":...} make {"messages":[a,b],"model":...};
	// a continuation's [a,b] (kept) and [c] make [a,b,c]. (One struct
	// embedding *wireRequest is what encoding/json would take; segmentio's
	// encoder misplaces an embedded pointer's fields.)
	data := make([]byte, 0, len(head)+len(s.json)+bodySize(req.Messages[k:], req.Tools))
	data = append(data, head...)
	var err error
	if k > 0 {
		data = append(data, s.json[:len(s.json)-1]...)
		if k == len(req.Messages) {
			data = append(data, ']')
		}
	}
	if k < len(req.Messages) || k == 0 {
		at := len(data)
		*room = appendWireMessages((*room)[:0], req.Messages[k:])
		if data, err = appendJSON(data, room); err != nil {
			return nil, err
		}
		if k > 0 {
			data[at] = ','
		}
	}
	if len(req.Tools) > 0 {
		// The body's bytes never change once made: the next generation
		// reads the messages' encoding there.
		s.msgs, s.json = slices.Clone(req.Messages), data[len(head):len(data):len(data)]
	}
	at := len(data)
	if data, err = appendJSON(data, w); err != nil {
		return nil, err
	}
	data[at] = ',' // w's '{' (w has a field always: stream)
	return data, nil
}

// bodySize is about the JSON size of msgs and tools, to size a body's
// buffer once.
func bodySize(msgs []chat.Message, tools []chat.Tool) int {
	n := 256
	for i := range msgs {
		m := &msgs[i]
		n += 48 + len(m.Content) + len(m.ToolCallID) + len(m.Name)
		for _, tc := range m.ToolCalls {
			n += 64 + len(tc.ID) + len(tc.Name) + len(tc.Arguments)
		}
	}
	for _, t := range tools {
		n += 64 + len(t.Name) + len(t.Description) + len(t.Parameters)
	}
	return n + n/8 // escapes
}

func sameMessages(a, b []chat.Message) bool {
	for i := range a {
		x, y := &a[i], &b[i]
		if x.Role != y.Role || x.Content != y.Content || x.ToolCallID != y.ToolCallID || x.Name != y.Name || !slices.Equal(x.ToolCalls, y.ToolCalls) {
			return false
		}
	}
	return true
}
