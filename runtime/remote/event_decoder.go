package remote

import (
	"bytes"
	"encoding/json"

	segjson "github.com/segmentio/encoding/json"

	"github.com/pitstop-llm/pitstop/internal/jsondepth"
)

// eventDecoder decodes the JSON of a stream's events, one after the
// other: a reply is a few small events, the router's most frequent
// decode. It decodes with segmentio/encoding's json, which takes and
// refuses what encoding/json does (FuzzEventDecoder holds it to
// json.Unmarshal's results) in one pass without reflection's per-value
// work: a short reply's three events in about a fifth of encoding/json's
// time (docs/results-router.md §4, session 10). It also holds the stream's
// line buffer, reused from reply to reply.
type eventDecoder struct {
	line []byte // the stream's line buffer (4 KiB; a longer line grows the scanner's own, not kept)
	// chunk is the event decoded last. Its choices' room is kept from
	// reply to reply: the library makes room for ten choices at a slice's
	// first element (640 B per reply otherwise).
	chunk wireChunk
	// content is readStream's room for a reply's text, kept up to
	// maxKeptContent.
	content []byte
}

// maxKeptContent bounds the text room a pooled eventDecoder keeps.
const maxKeptContent = 64 << 10

// resetChunk empties chunk for the next event, keeping its choices' room
// and its model's name (modelName).
func (ed *eventDecoder) resetChunk() {
	choices := ed.chunk.Choices[:cap(ed.chunk.Choices)]
	clear(choices)
	model := ed.chunk.Model
	ed.chunk = wireChunk{Choices: choices[:0], Model: modelName{name: model.name, raw: model.raw}}
}

// modelName is an event's "model": the same in every event of most
// streams (vLLM and OpenAI send it in each), and in every reply of a
// backend. Kept from event to event and reply to reply (resetChunk), it
// is decoded when its JSON differs from the last one's, not once per
// event (a string allocation each). seen says the event had one.
type modelName struct {
	name string
	raw  []byte // the JSON name was decoded from
	seen bool
}

// UnmarshalJSON takes a JSON string as a string field does (null: no
// change).
func (m *modelName) UnmarshalJSON(data []byte) error {
	if string(data) == "null" {
		return nil
	}
	if m.raw == nil || !bytes.Equal(data, m.raw) {
		var s string
		if err := segjson.Unmarshal(data, &s); err != nil {
			return err
		}
		m.name, m.raw = s, append(m.raw[:0], data...)
	}
	m.seen = true
	return nil
}

func newEventDecoder() *eventDecoder {
	return &eventDecoder{line: make([]byte, 4<<10)}
}

// decode decodes data, one event's JSON value (space-trimmed), into v as
// json.Unmarshal would, and fails as it would (on an empty event, on
// anything after the value, on nesting deeper than it takes: the library
// has no depth limit, so such an event goes to json.Unmarshal).
func (ed *eventDecoder) decode(data []byte, v any) error {
	if jsondepth.Exceeds(data) {
		return json.Unmarshal(data, v)
	}
	return segjson.Unmarshal(data, v)
}
