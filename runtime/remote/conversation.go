package remote

import (
	"encoding/json"
	"slices"

	"github.com/pitstop-llm/pitstop/models/chat"
)

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
// are encoded. A Request is used by one generation at a time.
func (req *Request) encodeBody(w *wireRequest) ([]byte, error) {
	const head = `{"messages":`
	s := &req.sent
	k := len(s.msgs)
	if k == 0 || k > len(req.Messages) || !sameMessages(s.msgs, req.Messages[:k]) {
		// All at once, as one value; the messages' array is what lies
		// between the head and w's own fields.
		data, err := json.Marshal(struct {
			Messages []wireMessage `json:"messages"`
			*wireRequest
		}{toWireMessages(req.Messages), w})
		if err != nil {
			return nil, err
		}
		s.msgs, s.json = nil, nil
		if len(req.Tools) == 0 {
			return data, nil
		}
		rest, err := json.Marshal(w)
		if err != nil {
			return nil, err
		}
		if end := len(data) - len(rest); end > len(head) && data[end] == ',' && data[len(head)] == '[' && data[end-1] == ']' {
			// The body's bytes never change once made: the next
			// generation reads the messages' encoding there.
			s.msgs, s.json = slices.Clone(req.Messages), data[len(head):end:end]
		}
		return data, nil
	}
	rest, err := json.Marshal(w)
	if err != nil {
		return nil, err
	}
	kept, added := s.json[:len(s.json)-1], []byte("]")
	if k < len(req.Messages) {
		tail, err := json.Marshal(toWireMessages(req.Messages[k:]))
		if err != nil {
			return nil, err
		}
		// [a,b] and [c,d] make [a,b,c,d].
		added = tail
		added[0] = ','
	}
	data := make([]byte, 0, len(head)+len(kept)+len(added)+len(rest))
	data = append(data, head...)
	data = append(data, kept...)
	data = append(data, added...)
	s.msgs, s.json = slices.Clone(req.Messages), data[len(head):len(data):len(data)]
	data = append(data, ',')
	return append(data, rest[1:]...), nil
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
