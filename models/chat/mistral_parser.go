package chat

import (
	"encoding/json"
	"strings"
)

const (
	mistralCalls = "[TOOL_CALLS]"
	mistralArgs  = "[ARGS]"
)

// MistralParser parses Mistral tool calls, as vLLM's "mistral" parser does:
// after the [TOOL_CALLS] marker, a JSON array of {"name", "arguments"}
// objects (Mistral 7B v0.3 and others of the v3 tokenizer),
//
//	[TOOL_CALLS][{"name": "get_weather", "arguments": {"city": "Paris"}}]
//
// or, from the v11 tokenizer on (Ministral 3, Mistral Small 3.2), the
// name, the [ARGS] marker and the arguments object, a marker before each
// call:
//
//	[TOOL_CALLS]get_weather[ARGS]{"city": "Paris"}
//
// Text before the first marker is content; [TOOL_CALLS] counts as a marker
// token, and as spelled text only where the Provenance allows it. Blank
// text between calls in an array is dropped; text after the calls is
// content. A malformed call is an error event up to the byte at fault, and
// the rest of the output content.
type MistralParser struct {
	em   emitter
	prov Provenance
	mode mistralMode
	buf  string // text outside calls not yet emitted: it may become a spelled marker
	name strings.Builder
	call callState
	raw  strings.Builder
	// inArray: the calls are a JSON array (v3), not [ARGS] calls (v11).
	inArray bool
}

type mistralMode int

const (
	msText   mistralMode = iota // content
	msStart                     // after [TOOL_CALLS]: an array, an object or a name follows
	msArray                     // inside the array, between calls
	msObject                    // inside a call's JSON object
	msName                      // reading a name up to [ARGS]
	msArgs                      // inside the arguments object after [ARGS]
	msAfter                     // after the calls: text is content
)

// NewMistralParser returns a parser for one assistant turn.
func NewMistralParser(opts ...ParserOption) *MistralParser {
	cfg := newConfig(opts)
	return &MistralParser{em: emitter{cfg: cfg}, prov: cfg.prov}
}

// Feed implements ToolCallParser.
func (p *MistralParser) Feed(text string, special bool) []Event {
	if special {
		p.flush(true)
		switch {
		case text == mistralCalls && (p.mode == msText || p.mode == msStart || p.mode == msAfter):
			p.mode = msStart
		case text == mistralArgs && p.mode == msName:
			p.startArgs()
		default:
			p.run(text)
		}
		return p.em.take()
	}
	p.run(text)
	return p.em.take()
}

// Close implements ToolCallParser.
func (p *MistralParser) Close() []Event {
	p.flush(true)
	switch p.mode {
	case msObject, msArgs:
		p.em.finish(&p.call, p.raw.String(), "")
	case msName:
		if n := strings.TrimSpace(p.name.String()); n != "" {
			p.em.events = append(p.em.events, Event{Kind: EventError, Index: -1, Err: "malformed tool call: no [ARGS] after the name", Raw: mistralCalls + p.name.String()})
		}
	}
	p.mode = msAfter
	return p.em.take()
}

// run reads text in the current mode.
func (p *MistralParser) run(s string) {
	for len(s) > 0 {
		switch p.mode {
		case msText, msAfter:
			p.buf += s
			p.flush(false)
			return
		case msStart, msArray:
			c := s[0]
			switch {
			case isWS(c) || (c == ',' && p.mode == msArray):
				s = s[1:]
			case c == '[' && p.mode == msStart:
				p.mode, p.inArray, s = msArray, true, s[1:]
			case c == ']' && p.mode == msArray:
				p.mode, s = msAfter, s[1:]
			case c == '{':
				p.startObject()
			case p.mode == msStart:
				p.mode = msName
			default:
				p.fail()
			}
		case msName:
			// Spelled or a token, [ARGS] ends the name: inside a call it
			// has no other use.
			p.name.WriteString(s)
			n := p.name.String()
			i := strings.Index(n, mistralArgs)
			if i < 0 {
				return
			}
			p.name.Reset()
			p.name.WriteString(n[:i])
			s = n[i+len(mistralArgs):]
			p.startArgs()
		case msObject, msArgs:
			s = p.feedCall(s)
		}
	}
}

// flush emits the held content, keeping what may still become a spelled
// marker (all of it when final).
func (p *MistralParser) flush(final bool) {
	for p.buf != "" {
		if p.prov.SpelledOpen {
			if i := strings.Index(p.buf, mistralCalls); i >= 0 {
				p.em.text(p.buf[:i])
				rest := p.buf[i+len(mistralCalls):]
				p.buf, p.mode = "", msStart
				p.run(rest)
				return
			}
		}
		k := 0
		if p.prov.SpelledOpen && !final {
			k = heldPrefix(p.buf, mistralCalls)
		}
		p.em.text(p.buf[:len(p.buf)-k])
		p.buf = p.buf[len(p.buf)-k:]
		return
	}
}

func (p *MistralParser) startObject() {
	p.mode = msObject
	p.call = callState{index: -1, sc: newObjScanner("arguments", "parameters")}
	p.raw.Reset()
}

// startArgs begins a v11 call: the scanner reads the call as the object
// {"name": NAME, "arguments": ARGS}.
func (p *MistralParser) startArgs() {
	name := strings.TrimSpace(p.name.String())
	p.name.Reset()
	q, _ := json.Marshal(name)
	p.mode = msArgs
	p.call = callState{index: -1, sc: newObjScanner("arguments")}
	p.raw.Reset()
	p.raw.WriteString(mistralCalls + name + mistralArgs)
	for _, c := range []byte(`{"name": ` + string(q) + `, "arguments": `) {
		p.call.sc.feed(c)
	}
	p.em.progress(&p.call)
}

// feedCall scans s into the call and returns what follows the call's end.
func (p *MistralParser) feedCall(s string) string {
	sc := p.call.sc
	for i := 0; i < len(s); i++ {
		sc.feed(s[i])
		p.raw.WriteByte(s[i])
		if p.mode == msArgs && sc.st == sAfterValue {
			sc.feed('}')
		}
		switch {
		case sc.failed():
			// The malformed call up to the byte at fault; the rest is content.
			p.em.progress(&p.call)
			p.em.finish(&p.call, p.raw.String(), "")
			p.mode = msAfter
			return s[i+1:]
		case sc.done():
			p.em.progress(&p.call)
			p.em.finish(&p.call, p.raw.String(), "")
			// Another v11 call starts with its own marker: until then,
			// text is content.
			p.mode = msAfter
			if p.inArray {
				p.mode = msArray
			}
			return s[i+1:]
		}
	}
	p.em.progress(&p.call)
	return ""
}

// fail reports text that cannot start a call where one must; that text
// and the rest are content.
func (p *MistralParser) fail() {
	p.em.events = append(p.em.events, Event{Kind: EventError, Index: -1, Err: "malformed tool calls: expected a JSON object after " + mistralCalls, Raw: mistralCalls})
	p.mode = msAfter
}
