package remote

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
)

// eventDecoder decodes the JSON of a stream's events, one after the
// other, with one json.Decoder: json.Unmarshal scans each event twice
// (once to check it, once to decode it) and grows a new scanner's state
// for each, where the decoder scans once and keeps its state from event
// to event (a reply is a few small events, the router's most frequent
// decode). A decoder that met a malformed event is not used again: its
// error sticks.
type eventDecoder struct {
	line []byte // the stream's line buffer (4 KiB; a longer line grows the scanner's own, not kept)
	src  bytes.Reader
	dec  *json.Decoder
	fed  int64 // the bytes given to dec so far
}

func newEventDecoder() *eventDecoder {
	ed := &eventDecoder{line: make([]byte, 4<<10)}
	ed.dec = json.NewDecoder(&ed.src)
	return ed
}

// decode decodes data, one event's JSON value (space-trimmed), into v as
// json.Unmarshal would, and fails as it would on an empty event or on
// anything after the value (data has no trailing space: every byte the
// decoder has not consumed after the value is something else).
func (ed *eventDecoder) decode(data []byte, v any) error {
	ed.src.Reset(data)
	ed.fed += int64(len(data))
	if err := ed.dec.Decode(v); err != nil {
		if errors.Is(err, io.EOF) {
			return errors.New("unexpected end of JSON input")
		}
		return err
	}
	if ed.dec.InputOffset() != ed.fed {
		return errors.New("invalid character after top-level value")
	}
	return nil
}
