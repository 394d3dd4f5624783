package remote

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// eventDecoder must decode and fail as json.Unmarshal does, event after
// event on one decoder.
var eventCases = []string{
	`{"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":"ok "}}]}`,
	`{"choices":[{"index":0,"delta":{"content":"done"},"finish_reason":"stop"}]}`,
	`{"choices":[],"usage":{"prompt_tokens":8,"completion_tokens":2,"prompt_tokens_details":{"cached_tokens":3}}}`,
	`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c1","function":{"name":"f","arguments":"{\"a\""}}]}}]}`,
	`{"error":{"message":"boom","type":"server_error"}}`,
	`{}`,
}

func TestEventDecoderMatchesUnmarshal(t *testing.T) {
	ed := newEventDecoder()
	for _, c := range eventCases {
		var got, want wireChunk
		if err := ed.decode([]byte(c), &got); err != nil {
			t.Fatalf("%s: %v", c, err)
		}
		if err := json.Unmarshal([]byte(c), &want); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: decoded %+v, json.Unmarshal %+v", c, got, want)
		}
	}
}

func TestEventDecoderRefusesWhatUnmarshalRefuses(t *testing.T) {
	deep := `{"x":` + strings.Repeat("[", 10000) + strings.Repeat("]", 10000) + `}` // deeper than json.Unmarshal takes
	for _, bad := range []string{``, `{`, `{"choices":[}`, `{} {}`, `{}x`, `{"usage":{"prompt_tokens":"eight"}}`, `[1]`, `nul`, deep} {
		ed := newEventDecoder()
		if err := ed.decode([]byte(eventCases[0]), &wireChunk{}); err != nil {
			t.Fatal(err)
		}
		var ch wireChunk
		if err := ed.decode([]byte(bad), &ch); err == nil {
			t.Errorf("%q: no error", bad)
		}
		if json.Unmarshal([]byte(bad), &wireChunk{}) == nil {
			t.Errorf("%q: json.Unmarshal takes it: the case is wrong", bad)
		}
	}
}

// FuzzEventDecoder: any event, after a valid one on the same decoder, is
// taken or refused as json.Unmarshal takes or refuses it, with the same
// result.
func FuzzEventDecoder(f *testing.F) {
	for _, c := range eventCases {
		f.Add([]byte(c))
	}
	f.Add([]byte(`{} {}`))
	f.Add([]byte(`{"choices":[{"index":1e400}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		data = bytes.TrimSpace(data)
		ed := newEventDecoder()
		if err := ed.decode([]byte(eventCases[1]), &wireChunk{}); err != nil {
			t.Fatal(err)
		}
		var got, want wireChunk
		gerr := ed.decode(data, &got)
		werr := json.Unmarshal(data, &want)
		if (gerr == nil) != (werr == nil) {
			t.Fatalf("%q: decode error %v, json.Unmarshal error %v", data, gerr, werr)
		}
		if gerr == nil && !reflect.DeepEqual(got, want) {
			t.Fatalf("%q: decoded %+v, json.Unmarshal %+v", data, got, want)
		}
	})
}

// BenchmarkEventDecode: a short reply's events (eventCases' first three,
// as routerload's fake backend sends them) decoded one after the other by
// the router's eventDecoder, and by encoding/json's Decoder reused from
// event to event (the router's decoder before session 10), for the ratio.
func BenchmarkEventDecode(b *testing.B) {
	events := [][]byte{[]byte(eventCases[0]), []byte(eventCases[1]), []byte(eventCases[2])}
	b.Run("decoder=router", func(b *testing.B) {
		ed := newEventDecoder()
		b.ReportAllocs()
		for b.Loop() {
			for _, e := range events {
				var ch wireChunk
				if err := ed.decode(e, &ch); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
	b.Run("decoder=encoding-json", func(b *testing.B) {
		var src bytes.Reader
		dec := json.NewDecoder(&src)
		b.ReportAllocs()
		for b.Loop() {
			for _, e := range events {
				src.Reset(e)
				var ch wireChunk
				if err := dec.Decode(&ch); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
}

// A backend's model name is kept from reply to reply on its pooled
// decoder, but a reply says only the model its own events name.
func TestReadStreamModelPerReply(t *testing.T) {
	be := &Backend{}
	read := func(stream string) string {
		t.Helper()
		rep, err := be.readStream(strings.NewReader(stream), func(Event) {})
		if err != nil {
			t.Fatal(err)
		}
		return rep.Model
	}
	const done = `data: {"choices":[{"index":0,"delta":{"content":"x"},"finish_reason":"stop"}]}` + "\n\ndata: [DONE]\n\n"
	for i, c := range []struct{ stream, want string }{
		{`data: {"model":"m-1","choices":[]}` + "\n\n" + done, "m-1"},
		{`data: {"model":"m-1","choices":[]}` + "\n\n" + `data: {"model":"m-1","choices":[]}` + "\n\n" + done, "m-1"},
		{done, ""},
		{`data: {"model":"m\u002d2","choices":[]}` + "\n\n" + `data: {"model":null,"choices":[]}` + "\n\n" + done, "m-2"},
		{`data: {"model":"m-1","choices":[]}` + "\n\n" + `data: {"model":"","choices":[]}` + "\n\n" + done, "m-1"},
	} {
		if got := read(c.stream); got != c.want {
			t.Errorf("reply %d: model %q, want %q", i, got, c.want)
		}
	}
}
