package chat

import "strings"

const (
	openTag  = "<tool_call>"
	closeTag = "</tool_call>"
)

// HermesParser parses Hermes-style tool calls, as Qwen2.5 and other ChatML
// models write them:
//
//	<tool_call>
//	{"name": "get_weather", "arguments": {"city": "Paris"}}
//	</tool_call>
//
// The tags count as marker tokens, and as spelled text only where the
// parser's Provenance allows it; a tag that does not count is content.
// Text outside calls is content, emitted as soon as it cannot be the start
// of a tag that counts. A call's name is emitted once its string closes and
// its arguments stream as they arrive. The first closing tag that counts
// ends a call, as in vLLM's hermes parser; a call left open when the output
// ends is accepted if its JSON is complete. "parameters" is read like
// "arguments"; arguments given as a JSON string holding an object are
// unwrapped.
type HermesParser struct {
	em     emitter
	prov   Provenance
	buf    string // text not yet emitted: it may still become a spelled tag
	inCall bool
	call   callState
	body   strings.Builder
}

// NewHermesParser returns a parser for one assistant turn.
func NewHermesParser(opts ...ParserOption) *HermesParser {
	cfg := newConfig(opts)
	return &HermesParser{em: emitter{cfg: cfg}, prov: cfg.prov}
}

// Feed implements ToolCallParser.
func (p *HermesParser) Feed(text string, special bool) []Event {
	if !special {
		p.buf += text
		p.process(false)
		return p.em.take()
	}
	// A token is whole: held text cannot become a tag with it.
	p.process(true)
	switch {
	case text == openTag && !p.inCall:
		p.startCall()
	case text == closeTag && p.inCall:
		p.endCall(true)
	case p.inCall:
		p.feedCall(text)
	default:
		// A marker token where it opens nothing (a closing tag outside a
		// call) is what the model wrote.
		p.em.text(text)
	}
	return p.em.take()
}

// Close implements ToolCallParser.
func (p *HermesParser) Close() []Event {
	p.process(true)
	if p.inCall {
		p.endCall(false)
	}
	return p.em.take()
}

// heldPrefix is the length of the longest suffix of s that is a proper
// prefix of tag: the bytes that might still become the tag.
func heldPrefix(s, tag string) int {
	for k := min(len(tag)-1, len(s)); k > 0; k-- {
		if strings.HasSuffix(s, tag[:k]) {
			return k
		}
	}
	return 0
}

// process consumes the text buffer up to what may still become a spelled
// tag that counts (all of it when final).
func (p *HermesParser) process(final bool) {
	for {
		tag, spelled := openTag, p.prov.SpelledOpen
		if p.inCall {
			tag, spelled = closeTag, p.prov.SpelledClose
		}
		if spelled {
			if i := strings.Index(p.buf, tag); i >= 0 {
				p.emit(p.buf[:i])
				p.buf = p.buf[i+len(tag):]
				if p.inCall {
					p.endCall(true)
				} else {
					p.startCall()
				}
				continue
			}
		}
		k := 0
		if spelled && !final {
			k = heldPrefix(p.buf, tag)
		}
		p.emit(p.buf[:len(p.buf)-k])
		p.buf = p.buf[len(p.buf)-k:]
		return
	}
}

// emit hands text on: content outside a call, the call's body inside one.
func (p *HermesParser) emit(s string) {
	if p.inCall {
		p.feedCall(s)
	} else {
		p.em.text(s)
	}
}

func (p *HermesParser) startCall() {
	p.inCall = true
	p.call = callState{index: -1, sc: newObjScanner("arguments", "parameters")}
	p.body.Reset()
}

func (p *HermesParser) feedCall(s string) {
	if s == "" {
		return
	}
	p.body.WriteString(s)
	sc := p.call.sc
	for i := 0; i < len(s); i++ {
		if sc.done() || sc.failed() {
			break
		}
		sc.feed(s[i])
	}
	p.em.progress(&p.call)
}

func (p *HermesParser) endCall(closed bool) {
	body := p.body.String()
	raw := openTag + body
	if closed {
		raw += closeTag
	}
	// The object's own bytes end where the scanner stopped; the rest of
	// the body must be blank.
	trailing := ""
	if p.call.sc.done() {
		trailing = body[len(p.call.sc.raw):]
	}
	p.em.finish(&p.call, raw, trailing)
	p.inCall = false
}
